"""SessionHook over tf.compat.v1 graph training (MonitoredTrainingSession), checked against the
closed-form gradients of a linear model with mean squared error."""
import numpy as np
import pytest
import tensorflow as tf

import smd.tensorflow as st
from smd.trials import create_trial

v1 = tf.compat.v1
LR = 0.1


def test_monitored_session_saves_losses_gradients_and_weights(tmp_path, read_with_smdebug):
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(8, 4)).astype("float32")
    ys = rng.normal(size=(8, 1)).astype("float32")
    out = str(tmp_path / "run")
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float32, [None, 4])
        y = v1.placeholder(tf.float32, [None, 1])
        w = v1.get_variable("dense/kernel", [4, 1], initializer=v1.constant_initializer(0.5))
        b = v1.get_variable("dense/bias", [1], initializer=v1.zeros_initializer())
        loss = v1.losses.mean_squared_error(y, tf.matmul(x, w) + b)
        hook = st.SessionHook(out, save_config=st.SaveConfig(save_interval=2),
                              include_collections=["weights", "biases", "gradients"])
        opt = hook.wrap_optimizer(v1.train.GradientDescentOptimizer(LR))
        train = opt.minimize(loss, global_step=v1.train.get_or_create_global_step())
        hook.set_mode(st.modes.TRAIN)
        with v1.train.MonitoredTrainingSession(hooks=[hook]) as sess:
            for _ in range(5):
                sess.run(train, feed_dict={x: xs, y: ys})
    hook.close()
    trial = create_trial(out)
    assert trial.steps(mode=st.modes.TRAIN) == [0, 2, 4]
    assert set(trial.tensor_names(collection="gradients")) == {"gradients/dense/kernelGrad",
                                                               "gradients/dense/biasGrad"}
    assert trial.tensor_names(collection="weights") == ["dense/kernel:0"]
    # as smdebug's graph hook: biases are the variables and graph tensors whose name holds "bias"
    assert trial.tensor_names(collection="biases") == [
        "dense/bias/Initializer/zeros:0", "dense/bias/IsInitialized/VarIsInitializedOp:0",
        "dense/bias/Read/ReadVariableOp:0", "dense/bias:0", "gradients/dense/biasGrad"]
    wn, bn = np.full((4, 1), 0.5, np.float64), np.zeros(1)
    for step in range(5):
        err = xs @ wn + bn - ys
        gw, gb = 2 * xs.T @ err / len(xs), 2 * err.mean(axis=0)
        loss_value = float(np.mean(err ** 2))
        wn, bn = wn - LR * gw, bn - LR * gb
        if step % 2 == 0:
            np.testing.assert_allclose(trial.tensor("gradients/dense/kernelGrad").value(step), gw, rtol=1e-4, atol=1e-6)
            np.testing.assert_allclose(trial.tensor("gradients/dense/biasGrad").value(step), gb, rtol=1e-4, atol=1e-6)
            np.testing.assert_allclose(trial.tensor("dense/kernel:0").value(step), wn, rtol=1e-4, atol=1e-6)
            assert trial.tensor("mean_squared_error/value:0").value(step).reshape(-1)[0] == pytest.approx(loss_value, rel=1e-4)
    doc = read_with_smdebug(out)
    assert doc["modes"]["TRAIN"] == [0, 2, 4]
    assert "mean_squared_error/value:0" in doc["collections"]["losses"]


def test_save_all_fetches_the_graphs_tensors_with_the_run(tmp_path):
    # smdebug's SessionHook with save_all saves every fetchable tensor of the graph (not variable
    # handles), each with the value of the run it was fetched with; a run that does not feed a
    # placeholder saves what does not need it
    rng = np.random.default_rng(1)
    xs = rng.normal(size=(8, 4)).astype("float32")
    out = str(tmp_path / "run")
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float32, [None, 4], name="x")
        w = v1.get_variable("dense/kernel", [4, 1], initializer=v1.constant_initializer(0.5))
        pred = tf.matmul(x, w, name="pred")
        loss = tf.reduce_mean(tf.square(pred), name="objective")
        v1.losses.add_loss(loss)
        hook = st.SessionHook(out, save_config=st.SaveConfig(save_interval=1), save_all=True)
        train = v1.train.GradientDescentOptimizer(LR).minimize(loss)
        hook.set_mode(st.modes.TRAIN)
        with v1.train.MonitoredTrainingSession(hooks=[hook]) as sess:
            sess.run(train, feed_dict={x: xs})
            sess.run(w)  # step 1: x is not fed
    hook.close()
    trial = create_trial(out)
    names = trial.tensor_names()
    assert {"pred:0", "objective:0", "x:0", "dense/kernel:0"} <= set(names)
    assert len(names) > 20
    np.testing.assert_allclose(trial.tensor("pred:0").value(0), xs @ np.full((4, 1), 0.5), rtol=1e-5)
    np.testing.assert_array_equal(trial.tensor("x:0").value(0), xs)
    assert trial.tensor_names(collection="losses") == ["objective:0"]
    assert trial.tensor_names(collection="weights") == ["dense/kernel:0"]
    step1 = trial.tensor_names(step=1)
    assert "dense/kernel:0" in step1 and "pred:0" not in step1 and "x:0" not in step1


def test_a_pattern_added_between_runs_fetches_its_tensors_from_the_next_run(tmp_path):
    # The hook asks only about the graph tensors a saved collection can hold, and asks again when
    # the collections change.
    xs = np.ones((2, 4), "float32")
    out = str(tmp_path / "run")
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float32, [None, 4], name="x")
        w = v1.get_variable("dense/kernel", [4, 1], initializer=v1.constant_initializer(0.5))
        pred = tf.matmul(x, w, name="pred")
        loss = tf.reduce_mean(tf.square(pred), name="objective")
        v1.losses.add_loss(loss)
        hook = st.SessionHook(out, save_config=st.SaveConfig(save_interval=1),
                              include_collections=["losses", "custom"])
        train = v1.train.GradientDescentOptimizer(LR).minimize(loss)
        with v1.train.MonitoredTrainingSession(hooks=[hook]) as sess:
            sess.run(train, feed_dict={x: xs})
            hook.get_collection("custom").include("^pred:")
            sess.run(train, feed_dict={x: xs})
    hook.close()
    trial = create_trial(out)
    assert trial.tensor("objective:0").steps() == [0, 1]
    assert trial.tensor("pred:0").steps() == [1]
    assert trial.tensor_names(collection="custom") == ["pred:0"]
    w0 = np.full((4, 1), 0.5)
    w1 = w0 - LR * 2 * xs.T @ (xs @ w0) / len(xs)  # after step 0's update
    np.testing.assert_allclose(trial.tensor("pred:0").value(1), xs @ w1, rtol=1e-5)


def test_session_hook_bad_input(tmp_path):
    with pytest.raises(TypeError, match="SessionHook needs out_dir"):
        st.SessionHook()
    hook = st.SessionHook(str(tmp_path / "run"))
    with pytest.raises(TypeError, match="takes a tf.compat.v1.train.Optimizer, not SGD"):
        hook.wrap_optimizer(tf.keras.optimizers.SGD())
    with pytest.raises(TypeError, match="add_to_collection takes a graph tensor or variable, not list"):
        hook.add_to_collection("custom", [1, 2])
    hook.close()


def test_session_hook_from_json(tmp_path, monkeypatch):
    import json
    out = tmp_path / "run"
    cfg = tmp_path / "hook.json"
    cfg.write_text(json.dumps({"LocalPath": str(out), "HookParameters": {"save_steps": "1,2"},
                               "CollectionConfigurations": [{"CollectionName": "weights"}]}))
    monkeypatch.setenv("SMDEBUG_CONFIG_FILE_PATH", str(cfg))
    g = tf.Graph()
    with g.as_default():
        w = v1.get_variable("w/kernel", [2], initializer=v1.ones_initializer())
        loss = v1.losses.absolute_difference(tf.constant([0.0, 0.0]), w)
        hook = st.SessionHook.create_from_json_file()
        train = v1.train.GradientDescentOptimizer(0.5).minimize(loss)
        with v1.train.MonitoredTrainingSession(hooks=[hook]) as sess:
            for _ in range(3):
                sess.run(train)
    hook.close()
    trial = create_trial(str(out))
    assert trial.steps() == [0, 1, 2]  # step 0: every 500 from 0; 1 and 2: save_steps
    assert trial.tensor_names(collection="weights") == ["w/kernel:0"]
    # |w| descends by lr * sign(w) / 2 per step: 1 -> 0.75 -> 0.5 -> 0.25
    np.testing.assert_allclose(trial.tensor("w/kernel:0").value(2), [0.25, 0.25], rtol=1e-6)
