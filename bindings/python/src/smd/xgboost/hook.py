"""smd.xgboost.Hook: smdebug's XGBoost hook as an ``xgboost.callback.TrainingCallback``.

Boosting round r is step r (in the GLOBAL mode unless the caller sets another, as in smdebug).
After each round the hook offers
what its collections ask for: the evaluation metrics of that round (``<data>-<metric>``), the
hyperparameters, the predictions and labels of ``validation_data``, the normalized feature
importances of every importance type, the SHAP values of ``train_data`` (per feature, and averaged)
and the round's trees as columns.
"""
import json
import os
import warnings

import numpy as np
import xgboost as xgb

import smd._framework as _fw
from smd import smdc as _smd
from smd.collection_keys import CollectionKeys
from smd.hook import Hook as _Hook
from smd.save_config import SaveConfig
from smd.xgboost._strings import save_strings

# The collection names, as this module has always exported them (one source: CollectionKeys).
HYPERPARAMETERS = CollectionKeys.HYPERPARAMETERS
PREDICTIONS = CollectionKeys.PREDICTIONS
LABELS = CollectionKeys.LABELS
FEATURE_IMPORTANCE = CollectionKeys.FEATURE_IMPORTANCE
AVERAGE_SHAP = CollectionKeys.AVERAGE_SHAP
FULL_SHAP = CollectionKeys.FULL_SHAP
TREES = CollectionKeys.TREES

DEFAULT_INCLUDE_COLLECTIONS = [CollectionKeys.METRICS]
DEFAULT_SAVE_INTERVAL = 10
IMPORTANCE_TYPES = ("weight", "gain", "cover", "total_gain", "total_cover")

# smdebug's regexes for the XGBoost collections (a tensor belongs to a collection when its name
# matches; the hook itself never names a collection when it saves, so that only the included
# collections are written).
_COLLECTION_REGEXES = {
    HYPERPARAMETERS: "^hyperparameters/.*$",
    CollectionKeys.METRICS: "^[A-Za-z0-9_]+-[^/]+$",
    # metrics that decrease as the model improves (not auc, aucpr, map, ndcg, pre)
    CollectionKeys.LOSSES: "^[A-Za-z0-9_]+-(?!(auc|aucpr|map|ndcg|pre)(@|$))[^/]+$",
    PREDICTIONS: "^predictions$",
    LABELS: "^labels$",
    FEATURE_IMPORTANCE: "^feature_importance/.*",
    # every feature, not the bias column's own name (saved only by a collection that asks for it:
    # save_all's "all", a regex of the script's)
    AVERAGE_SHAP: "^average_shap/(?!bias$).*",
    FULL_SHAP: "^full_shap/(?!bias$).*",
    TREES: "^trees/.*",
}


def _load_data(data, argument):
    """A DMatrix from `data`: None, an xgboost.DMatrix, or (local file path, content type) with
    content type 'csv' / 'text/csv' (label in the first column, no header) or 'libsvm' /
    'text/libsvm' / 'text/x-libsvm'."""
    if data is None or isinstance(data, xgb.DMatrix):
        return data
    if not (isinstance(data, tuple) and len(data) == 2 and all(isinstance(d, str) for d in data)):
        raise TypeError(f"{argument} must be an xgboost.DMatrix or a (file path, content type) tuple "
                        f"of two str, not {type(data).__name__}")
    path, content_type = os.path.expanduser(data[0]), data[1].strip().lower()
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{argument}: no such local file: {data[0]!r} (only local files "
                                "are read for SHAP values)")
    if content_type in ("csv", "text/csv"):
        try:
            arr = np.loadtxt(path, delimiter=",", ndmin=2, dtype=np.float64)
        except ValueError as e:
            raise ValueError(f"{argument}: {path} is not a numeric CSV file: {e}") from None
        if arr.shape[1] < 2:
            raise ValueError(f"{argument}: {path} needs a label column and at least one feature")
        return xgb.DMatrix(arr[:, 1:], label=arr[:, 0])
    if content_type in ("libsvm", "text/libsvm", "text/x-libsvm"):
        return _read_libsvm(path, argument)
    raise ValueError(f"{argument}: content type {data[1]!r} is not one of csv, text/csv, libsvm, "
                     "text/libsvm, text/x-libsvm")


def _read_libsvm(path, argument):
    """A DMatrix of a LIBSVM text file ("label index:value ...", 0- or 1-based indices kept as
    written, "qid:" fields and "#" comments ignored)."""
    import scipy.sparse

    labels, rows, cols, vals = [], [], [], []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            fields = line.split("#", 1)[0].split()
            if not fields:
                continue
            try:
                labels.append(float(fields[0]))
                for field in fields[1:]:
                    key, _, value = field.partition(":")
                    if key == "qid":
                        continue
                    cols.append(int(key))
                    vals.append(float(value))
                    rows.append(len(labels) - 1)
            except ValueError:
                raise ValueError(f"{argument}: {path} line {lineno} is not LIBSVM "
                                 f"(label index:value ...): {line.strip()[:80]!r}") from None
    width = max(cols) + 1 if cols else 0
    matrix = scipy.sparse.csr_matrix((vals, (rows, cols)), shape=(len(labels), width))
    return xgb.DMatrix(matrix, label=np.array(labels))


def get_hook(json_config_path=None, create_if_not_exists=True):
    """The hook created last in this process (or given to ``set_hook``); else, as smdebug's
    XGBoost get_hook, one from the JSON configuration (``json_config_path`` or
    $SMDEBUG_CONFIG_FILE_PATH), or None without such a file."""
    return _fw.get_hook(Hook, json_config_path, create_if_not_exists)


set_hook = _fw.set_hook
del_hook = _fw.del_hook


class Hook(xgb.callback.TrainingCallback, _Hook):
    """smdebug's XGBoost hook: pass it in ``xgboost.train(..., callbacks=[hook])``.

    Arguments as smdebug's (seed 002): the common hook arguments (save_config defaults to every
    10 rounds; reduction_config is not supported and ignored, as in smdebug), plus
    ``hyperparameters`` (a dict saved in the "hyperparameters" collection), ``train_data`` (an
    xgboost.DMatrix or a (file, content type) tuple: the data the SHAP values are computed on)
    and ``validation_data`` (the same: its predictions and labels are saved).
    """

    def __init__(self, out_dir=None, export_tensorboard=False, tensorboard_dir=None, dry_run=False,
                 reduction_config=None, save_config=None, include_regex=None,
                 include_collections=None, save_all=False, include_workers="one",
                 hyperparameters=None, train_data=None, validation_data=None, *, _handle=None,
                 **smd_options):
        xgb.callback.TrainingCallback.__init__(self)
        if hyperparameters is not None and not isinstance(hyperparameters, dict):
            raise TypeError(f"hyperparameters must be a dict, not {type(hyperparameters).__name__}")
        for key, value in (hyperparameters or {}).items():  # refused now, not after a round
            _hyperparameter(key, value)
        self.hyperparameters = hyperparameters
        self.train_data = _load_data(train_data, "train_data")
        self.validation_data = _load_data(validation_data, "validation_data")
        if reduction_config is not None:
            warnings.warn("smd.xgboost.Hook: reduction_config is not supported and is ignored "
                          "(as in smdebug)", UserWarning, stacklevel=2)
        if _handle is None:
            if save_config is None:
                save_config = SaveConfig(save_interval=DEFAULT_SAVE_INTERVAL)
            _Hook.__init__(self, out_dir, export_tensorboard, tensorboard_dir, dry_run, None,
                           save_config, include_regex, include_collections, save_all,
                           include_workers, **smd_options)
        else:
            _Hook.__init__(self, None, _handle=_handle)
        for name, regex in _COLLECTION_REGEXES.items():
            coll = self.get_collection(name)
            if name == CollectionKeys.LOSSES and _handle is None:
                # smd's built-in losses pattern ([Ll]oss anywhere) would take in a feature's SHAP
                # values ("full_shap/prior_loss") and hyperparameters ("loss_scale"): smdebug's
                # XGBoost losses are its metrics that decrease, alone. (A hook made from a JSON
                # configuration keeps it: clearing would also drop the regexes the JSON gave.)
                coll.clear_include_regex()
            coll.include(regex)
        for name in DEFAULT_INCLUDE_COLLECTIONS:
            _smd.smd_hook_include_collection(self._hook, name)
        self._last_epoch = None
        _fw.hook_created(self)

    @classmethod
    def create_from_json_file(cls, json_file_path=None, hyperparameters=None, train_data=None,
                              validation_data=None):
        """The hook of smdebug's JSON hook configuration (None: $SMDEBUG_CONFIG_FILE_PATH, else
        /opt/ml/input/config/debughookconfig.json); rounds are saved every 10 unless it says
        otherwise."""
        opts = _smd.smd_hook_options_create()
        _smd.smd_hook_options_set_save_config(
            opts, SaveConfig(save_interval=DEFAULT_SAVE_INTERVAL)._to_c())
        handle = _smd.smd_hook_create_from_json_file(json_file_path, opts)
        return cls(hyperparameters=hyperparameters, train_data=train_data,
                   validation_data=validation_data, _handle=handle)

    def __reduce_ex__(self, protocol):
        # A fitted sklearn estimator keeps its callbacks: pickled (joblib.dump) or cloned
        # (sklearn's clone, GridSearchCV, cross_val_score) the hook travels as a callback that
        # saves nothing, as smdebug's does; this hook is unchanged.
        return (_Detached, ())

    # -- the callback --------------------------------------------------------------------------
    def after_iteration(self, model, epoch, evals_log):
        if self._last_epoch is not None and epoch <= self._last_epoch:
            raise RuntimeError(
                f"smd.xgboost.Hook: round {epoch} was already seen (after round {self._last_epoch}):"
                " the same hook is registered twice in callbacks, or reused for a second training;"
                " use one hook per xgboost.train call")
        while self.step < epoch:  # one step per round; rounds resumed from an xgb_model start later
            self.begin_step()
        self._last_epoch = epoch
        if not _smd.smd_hook_any_due(self._hook):
            return False
        self._save_metrics(evals_log)
        self._save_hyperparameters()
        if isinstance(model, xgb.Booster):
            # (xgboost.cv hands the callbacks its folds' boosters packed together, which cannot
            # predict or dump trees: its metrics alone are saved)
            self._save_validation(model)
            self._save_feature_importance(model)
            self._save_shap(model)
            self._save_trees(model, epoch)
        return False

    def after_training(self, model):
        """Ends the last round's step and waits until its files are written: a trial opened when
        xgboost.train returns sees every round. The hook stays open, as smdebug's does: scalars
        and tensors saved afterwards go to one more step, written at ``close()`` (or at
        interpreter exit, which also writes training_job_end.ts)."""
        self.end_step()
        self.flush()
        return model

    # -- what is saved -------------------------------------------------------------------------
    def _due(self, name):
        return _smd.smd_hook_is_due(self._hook, name)

    def _save(self, name, value):
        self.save_tensor(name, np.asarray(value), [])

    def _save_metrics(self, evals_log):
        for data_name, metrics in (evals_log or {}).items():
            for metric, values in metrics.items():
                name = f"{data_name}-{metric}"
                if not values or not self._due(name):
                    continue
                last = values[-1]
                # xgboost.cv logs (mean, std) pairs, saved as both (as smdebug saves them);
                # train logs floats
                value = list(last) if isinstance(last, tuple) else [last]
                self._save(name, np.array(value, dtype=np.float64))

    def _save_hyperparameters(self):
        for key, value in (self.hyperparameters or {}).items():
            name = f"hyperparameters/{key}"
            if not self._due(name):
                continue
            kind, values = _hyperparameter(key, value)
            if kind == "text":
                save_strings(self, name, values, [])
            else:
                self._save(name, np.array(values))

    def _save_validation(self, model):
        if self.validation_data is None:
            return
        if self._due("predictions"):
            self._save("predictions", model.predict(self.validation_data))
        if self._due("labels"):
            self._save("labels", self.validation_data.get_label())

    def _save_feature_importance(self, model):
        if _booster_kind(model) not in ("gbtree", "dart"):
            return
        weights = model.get_score(importance_type="weight")
        if not weights or not self._due(f"feature_importance/weight/{next(iter(weights))}"):
            return
        for kind in IMPORTANCE_TYPES:
            scores = weights if kind == "weight" else model.get_score(importance_type=kind)
            total = sum(scores.values())
            for feature, score in scores.items():
                name = f"feature_importance/{kind}/{feature}"
                if total > 0 and self._due(name):
                    self._save(name, np.array([score / total], dtype=np.float64))

    def _save_shap(self, model):
        # As smdebug: full_shap/<feature> holds the whole contribution matrix (rows x (features +
        # 1), the last column the bias), average_shap/<feature> that feature's column's mean
        # (numpy's, in the matrix's float32); the bias column is "bias", which the SHAP
        # collections leave out (save_all saves it).
        if self.train_data is None:
            return
        names = _feature_names(model) + ["bias"]
        full = [f"full_shap/{n}" for n in names]
        avg = [f"average_shap/{n}" for n in names]
        if not any(self._due(n) for n in full + avg):
            return
        contribs = np.ascontiguousarray(model.predict(self.train_data, pred_contribs=True))
        mean = np.mean(contribs, axis=tuple(range(contribs.ndim - 1)))
        for i in range(len(names)):
            if self._due(full[i]):
                self._save(full[i], contribs)
            if self._due(avg[i]):
                self._save(avg[i], mean[i:i + 1])

    def _save_trees(self, model, epoch):
        if not self._due("trees/Tree") or _booster_kind(model) not in ("gbtree", "dart"):
            return
        columns = tree_columns(model, epoch)
        for column, values in columns.items():
            name = f"trees/{column}"
            if values.dtype.kind == "U":
                save_strings(self, name, list(values), [])
            else:
                self._save(name, values)


def _hyperparameter(key, value):
    """("numbers" or "text", the values as a list) of a hyperparameter: a number, a string, or a
    list or tuple of them (xgboost's own params, as eval_metric=["auc", "logloss"]); else
    TypeError naming the key."""
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    if values and all(isinstance(v, str) for v in values):
        return "text", values
    if values and all(isinstance(v, (bool, int, float, np.number)) for v in values):
        return "numbers", values
    raise TypeError(f"hyperparameter {key!r} is a {type(value).__name__}: smd saves numbers, strings "
                    "and lists of either")


class _Detached(xgb.callback.TrainingCallback):
    """The hook in a pickled or cloned estimator: an xgboost callback that saves nothing."""

    def __reduce__(self):
        return (_Detached, ())

    def __repr__(self):
        return "<smd.xgboost hook of a pickled or copied estimator: saves nothing>"


def _booster_kind(model):
    try:
        return json.loads(model.save_config())["learner"]["gradient_booster"]["name"]
    except (KeyError, ValueError, xgb.core.XGBoostError):
        return "gbtree"


def _feature_names(model):
    if model.feature_names is not None:
        return list(model.feature_names)
    return [f"f{i}" for i in range(model.num_features())]


def tree_columns(model, epoch):
    """The trees added in boosting round `epoch` as the columns of xgboost's
    ``Booster.trees_to_dataframe()`` (without pandas): Tree, Node (int64), ID, Feature (str),
    Split (float64; NaN for leaves and categorical splits), Yes, No, Missing (str, "" for leaves),
    Gain (the leaf value for leaves), Cover (float64), Category (str: the categories of a
    categorical split, comma-separated, "" otherwise), sorted by tree then node."""
    dump = model.get_dump(with_stats=True, dump_format="json")
    # The round just boosted is the model's last: training continued from an xgb_model counts
    # its epochs from 0 again while the model holds the earlier rounds' trees first.
    rounds = model.num_boosted_rounds() if callable(getattr(model, "num_boosted_rounds", None)) else epoch + 1
    per_round = len(dump) // rounds if 0 < rounds <= len(dump) else 1
    first = len(dump) - per_round if rounds else 0
    rows = []
    for tree_id in range(first, min(first + per_round, len(dump))):
        stack = [json.loads(dump[tree_id])]
        while stack:
            n = stack.pop()
            node = n["nodeid"]
            if "leaf" in n:
                rows.append((tree_id, node, "Leaf", float("nan"), "", "", "", float(n["leaf"]),
                             float(n["cover"]), ""))
                continue
            cats = n.get("categories")
            split = float("nan") if cats is not None else float(n.get("split_condition", "nan"))
            rows.append((tree_id, node, str(n["split"]), split, f"{tree_id}-{n['yes']}",
                         f"{tree_id}-{n['no']}", f"{tree_id}-{n['missing']}", float(n["gain"]),
                         float(n["cover"]), ",".join(str(c) for c in cats) if cats else ""))
            stack.extend(n.get("children", []))
    rows.sort(key=lambda r: (r[0], r[1]))
    tree = np.array([r[0] for r in rows], dtype=np.int64)
    node = np.array([r[1] for r in rows], dtype=np.int64)
    return {
        "Tree": tree,
        "Node": node,
        "ID": np.array([f"{t}-{n}" for t, n in zip(tree, node)], dtype=np.str_),
        "Feature": np.array([r[2] for r in rows], dtype=np.str_),
        "Split": np.array([r[3] for r in rows], dtype=np.float64),
        "Yes": np.array([r[4] for r in rows], dtype=np.str_),
        "No": np.array([r[5] for r in rows], dtype=np.str_),
        "Missing": np.array([r[6] for r in rows], dtype=np.str_),
        "Gain": np.array([r[7] for r in rows], dtype=np.float64),
        "Cover": np.array([r[8] for r in rows], dtype=np.float64),
        "Category": np.array([r[9] for r in rows], dtype=np.str_),
    }
