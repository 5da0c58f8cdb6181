"""smdebug's EstimatorHook. smdebug's is its SessionHook under another name (an Estimator runs
tf.compat.v1 sessions and takes SessionRunHooks); so is smd's, where TensorFlow still has
tf.estimator. TensorFlow removed tf.estimator (deprecated in 2.13, gone from 2.16 on): there the
hook raises, naming what to use instead."""
import tensorflow as tf


def _has_estimator():
    try:
        return hasattr(tf.estimator, "Estimator")
    except (AttributeError, ImportError):
        return False


if _has_estimator():
    from smd.tensorflow.session import SessionHook as EstimatorHook  # noqa: F401
else:
    class EstimatorHook:
        """Raises: tf.estimator no longer exists in TensorFlow 2.16 and later."""

        def __init__(self, *args, **kwargs):
            raise NotImplementedError(
                f"EstimatorHook: TensorFlow {tf.__version__} has no tf.estimator (removed in "
                "TensorFlow 2.16); train with Keras and smd.tensorflow.KerasHook, or with "
                "tf.compat.v1 sessions and smd.tensorflow.SessionHook")

        @classmethod
        def create_from_json_file(cls, json_file_path=None):
            return cls()
