"""smdebug's CollectionKeys: the names of the built-in collections."""


class CollectionKeys:
    """The names of smdebug's built-in collections (``CollectionKeys.LOSSES == "losses"``)."""

    DEFAULT = "default"
    ALL = "all"
    WEIGHTS = "weights"
    BIASES = "biases"
    GRADIENTS = "gradients"
    LOSSES = "losses"
    SCALARS = "scalars"
    OPTIMIZER_VARIABLES = "optimizer_variables"
    TENSORFLOW_SUMMARIES = "tensorflow_summaries"
    METRICS = "metrics"
    INPUTS = "inputs"
    OUTPUTS = "outputs"
    SM_METRICS = "sm_metrics"
    LAYERS = "layers"
    HYPERPARAMETERS = "hyperparameters"
    PREDICTIONS = "predictions"
    LABELS = "labels"
    FEATURE_IMPORTANCE = "feature_importance"
    AVERAGE_SHAP = "average_shap"
    FULL_SHAP = "full_shap"
    TREES = "trees"

__all__ = ["CollectionKeys"]
