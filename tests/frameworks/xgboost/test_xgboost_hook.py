"""smd.xgboost.Hook with the real xgboost: what each collection holds, compared with what xgboost
itself computes, and read back by smd and by the real smdebug."""
import json

import numpy as np
import pytest
import xgboost as xgb

import smd.xgboost as sx
from smd.trials import create_trial

ALL = ["metrics", "hyperparameters", "predictions", "labels", "feature_importance", "full_shap",
       "average_shap", "trees"]


def data(n=240, features=4, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, features))
    score = X[:, 0] + 0.5 * X[:, 1] - 0.25 * X[:, 2]
    if classes == 2:
        y = (score > 0).astype(np.float64)
    else:
        y = np.digitize(score, np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1])).astype(np.float64)
    cut = n * 3 // 4
    return X, y, xgb.DMatrix(X[:cut], label=y[:cut]), xgb.DMatrix(X[cut:], label=y[cut:])


PARAMS = {"objective": "binary:logistic", "max_depth": 3, "eta": 0.3,
          "eval_metric": ["logloss", "auc"], "seed": 1}


def train(hook, dtrain, dval, rounds, params=PARAMS):
    evals_result = {}
    bst = xgb.train(params, dtrain, num_boost_round=rounds, evals=[(dtrain, "train"), (dval, "validation")],
                    evals_result=evals_result, callbacks=[hook] if hook else [], verbose_eval=False)
    return bst, evals_result


def test_default_saves_metrics_every_10_rounds(tmp_path):
    _, _, dtrain, dval = data()
    hook = sx.Hook(str(tmp_path / "run"), train_data=dtrain, validation_data=dval,
                   hyperparameters={"max_depth": 3})
    _, evals = train(hook, dtrain, dval, 25)
    trial = create_trial(str(tmp_path / "run"))
    assert trial.steps() == [0, 10, 20]
    assert set(trial.tensor_names()) == {"train-logloss", "train-auc", "validation-logloss",
                                         "validation-auc"}
    for step in (0, 10, 20):
        assert trial.tensor("validation-auc").value(step)[0] == pytest.approx(evals["validation"]["auc"][step])
        assert trial.tensor("train-logloss").value(step)[0] == pytest.approx(evals["train"]["logloss"][step])
    # auc grows as the model improves: a metric, not a loss
    assert trial.tensor_names(collection="losses") == ["train-logloss", "validation-logloss"]
    assert set(trial.tensor_names(collection="metrics")) == set(trial.tensor_names())


# device="cuda": xgboost trains on a GPU (predictions, SHAP values and importances still come back
# as host arrays); where it finds none it says so and trains on the CPU, so this runs everywhere.
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_every_collection_equals_what_xgboost_computes(tmp_path, device):
    X, y, dtrain, dval = data()
    hyper = dict(PARAMS, eval_metric="logloss", device=device)
    hook = sx.Hook(str(tmp_path / "run"), save_config=sx.SaveConfig(save_interval=2),
                   include_collections=ALL, hyperparameters=hyper, train_data=dtrain,
                   validation_data=dval)
    bst, evals = train(hook, dtrain, dval, 5)
    trial = create_trial(str(tmp_path / "run"))
    assert trial.steps() == [0, 2, 4]
    names = set(trial.tensor_names())
    feats = ["f0", "f1", "f2", "f3"]
    assert {f"full_shap/{f}" for f in feats} <= names
    assert {f"average_shap/{f}" for f in feats} <= names
    assert not any(n.endswith("/bias") for n in names)  # as smdebug: the bias is the matrix's last column
    assert {"predictions", "labels", "hyperparameters/max_depth", "hyperparameters/eta",
            "hyperparameters/objective"} <= names
    for step in (0, 2, 4):
        model = bst[: step + 1]  # the booster after round `step`
        np.testing.assert_allclose(trial.tensor("predictions").value(step), model.predict(dval), rtol=1e-6)
        np.testing.assert_array_equal(trial.tensor("labels").value(step), dval.get_label())
        contribs = model.predict(dtrain, pred_contribs=True)
        for i, f in enumerate(feats):
            # as smdebug: every full_shap/<feature> is the whole (rows, features + 1) matrix
            np.testing.assert_allclose(trial.tensor(f"full_shap/{f}").value(step), contribs, rtol=1e-6)
            # as smdebug: numpy's mean of the float32 matrix, float32 of shape (1,)
            avg = trial.tensor(f"average_shap/{f}").value(step)
            assert avg.dtype == np.float32 and avg.tobytes() == np.mean(contribs, axis=0)[i:i + 1].tobytes()
        for kind in sx.hook.IMPORTANCE_TYPES:
            scores = model.get_score(importance_type=kind)
            for f, s in scores.items():
                got = trial.tensor(f"feature_importance/{kind}/{f}").value(step)[0]
                assert got == pytest.approx(s / sum(scores.values()))
        assert trial.tensor("validation-logloss").value(step)[0] == pytest.approx(evals["validation"]["logloss"][step])
        # the round's tree: one per round for a binary objective
        tree = trial.tensor("trees/Tree").value(step)
        assert set(tree.tolist()) == {step}
        dump = json.loads(bst.get_dump(with_stats=True, dump_format="json")[step])
        nodes = []
        stack = [dump]
        while stack:
            n = stack.pop()
            nodes.append(n)
            stack.extend(n.get("children", []))
        assert sorted(trial.tensor("trees/Node").value(step).tolist()) == sorted(n["nodeid"] for n in nodes)
        root = trial.tensor("trees/Gain").value(step)[0]
        assert root == pytest.approx(dump["gain"])
        assert trial.tensor("trees/Cover").value(step)[0] == pytest.approx(dump["cover"])
        assert trial.tensor("trees/Split").value(step)[0] == pytest.approx(dump["split_condition"])
    assert trial.tensor("hyperparameters/max_depth").value(0)[0] == 3
    assert trial.tensor("hyperparameters/eta").value(0)[0] == pytest.approx(0.3)
    assert trial.tensor("hyperparameters/device").value(0).tolist() == [device]


def test_the_real_smdebug_reads_the_trial(tmp_path, read_with_smdebug):
    _, _, dtrain, dval = data()
    hook = sx.Hook(str(tmp_path / "run"), save_config=sx.SaveConfig(save_interval=3),
                   include_collections=ALL, hyperparameters={"objective": "binary:logistic", "max_depth": 3},
                   train_data=dtrain, validation_data=dval)
    bst, evals = train(hook, dtrain, dval, 4)
    doc = read_with_smdebug(tmp_path / "run")
    assert doc["steps"] == [0, 3]
    t = doc["tensors"]
    assert t["hyperparameters/objective"]["0"] == ["binary:logistic"]
    assert t["hyperparameters/max_depth"]["3"] == [3]
    assert t["validation-auc"]["3"][0] == pytest.approx(evals["validation"]["auc"][3])
    np.testing.assert_allclose(t["predictions"]["3"], bst.predict(dval), rtol=1e-6)
    np.testing.assert_allclose(t["full_shap/f1"]["3"], bst.predict(dtrain, pred_contribs=True), rtol=1e-6)
    # string columns of the trees come back as numpy str arrays
    feature = t["trees/Feature"]["3"]
    assert feature[0] == json.loads(bst.get_dump(dump_format="json")[3])["split"]
    assert "Leaf" in feature
    assert all(i.startswith("3-") for i in t["trees/ID"]["3"])
    assert t["trees/Yes"]["3"][0] == "3-1"
    for coll in ALL:
        assert doc["collections"][coll], f"collection {coll} is empty for smdebug"
    assert "validation-logloss" in doc["collections"]["losses"]
    assert "validation-auc" not in doc["collections"]["losses"]


def test_multiclass_shapes(tmp_path):
    _, _, dtrain, dval = data(classes=3)
    params = {"objective": "multi:softprob", "num_class": 3, "max_depth": 2, "eval_metric": "mlogloss"}
    hook = sx.Hook(str(tmp_path / "run"), save_config=sx.SaveConfig(save_steps=[1]),
                   include_collections=ALL, train_data=dtrain, validation_data=dval)
    bst, _ = train(hook, dtrain, dval, 3, params)
    trial = create_trial(str(tmp_path / "run"))
    assert trial.steps() == [0, 1]  # step 0: every 500 steps from 0, as in smdebug
    model = bst[:2]
    np.testing.assert_allclose(trial.tensor("predictions").value(1), model.predict(dval), rtol=1e-6)
    contribs = model.predict(dtrain, pred_contribs=True)  # (rows, classes, features + 1)
    np.testing.assert_allclose(trial.tensor("full_shap/f2").value(1), contribs, rtol=1e-6)
    assert trial.tensor("average_shap/f2").value(1).tobytes() == np.mean(contribs, axis=(0, 1))[2:3].tobytes()
    # three trees (one per class) in round 1: trees 3, 4, 5
    assert sorted(set(trial.tensor("trees/Tree").value(1).tolist())) == [3, 4, 5]


def test_data_from_csv_and_libsvm_files(tmp_path):
    X, y, dtrain, dval = data(n=80)
    csv = tmp_path / "train.csv"
    np.savetxt(csv, np.column_stack([y, X]), delimiter=",")
    svm = tmp_path / "train.svm"
    with open(svm, "w") as f:
        for row, label in zip(X, y):
            f.write(f"{int(label)} " + " ".join(f"{j}:{v:.17g}" for j, v in enumerate(row)) + "\n")
    for path, kind in ((csv, "text/csv"), (svm, "libsvm")):
        out = tmp_path / f"run-{kind.replace('/', '_')}"
        hook = sx.Hook(str(out), save_config=sx.SaveConfig(save_steps=[1]),
                       include_collections=["average_shap"], train_data=(str(path), kind))
        bst, _ = train(hook, dtrain, dval, 2)
        full = xgb.DMatrix(X, label=y)
        expect = bst.predict(full, pred_contribs=True).mean(axis=0)
        trial = create_trial(str(out))
        assert trial.tensor("average_shap/f0").value(1)[0] == pytest.approx(expect[0], rel=1e-5)


def test_zero_script_change_from_json(tmp_path, monkeypatch):
    cfg = tmp_path / "hook.json"
    cfg.write_text(json.dumps({
        "LocalPath": str(tmp_path / "run"),
        "HookParameters": {"save_interval": "2"},
        "CollectionConfigurations": [{"CollectionName": "feature_importance"},
                                     {"CollectionName": "predictions"}]}))
    monkeypatch.setenv("SMDEBUG_CONFIG_FILE_PATH", str(cfg))
    _, _, dtrain, dval = data()
    hook = sx.Hook.create_from_json_file(validation_data=dval)
    bst, _ = train(hook, dtrain, dval, 3)
    trial = create_trial(str(tmp_path / "run"))
    assert trial.steps() == [0, 2]
    names = set(trial.tensor_names())
    assert "predictions" in names and "feature_importance/gain/f0" in names
    assert "train-auc" in names  # metrics are always included, as in smdebug
    assert not any(n.startswith(("full_shap", "trees", "labels")) for n in names)
    np.testing.assert_allclose(trial.tensor("predictions").value(2), bst.predict(dval), rtol=1e-6)


def test_json_regexes_of_the_losses_collection_are_kept(tmp_path):
    cfg = tmp_path / "hook.json"
    cfg.write_text(json.dumps({
        "LocalPath": str(tmp_path / "run"), "HookParameters": {"save_interval": "1"},
        "CollectionConfigurations": [{"CollectionName": "losses",
                                      "CollectionParameters": {"include_regex": "my_custom_loss"}}]}))
    hook = sx.Hook.create_from_json_file(str(cfg))
    hook.begin_step()
    hook.save_tensor("my_custom_loss", np.array([1.0]), [])
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert "my_custom_loss" in trial.tensor_names(collection="losses")


def test_json_default_interval_is_10(tmp_path):
    cfg = tmp_path / "hook.json"
    cfg.write_text(json.dumps({"LocalPath": str(tmp_path / "run"), "HookParameters": {}}))
    _, _, dtrain, dval = data()
    hook = sx.Hook.create_from_json_file(str(cfg))
    train(hook, dtrain, dval, 12)
    assert create_trial(str(tmp_path / "run")).steps() == [0, 10]


def test_bad_input_is_named(tmp_path):
    _, _, dtrain, dval = data()
    out = str(tmp_path / "run")
    with pytest.raises(TypeError, match="train_data must be an xgboost.DMatrix"):
        sx.Hook(out, train_data=np.zeros((3, 3)))
    with pytest.raises(FileNotFoundError, match="validation_data: no such local file"):
        sx.Hook(out, validation_data=(str(tmp_path / "missing.csv"), "csv"))
    (tmp_path / "x.csv").write_text("1,2\n")
    with pytest.raises(ValueError, match="content type 'parquet'"):
        sx.Hook(out, train_data=(str(tmp_path / "x.csv"), "parquet"))
    (tmp_path / "bad.svm").write_text("1 0:1.5\n0 x:2\n")
    with pytest.raises(ValueError, match="bad.svm line 2 is not LIBSVM"):
        sx.Hook(out, train_data=(str(tmp_path / "bad.svm"), "text/libsvm"))
    (tmp_path / "bad.csv").write_text("1,a\n")
    with pytest.raises(ValueError, match="bad.csv is not a numeric CSV file"):
        sx.Hook(out, train_data=(str(tmp_path / "bad.csv"), "csv"))
    with pytest.raises(TypeError, match="hyperparameters must be a dict"):
        sx.Hook(out, hyperparameters=[("max_depth", 3)])
    for value in (print, None, [], ["auc", 1]):  # refused before training, not after a round
        with pytest.raises(TypeError, match="hyperparameter 'callback' is a"):
            sx.Hook(out, hyperparameters={"callback": value}, include_collections=["hyperparameters"])


def test_hyperparameters_of_xgboosts_own_params_with_lists(tmp_path):
    # a script passes xgboost's params as the hyperparameters: lists of names or numbers too
    _, _, dtrain, dval = data()
    hook = sx.Hook(str(tmp_path / "run"), save_config=sx.SaveConfig(save_interval=1),
                   hyperparameters=dict(PARAMS, weights=(0.5, 2)), include_collections=["hyperparameters"])
    train(hook, dtrain, dval, 1)
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert list(trial.tensor("hyperparameters/eval_metric").value(0)) == ["logloss", "auc"]
    assert trial.tensor("hyperparameters/weights").value(0).tolist() == [0.5, 2.0]
    assert trial.tensor("hyperparameters/max_depth").value(0).tolist() == [3]


def test_hook_reused_for_a_second_training_is_refused(tmp_path):
    _, _, dtrain, dval = data()
    hook = sx.Hook(str(tmp_path / "run"))
    train(hook, dtrain, dval, 2)
    with pytest.raises(RuntimeError, match="round 0 was already seen.*registered twice in callbacks, or reused"):
        train(hook, dtrain, dval, 2)
    assert create_trial(str(tmp_path / "run")).steps() == [0]


def test_linear_booster_skips_tree_collections(tmp_path):
    _, _, dtrain, dval = data()
    hook = sx.Hook(str(tmp_path / "run"), save_config=sx.SaveConfig(save_interval=1),
                   include_collections=ALL, validation_data=dval)
    params = {"booster": "gblinear", "objective": "binary:logistic", "eval_metric": "logloss"}
    bst, _ = train(hook, dtrain, dval, 2, params)
    names = set(create_trial(str(tmp_path / "run")).tensor_names())
    assert "predictions" in names and "validation-logloss" in names
    assert not any(n.startswith(("trees/", "feature_importance/")) for n in names)


def test_importing_smd_imports_no_framework():
    import subprocess
    import sys
    code = ("import sys, smd, smd.trials, smd.hook; "
            "print(sorted(m for m in ('xgboost', 'tensorflow', 'torch', 'mxnet') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]"
    r = subprocess.run([sys.executable, "-c", "import sys, smd.xgboost; print('xgboost' in sys.modules)"],
                       capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "True"


def test_loss_not_decreasing_fires_when_the_model_does_not_learn(tmp_path):
    from conftest import run_rule
    _, _, dtrain, dval = data()
    status = {}
    for kind, eta in (("learning", 0.3), ("stuck", 0.0)):
        out = tmp_path / kind
        hook = sx.Hook(str(out), save_config=sx.SaveConfig(save_interval=1))
        train(hook, dtrain, dval, 30, dict(PARAMS, eta=eta))
        status[kind] = run_rule(out, "LossNotDecreasing:num_steps=5,diff_percent=1")
    assert status["learning"][0] == 0
    assert status["stuck"][0] == 6
    assert any(line.get("tensor") in ("validation-logloss", "train-logloss") for line in status["stuck"][1])


def test_smd_hook_options_pass_through(tmp_path):
    """The XGBoost hook takes smd.Hook's keyword-only options (worker, fsync, ...)."""
    _, _, dtrain, dval = data()
    hook = sx.Hook(str(tmp_path / "run"), train_data=dtrain, validation_data=dval,
                   worker="booster_3", fsync=True)
    train(hook, dtrain, dval, 11)
    trial = create_trial(str(tmp_path / "run"))
    assert trial.workers() == ["booster_3"]
    assert trial.steps() == [0, 10]
    with pytest.raises(TypeError):
        sx.Hook(str(tmp_path / "other"), no_such_option=1)


def test_shap_tensors_as_smdebugs_test_hook_shap_expects(tmp_path):
    # smdebug 1.0.34's tests/xgboost/test_hook.py::test_hook_shap, as a user's script sees it: the
    # two SHAP collections, no bias tensors, average_shap values of shape (1,), full_shap values
    # the whole (rows, features + 1) matrix
    rng = np.random.default_rng(42)
    dtrain = xgb.DMatrix(rng.random((10, 10)), label=rng.integers(0, 2, size=10))
    hook = sx.Hook(str(tmp_path / "run"), include_collections=["average_shap", "full_shap"],
                   train_data=dtrain)
    bst = xgb.train({"objective": "binary:logistic"}, dtrain, num_boost_round=3, callbacks=[hook])
    trial = create_trial(str(tmp_path / "run"))
    names = trial.tensor_names()
    assert {"average_shap", "full_shap"} <= set(trial.collections())
    assert sorted(n for n in names if n.startswith("average_shap/")) == sorted(f"average_shap/f{i}" for i in range(10))
    assert sorted(n for n in names if n.startswith("full_shap/")) == sorted(f"full_shap/f{i}" for i in range(10))
    assert not any(n.endswith("/bias") for n in names)
    assert trial.tensor("average_shap/f9").value(0).shape == (1,)
    assert trial.tensor("full_shap/f9").value(0).shape == (10, 11)
    contribs = bst[:1].predict(dtrain, pred_contribs=True)
    np.testing.assert_allclose(trial.tensor("full_shap/f3").value(0), contribs, rtol=1e-6)
    assert trial.tensor("average_shap/f3").value(0)[0] == pytest.approx(contribs[:, 3].astype(np.float64).mean(), rel=1e-6)


def test_shap_bias_is_saved_by_save_all_alone(tmp_path):
    """smdebug names the contribution matrix's last column "bias": its SHAP collections leave
    full_shap/bias and average_shap/bias out, save_all (the "all" collection) saves them."""
    rng = np.random.default_rng(7)
    dtrain = xgb.DMatrix(rng.random((10, 3)), label=rng.integers(0, 2, size=10))
    for save_all in (False, True):
        out = tmp_path / f"run{int(save_all)}"
        hook = sx.Hook(str(out), include_collections=["average_shap", "full_shap"],
                       save_all=save_all, train_data=dtrain)
        bst = xgb.train({"objective": "binary:logistic"}, dtrain, num_boost_round=1, callbacks=[hook])
        hook.close()
        names = create_trial(str(out)).tensor_names()
        bias = sorted(n for n in names if n.endswith("/bias"))
        assert bias == (["average_shap/bias", "full_shap/bias"] if save_all else []), bias
    trial = create_trial(str(out))
    contribs = bst.predict(dtrain, pred_contribs=True)
    assert trial.tensor("average_shap/bias").value(0).tobytes() == np.mean(contribs, axis=0)[3:4].tobytes()
    np.testing.assert_array_equal(trial.tensor("full_shap/bias").value(0), contribs)


def test_hook_stays_open_after_training_as_smdebugs(tmp_path):
    """smdebug's scripts save scalars after xgboost.train returns: the hook stays open, every
    round is complete for a trial opened then, and what is saved afterwards lands in one more
    step, written at close()."""
    _, _, dtrain, dval = data()
    out = str(tmp_path / "run")
    hook = sx.Hook(out, save_config=sx.SaveConfig(save_interval=2), include_collections=["metrics"])
    hook.save_scalar("before_train", 1.0, timestamp=1234.5)
    hook.set_mode(sx.modes.TRAIN)
    train(hook, dtrain, dval, 5)
    trial = create_trial(out)
    assert trial.steps() == [0, 2, 4]
    assert not trial.loaded_all_steps  # not ended: the hook is open
    assert trial.tensor("scalar/before_train").value(0)[0] == 1.0
    assert trial.tensor("train-logloss").steps() == [0, 2, 4]
    assert hook.step == 4
    hook.save_scalar("after_train", 2.0)
    hook.close()
    trial = create_trial(out)
    assert trial.steps() == [0, 2, 4, 5]
    assert trial.tensor("scalar/after_train").steps() == [5]
    assert trial.tensor("scalar/after_train").value(5)[0] == 2.0
    assert trial.loaded_all_steps


def test_hook_not_closed_by_the_script_is_closed_at_exit(tmp_path):
    import subprocess
    import sys

    code = f"""
import numpy as np, xgboost as xgb, smd.xgboost as sx
X = np.random.default_rng(0).normal(size=(50, 3)); y = (X[:, 0] > 0).astype(float)
hook = sx.Hook({str(tmp_path / "run")!r}, save_config=sx.SaveConfig(save_interval=1))
xgb.train({{"objective": "binary:logistic"}}, xgb.DMatrix(X, label=y), 3, callbacks=[hook])
hook.save_scalar("after_train", 2.0)
"""
    subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert (tmp_path / "run" / "training_job_end.ts").exists()
    trial = create_trial(str(tmp_path / "run"))
    assert trial.tensor("scalar/after_train").steps() == [3]


def test_losses_are_the_decreasing_metrics_alone(tmp_path):
    # a feature or hyperparameter named "...loss..." is not a loss (smd's built-in losses pattern
    # would take it in); SHAP values are saved only when their collections are included
    X, y, _, _ = data()
    dtrain = xgb.DMatrix(X, label=y, feature_names=["age", "prior_loss", "income", "x"])
    hook = sx.Hook(str(tmp_path / "run"), save_config=sx.SaveConfig(save_interval=1),
                   include_collections=["metrics", "losses"], hyperparameters={"loss_scale": 2.0},
                   train_data=dtrain)
    xgb.train(PARAMS, dtrain, num_boost_round=2, evals=[(dtrain, "train")], callbacks=[hook],
              verbose_eval=False)
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert sorted(trial.tensor_names()) == ["train-auc", "train-logloss"]
    assert trial.tensor_names(collection="losses") == ["train-logloss"]


def test_cv_saves_each_metrics_mean_and_std(tmp_path):
    _, _, dtrain, _ = data()
    hook = sx.Hook(str(tmp_path / "run"), save_config=sx.SaveConfig(save_interval=1),
                   include_collections=ALL)
    result = xgb.cv(PARAMS, dtrain, num_boost_round=3, nfold=3, callbacks=[hook], seed=1)
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    t = trial.tensor("test-logloss")
    assert t.steps() == [0, 1, 2]
    np.testing.assert_allclose(t.value(2), [np.asarray(result["test-logloss-mean"])[2],
                                            np.asarray(result["test-logloss-std"])[2]])  # (a dict or a DataFrame)


def test_continued_training_saves_the_trees_of_each_new_round(tmp_path):
    _, _, dtrain, _ = data()
    first = xgb.train(PARAMS, dtrain, num_boost_round=3)
    hook = sx.Hook(str(tmp_path / "run"), save_config=sx.SaveConfig(save_interval=1),
                   include_collections=["trees"])
    bst = xgb.train(PARAMS, dtrain, num_boost_round=3, xgb_model=first, callbacks=[hook])
    hook.close()
    assert bst.num_boosted_rounds() == 6
    trees = create_trial(str(tmp_path / "run")).tensor("trees/Tree")
    assert [sorted(set(trees.value(s).tolist())) for s in trees.steps()] == [[3], [4], [5]]


def test_a_fitted_estimator_holding_the_hook_pickles_and_copies(tmp_path):
    # joblib/pickle of a fitted estimator, and sklearn's clone (a deep copy): the hook travels as
    # a callback that saves nothing, and the copy still trains
    import copy
    import pickle
    X, y, _, _ = data()
    hook = sx.Hook(str(tmp_path / "run"), save_config=sx.SaveConfig(save_interval=1))
    clf = xgb.XGBClassifier(n_estimators=3, max_depth=2, callbacks=[hook])
    clf.fit(X, y, eval_set=[(X, y)], verbose=False)
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.predict(X), clf.predict(X))
    twin = copy.deepcopy(clf)
    twin.fit(X, y, eval_set=[(X, y)], verbose=False)
    hook.close()
    assert create_trial(str(tmp_path / "run")).tensor("validation_0-logloss").steps() == [0, 1, 2]


def test_a_regex_alone_saves_the_hooks_tensors_it_names(tmp_path):
    """smd computes what any saved collection's regex takes in (smdebug: only when the tensor's
    own collection is saved); the losses and the built-in collections are listed (docs/
    frameworks.md, differences from smdebug's XGBoost hook)."""
    X, y, dtrain, dval = data()
    hook = sx.Hook(str(tmp_path / "run"), save_config=sx.SaveConfig(save_interval=1),
                   include_regex=["predictions", "feature_importance/weight/.*"],
                   validation_data=dval)
    bst, _ = train(hook, dtrain, dval, 2)
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    names = set(trial.tensor_names())
    assert "predictions" in names and "labels" not in names
    assert any(n.startswith("feature_importance/weight/") for n in names)
    assert not any(n.startswith("feature_importance/gain/") for n in names)
    np.testing.assert_allclose(trial.tensor("predictions").value(1), bst.predict(dval), rtol=1e-6)
    assert {"weights", "biases", "gradients", "losses", "metrics"} <= set(trial.collections())
    assert "validation-logloss" in trial.tensor_names(collection="losses")
