"""smdebug's EstimatorHook: TensorFlow removed tf.estimator (deprecated in 2.13, gone from 2.16
on), so there is nothing left to hook into."""
import tensorflow as tf


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
