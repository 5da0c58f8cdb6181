"""smdebug's SessionHook for tf.compat.v1 graph training (MonitoredTrainingSession)."""
import tensorflow as tf


class SessionHook:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("SessionHook is not available in this build")
