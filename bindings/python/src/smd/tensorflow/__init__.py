"""smd.tensorflow: smdebug's TensorFlow hooks (``smdebug.tensorflow``) on smd. Importing it
imports TensorFlow; ``tf.keras`` decides between Keras 3 and Keras 2 (TF_USE_LEGACY_KERAS=1)."""
from smd import modes  # noqa: F401
from smd.collection_keys import CollectionKeys  # noqa: F401
from smd.modes import ModeKeys  # noqa: F401
from smd.reduction_config import ReductionConfig  # noqa: F401
from smd.save_config import SaveConfig, SaveConfigMode  # noqa: F401
from smd.tensorflow.estimator import EstimatorHook  # noqa: F401
from smd.tensorflow.keras import KerasCollection, KerasHook  # noqa: F401
from smd.tensorflow.session import SessionHook  # noqa: F401
