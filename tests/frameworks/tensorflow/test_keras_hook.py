"""smd.tensorflow.KerasHook with the real TensorFlow and Keras 3: collections, values equal to
what TensorFlow computed, modes, save intervals, the real smdebug reading the trial, a built-in
rule on a broken and a healthy model, JSON configuration and bad input."""
import json
import warnings

import numpy as np
import pytest
import tensorflow as tf

import smd.tensorflow as st
from smd.exceptions import TensorUnavailableForStep
from smd.trials import create_trial

from conftest import run_rule, run_script

keras = tf.keras
LR = 0.05


@pytest.fixture(autouse=True)
def fresh_names():
    """Keras numbers layer names per process: start each test from "sequential", "dense"."""
    keras.backend.clear_session()


def dataset(n=64, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4)).astype("float32")
    y = (x @ np.array([[1.0], [-2.0], [0.5], [0.0]], dtype="float32") + 0.3).astype("float32")
    return x, y


def mlp(seed=0, activation="relu", init=None):
    keras.utils.set_random_seed(seed)
    kw = {} if init is None else {"kernel_initializer": init}
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation=activation, **kw),
                              keras.layers.Dense(1, **kw)])
    model.compile(optimizer=keras.optimizers.SGD(LR), loss="mse", metrics=["mae"])
    return model


class Recorder(keras.callbacks.Callback):
    """What Keras computed: the weights before and after each train batch."""

    def __init__(self):
        super().__init__()
        self.before, self.after = [], []

    def on_train_batch_begin(self, batch, logs=None):
        self.before.append([w.numpy().copy() for w in self.model.weights])

    def on_train_batch_end(self, batch, logs=None):
        self.after.append([w.numpy().copy() for w in self.model.weights])


def names(model):
    return [w.path for w in model.weights]


def test_fit_saves_weights_gradients_losses_metrics_as_tensorflow_computed(tmp_path):
    x, y = dataset()
    model = mlp()
    out = str(tmp_path / "run")
    hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=1),
                        include_collections=["weights", "biases", "gradients", "optimizer_variables"])
    rec = Recorder()
    hist = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0, callbacks=[hook, rec])
    hook.close()
    trial = create_trial(out)
    assert trial.steps() == list(range(8))
    assert set(trial.tensor_names(collection="weights")) == {
        "sequential/dense/kernel", "sequential/dense_1/kernel"}
    assert set(trial.tensor_names(collection="biases")) == {
        "sequential/dense/bias", "sequential/dense_1/bias"}
    grads = {f"gradients/{n}Grad" for n in names(model)}
    assert set(trial.tensor_names(collection="gradients")) == grads
    # the optimizer's own variables (scalars), not the state it keeps per weight
    assert set(trial.tensor_names(collection="optimizer_variables")) == {"sgd/iteration", "sgd/learning_rate"}
    for step in range(8):
        xb, yb = x[(step % 4) * 16:(step % 4 + 1) * 16], y[(step % 4) * 16:(step % 4 + 1) * 16]
        # weights after step N are those Keras holds at that batch's end
        for name, value in zip(names(model), rec.after[step]):
            np.testing.assert_array_equal(trial.tensor(name).value(step), value)
        # gradients: the tape's over the same batch, from the weights before the step
        probe = mlp()
        probe.set_weights(rec.before[step])
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(probe(xb, training=True) - yb))
        expect = tape.gradient(loss, probe.trainable_weights)
        for name, g in zip(names(model), expect):
            np.testing.assert_allclose(trial.tensor(f"gradients/{name}Grad").value(step), g.numpy(),
                                       rtol=1e-5, atol=1e-6)
        assert trial.tensor("sgd/iteration").value(step) == step + 1
    # the last batch's running mean is the epoch's loss and mae that Keras reports
    assert trial.tensor("loss").value(3)[0] == pytest.approx(hist.history["loss"][0], rel=1e-6)
    assert trial.tensor("mae").value(7)[0] == pytest.approx(hist.history["mae"][1], rel=1e-6)
    assert trial.tensor_names(collection="losses") == ["loss"]
    assert "mae" in trial.tensor_names(collection="metrics")
    # smdebug's metric "batch": the batch's index in its epoch, an int64; at the epoch's last
    # batch the epoch's end writes the epoch's index over it, as smdebug's does
    assert "batch" in trial.tensor_names(collection="metrics")
    for step in range(8):
        value = trial.tensor("batch").value(step)
        assert value.dtype == np.int64 and value.tolist() == [step // 4 if step % 4 == 3 else step % 4]


def test_modes_from_fit_evaluate_predict(tmp_path):
    x, y = dataset()
    model = mlp()
    out = str(tmp_path / "run")
    hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=1), include_collections=["outputs"])
    model.fit(x, y, batch_size=32, epochs=1, shuffle=False, verbose=0, callbacks=[hook],
              validation_data=(x[:16], y[:16]))
    model.evaluate(x, y, batch_size=32, verbose=0, callbacks=[hook])
    pred = model.predict(x, batch_size=64, verbose=0, callbacks=[hook])
    hook.close()
    trial = create_trial(out)
    # global steps: 2 train batches, 1 validation batch, 2 evaluate batches, 1 predict batch
    assert trial.steps() == list(range(6))
    assert trial.steps(mode=st.modes.TRAIN) == [0, 1]
    assert trial.steps(mode=st.modes.EVAL) == [0, 1, 2]
    assert trial.steps(mode=st.modes.PREDICT) == [0]
    assert [trial.mode(s) for s in range(6)] == [st.modes.TRAIN] * 2 + [st.modes.EVAL] * 3 + [st.modes.PREDICT]
    np.testing.assert_allclose(trial.tensor("predictions").value(0, mode=st.modes.PREDICT), pred, rtol=1e-6)
    # labels and predictions of the evaluation batches
    np.testing.assert_array_equal(trial.tensor("labels").value(2, mode=st.modes.EVAL), y[32:])
    np.testing.assert_allclose(trial.tensor("predictions").value(2, mode=st.modes.EVAL),
                               model.predict(x[32:], verbose=0), rtol=1e-5)
    assert trial.tensor("loss").value(0, mode=st.modes.EVAL)[0] == pytest.approx(
        float(np.mean((model.predict(x[:16], verbose=0) - y[:16]) ** 2)), rel=0.5)  # weights moved since
    assert set(trial.tensor_names(collection="outputs")) == {"labels", "predictions"}


def test_default_config_saves_losses_and_metrics_every_500_steps(tmp_path):
    x, y = dataset(n=512)
    model = mlp()
    out = str(tmp_path / "run")
    hook = st.KerasHook(out)
    model.fit(x, y, batch_size=1, epochs=2, verbose=0, callbacks=[hook])
    hook.close()
    trial = create_trial(out)
    # every 500 steps, and each epoch's logs at its last step whatever the save configuration
    # (smdebug's Keras hook force-saves them): steps 511 and 1023, "batch" the epoch's index there
    assert trial.steps() == [0, 500, 511, 1000, 1023]
    assert set(trial.tensor_names()) == {"loss", "mae", "batch"}
    assert [trial.tensor("batch").value(s)[0] for s in (0, 500, 511, 1000, 1023)] == [0, 500, 0, 488, 1]
    assert trial.tensor("loss").steps() == [0, 500, 511, 1000, 1023]


def test_epoch_logs_are_saved_at_the_epochs_end_whatever_the_save_config(tmp_path):
    # smdebug's Keras hook force-saves each epoch's logs into the current step at the epoch's end
    # (after the validation run: its last EVAL step), "batch" being the epoch's index; where the
    # step saved the same names, the epoch's values are read back (smdebug's file has both)
    x, y = dataset(n=40)
    model = mlp()
    out = str(tmp_path / "run")
    hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=3), include_collections=["weights"])
    hist = model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0, callbacks=[hook],
                     validation_data=(x[:16], y[:16]))
    hook.close()
    trial = create_trial(out)
    # per epoch: 5 train batches then 2 validation batches; due: TRAIN 0, 3, 8, 11 and EVAL 5, 13
    assert trial.steps() == [0, 3, 5, 6, 8, 11, 13]
    assert trial.mode(6) == st.modes.EVAL and trial.mode(13) == st.modes.EVAL
    assert trial.tensor_names(step=6) == ["batch", "loss", "mae", "val_loss", "val_mae"]
    assert "sequential/dense/kernel" in trial.tensor_names(step=13)
    for epoch, step in enumerate((6, 13)):
        assert trial.tensor("batch").value(step).tolist() == [epoch]
        for key in ("loss", "mae", "val_loss", "val_mae"):
            assert trial.tensor(key).value(step)[0] == pytest.approx(hist.history[key][epoch], rel=1e-6)
    assert trial.tensor_names(collection="losses") == ["loss", "val_loss"]
    # the epoch's forced save does not carry over to the next step
    assert trial.tensor("loss").steps() == [0, 3, 5, 6, 8, 11, 13]


def test_save_interval_and_collection_config(tmp_path):
    x, y = dataset()
    model = mlp()
    out = str(tmp_path / "run")
    hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=3),
                        include_collections=["weights", "gradients"])
    hook.get_collection("gradients").save_config = st.SaveConfig(save_steps=[1])
    model.fit(x, y, batch_size=8, epochs=1, verbose=0, callbacks=[hook])
    hook.close()
    trial = create_trial(out)
    assert trial.steps() == [0, 1, 3, 6, 7]  # 7: the epoch's logs (its last step)
    assert trial.tensor("sequential/dense/kernel").steps() == [0, 3, 6]
    assert trial.tensor_names(step=7) == ["batch", "loss", "mae"]
    # gradients every 500 from 0 (the collection's own config) plus step 1
    assert trial.tensor("gradients/sequential/dense/kernelGrad").steps() == [0, 1]


def test_layers_and_custom_layer_collection(tmp_path):
    x, y = dataset()
    model = mlp()
    out = str(tmp_path / "run")
    hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=1), include_collections=["first"])
    hook.get_collection("first").add_keras_layer(model.layers[0], inputs=True)
    rec = Recorder()
    model.fit(x, y, batch_size=32, epochs=1, shuffle=False, verbose=0, callbacks=[hook, rec])
    hook.close()
    trial = create_trial(out)
    assert set(trial.tensor_names(collection="first")) == {"dense/inputs", "dense/outputs"}
    assert "dense_1/outputs" not in trial.tensor_names()
    kernel, bias = rec.before[1][0], rec.before[1][1]
    np.testing.assert_array_equal(trial.tensor("dense/inputs").value(1), x[32:])
    np.testing.assert_allclose(trial.tensor("dense/outputs").value(1),
                               np.maximum(x[32:] @ kernel + bias, 0), rtol=1e-5, atol=1e-6)


def test_all_layers_with_the_layers_collection(tmp_path):
    x, y = dataset()
    model = mlp()
    out = str(tmp_path / "run")
    hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=1), include_collections=["layers"])
    model.fit(x, y, batch_size=64, epochs=1, verbose=0, callbacks=[hook])
    hook.close()
    trial = create_trial(out)
    assert set(trial.tensor_names(collection="layers")) == {
        "dense/inputs", "dense/outputs", "dense_1/inputs", "dense_1/outputs"}


def test_custom_collection_regex_saves_layers_weights_and_gradients(tmp_path):
    # smdebug's test_include_regex (as it passes where smdebug can capture: TF 2.2-2.5): a
    # collection of the script's own, its pattern added after the hook was made, saves every
    # tensor the pattern names: the layer's inputs and outputs, its weights and their gradients
    x, y = dataset()
    model = mlp()
    out = str(tmp_path / "run")
    hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=1), include_collections=["custom"])
    hook.get_collection("custom").include("dense_1")
    model.fit(x, y, batch_size=32, epochs=1, shuffle=False, verbose=0, callbacks=[hook])
    hook.close()
    trial = create_trial(out)
    assert set(trial.tensor_names(collection="custom")) == {
        "dense_1/inputs", "dense_1/outputs", "sequential/dense_1/kernel", "sequential/dense_1/bias",
        "gradients/sequential/dense_1/kernelGrad", "gradients/sequential/dense_1/biasGrad"}
    assert "dense/outputs" not in trial.tensor_names()
    for name in trial.tensor_names(collection="custom"):
        assert trial.tensor(name).steps() == [0, 1], name


def test_the_real_smdebug_reads_the_trial(tmp_path, read_with_smdebug):
    x, y = dataset()
    model = mlp()
    out = str(tmp_path / "run")
    hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=2),
                        include_collections=["weights", "biases", "gradients", "outputs"])
    rec = Recorder()
    model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0, callbacks=[hook, rec],
              validation_data=(x[:16], y[:16]))
    hook.close()
    doc = read_with_smdebug(out)
    assert doc["steps"] == [0, 2, 4]
    assert doc["modes"]["TRAIN"] == [0, 2] and doc["modes"]["EVAL"] == [0]
    t = doc["tensors"]
    np.testing.assert_array_equal(np.array(t["sequential/dense/kernel"]["2"], dtype=np.float32), rec.after[2][0])
    assert "gradients/sequential/dense/kernelGrad" in doc["collections"]["gradients"]
    assert "sequential/dense_1/bias" in doc["collections"]["biases"]
    assert "loss" in doc["collections"]["losses"] and "mae" in doc["collections"]["metrics"]
    assert set(doc["collections"]["outputs"]) == {"labels", "predictions"}


def test_vanishing_gradient_fires_on_a_saturated_net_only(tmp_path):
    x, y = dataset(n=128)
    runs = {}
    for kind in ("healthy", "saturated"):
        if kind == "healthy":
            model = mlp()
        else:
            # huge weights drive every sigmoid into saturation: its gradient vanishes
            keras.utils.set_random_seed(0)
            model = keras.Sequential([keras.Input((4,)),
                                      keras.layers.Dense(16, activation="sigmoid",
                                                         kernel_initializer=keras.initializers.Constant(400.0)),
                                      keras.layers.Dense(16, activation="sigmoid",
                                                         kernel_initializer=keras.initializers.Constant(400.0)),
                                      keras.layers.Dense(1)])
            model.compile(optimizer=keras.optimizers.SGD(LR), loss="mse")
        out = str(tmp_path / kind)
        hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=2), include_collections=["gradients"])
        model.fit(x, y, batch_size=16, epochs=2, verbose=0, callbacks=[hook])
        hook.close()
        runs[kind] = run_rule(out, "VanishingGradient") + (model,)
    assert runs["healthy"][0] == 0
    status, lines, model = runs["saturated"]
    assert status == 6
    first_kernel = f"gradients/{model.layers[0].kernel.path}Grad"
    assert any(line.get("tensor") == first_kernel for line in lines), lines


def test_zero_script_change_from_json(tmp_path, monkeypatch):
    cfg = tmp_path / "hook.json"
    out = tmp_path / "run"
    cfg.write_text(json.dumps({
        "LocalPath": str(out),
        "HookParameters": {"save_interval": "2"},
        "CollectionConfigurations": [{"CollectionName": "gradients"}]}))
    monkeypatch.setenv("SMDEBUG_CONFIG_FILE_PATH", str(cfg))
    x, y = dataset()
    model = mlp()
    hook = st.KerasHook.create_from_json_file()
    model.fit(x, y, batch_size=16, epochs=1, verbose=0, callbacks=[hook])
    hook.close()
    trial = create_trial(str(out))
    assert trial.steps() == [0, 2, 3]  # 3: the epoch's logs
    assert set(trial.tensor_names()) == {"loss", "mae", "batch"} | {f"gradients/{n}Grad" for n in names(model)}
    assert trial.tensor_names(step=3) == ["batch", "loss", "mae"]


def test_optimizer_variables_are_the_optimizers_own_not_its_per_weight_state(tmp_path):
    x, y = dataset()
    model = mlp()
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    out = str(tmp_path / "run")
    hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=1),
                        include_collections=["optimizer_variables", "biases"])
    model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0, callbacks=[hook])
    hook.close()
    paths = [v.path for v in model.optimizer.variables]
    assert any("momentum" in p for p in paths) and any("velocity" in p for p in paths)
    trial = create_trial(out)
    # as smdebug's optimizer_variables: iteration and learning rate, not Adam's momentums and
    # velocities (which also match the biases collection's pattern)
    assert set(trial.tensor_names(collection="optimizer_variables")) == {"adam/iteration", "adam/learning_rate"}
    assert set(trial.tensor_names(collection="biases")) == {"sequential/dense/bias", "sequential/dense_1/bias"}
    assert trial.tensor("adam/iteration").value(3) == 4


def test_custom_collection_regex_saves_optimizer_variables(tmp_path):
    # smdebug's test_include_only_custom_collection: a collection of its own that matches the
    # optimizer's variables by name saves them, optimizer_variables not being included
    x, y = dataset()
    model = mlp()
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    out = str(tmp_path / "run")
    hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=2), include_collections=["custom_opt"])
    hook.get_collection("custom_opt").include("^adam/")
    model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0, callbacks=[hook])
    hook.close()
    trial = create_trial(out)
    assert set(trial.tensor_names(collection="custom_opt")) == {"adam/iteration", "adam/learning_rate"}
    assert trial.steps() == [0, 2, 3]  # 3: the epoch's logs
    assert trial.tensor("adam/iteration").steps() == [0, 2]
    assert [trial.tensor("adam/iteration").value(s) for s in (0, 2)] == [1, 3]


def test_gradient_tape_loop(tmp_path):
    x, y = dataset()
    model = mlp()
    opt = keras.optimizers.SGD(LR)
    out = str(tmp_path / "run")
    hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=1),
                        include_collections=["weights", "biases", "gradients"])
    hook.set_mode(st.modes.TRAIN)
    expect = []
    for step in range(3):
        xb, yb = x[step * 16:(step + 1) * 16], y[step * 16:(step + 1) * 16]
        with hook.wrap_tape(tf.GradientTape()) as tape:
            loss = tf.reduce_mean(tf.square(model(xb, training=True) - yb))
        weights = [w.numpy().copy() for w in model.trainable_weights]
        grads = tape.gradient(loss, model.trainable_weights)
        expect.append((float(loss), weights, [g.numpy() for g in grads]))
        opt.apply_gradients(zip(grads, model.trainable_weights))
    hook.close()
    trial = create_trial(out)
    assert trial.steps(mode=st.modes.TRAIN) == [0, 1, 2]
    assert set(trial.tensor_names(collection="weights")) == {
        "sequential/dense/kernel", "sequential/dense_1/kernel"}
    assert set(trial.tensor_names(collection="biases")) == {
        "sequential/dense/bias", "sequential/dense_1/bias"}
    for step, (loss, weights, grads) in enumerate(expect):
        assert trial.tensor("loss").value(step)[0] == pytest.approx(loss, rel=1e-6)
        for name, w, g in zip(names(model), weights, grads):
            np.testing.assert_array_equal(trial.tensor(name).value(step), w)
            np.testing.assert_array_equal(trial.tensor(f"gradients/{name}Grad").value(step), g)


def test_bad_input_gets_clear_errors(tmp_path):
    x, y = dataset()
    model = mlp()
    hook = st.KerasHook(str(tmp_path / "run"))
    with pytest.raises(RuntimeError, match="registered twice"):
        model.fit(x, y, batch_size=16, epochs=1, verbose=0, callbacks=[hook, hook])
    with pytest.raises(TypeError, match="wrap_optimizer takes a Keras optimizer, not str"):
        hook.wrap_optimizer("sgd")
    with pytest.raises(TypeError, match="wrap_tape takes a tf.GradientTape, not list"):
        hook.wrap_tape([])
    with pytest.raises(TypeError, match="add_keras_layer takes a Keras layer, not int"):
        hook.get_collection("custom").add_keras_layer(3)
    with pytest.raises(TypeError, match="add takes a tf.Variable or Keras variable, not float"):
        hook.get_collection("custom").add(1.5)
    tape = hook.wrap_tape(tf.GradientTape())
    with tape:
        w = tf.Variable(1.0)
    with pytest.raises(TypeError, match="the loss must be a tf.Tensor, not float"):
        tape.gradient(3.0, [w])

    @tf.function
    def step():
        with hook.wrap_tape(tf.GradientTape()):
            pass
    with pytest.raises(RuntimeError, match="inside a tf.function"):
        step()
    other = st.KerasHook(str(tmp_path / "other"))
    with pytest.raises(ValueError, match="already wrapped by another smd hook"):
        other.wrap_optimizer(model.optimizer)
    with pytest.raises(TypeError, match="KerasHook needs out_dir"):
        st.KerasHook()
    with pytest.raises(NotImplementedError, match="no tf.estimator .removed in TensorFlow 2.16"):
        st.EstimatorHook(str(tmp_path / "est"))
    hook.close()
    other.close()


def test_model_without_weights_saves_losses_only(tmp_path):
    x, y = dataset()
    model = keras.Sequential([keras.Input((4,)), keras.layers.Lambda(lambda t: tf.reduce_sum(t, axis=1, keepdims=True))])
    model.compile(loss="mse")
    out = str(tmp_path / "run")
    hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=1), include_collections=["weights", "gradients"])
    model.evaluate(x, y, batch_size=32, verbose=0, callbacks=[hook])
    hook.close()
    trial = create_trial(out)
    assert trial.tensor_names() == ["batch", "loss"]
    assert trial.steps(mode=st.modes.EVAL) == [0, 1]


def _xla_mlp(jit_compile):
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="tanh"),
                              keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(LR), loss="mse", jit_compile=jit_compile)
    return model


def test_xla_step_saves_what_the_step_without_xla_saves(tmp_path):
    # XLA (jit_compile=True, Keras 3's default on a GPU) cannot run Python in the train step: the
    # gradients, layer inputs/outputs and the model's inputs, labels and predictions leave it
    # through variables of the hook. Static shapes (drop_remainder=True): everything is saved,
    # equal to what the same training without XLA saves.
    x, y = dataset()
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(16, drop_remainder=True)
    trials = {}
    for jit in (False, True):
        keras.backend.clear_session()
        model = _xla_mlp(jit)
        out = str(tmp_path / f"jit{jit}")
        hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=2),
                            include_collections=["weights", "gradients", "layers", "inputs", "outputs"])
        rec = Recorder()
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # nothing left unsaved
            model.fit(ds, epochs=2, verbose=0, callbacks=[hook, rec], validation_data=ds.take(1))
        hook.close()
        trials[jit] = create_trial(out)
        # the weights after batch 6 are those saved at step 6 (global: 4 train + 1 eval batches)
        np.testing.assert_array_equal(trials[jit].tensor(model.layers[0].kernel.path).value(7),
                                      rec.after[6][0])
    plain, xla = trials[False], trials[True]
    assert xla.steps() == plain.steps()
    assert sorted(xla.tensor_names()) == sorted(plain.tensor_names())
    for coll, count in (("gradients", 4), ("layers", 4), ("inputs", 1), ("outputs", 2)):
        assert len(xla.tensor_names(collection=coll)) == count, coll
    compared = 0
    for name in plain.tensor_names():
        for mode in (st.modes.TRAIN, st.modes.EVAL):
            steps = plain.tensor(name).steps(mode=mode)
            assert xla.tensor(name).steps(mode=mode) == steps, (name, mode)
            for s in steps:
                a = plain.tensor(name).value(s, mode=mode)
                b = xla.tensor(name).value(s, mode=mode)
                assert a.shape == b.shape and a.dtype == b.dtype, name
                np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6, err_msg=f"{name} {mode} {s}")
                compared += 1
    assert compared >= 60, compared


def test_xla_gradient_values_first_due_later_have_the_step_traced_again(tmp_path):
    # gradients reduced in the step every step (no variable holds them, no copy of them is kept)
    # and their values due at steps 3 and 5 only: at step 3 Keras is made to trace the step
    # again, with variables for them; the values equal those of the same training without XLA
    x, y = dataset()
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(16, drop_remainder=True)
    trials, holders = {}, {}
    for jit in (False, True):
        keras.backend.clear_session()
        model = _xla_mlp(jit)
        out = str(tmp_path / f"jit{jit}")
        hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=1),
                            include_collections=["gradients", "raw"])
        hook.get_collection("gradients").reduction_config = st.ReductionConfig(reductions=["max"],
                                                                               norms=["l2"])
        raw = hook.get_collection("raw")
        raw.include("^gradients/")
        raw.save_config = st.SaveConfig(save_steps=[3, 5], start_step=100)  # only 3 and 5

        class Watch(keras.callbacks.Callback):
            def on_train_batch_end(self, batch, logs=None):
                holders.setdefault(jit, []).append(
                    sum(g.names[0].startswith("gradients/") for g in hook._xla_groups.values()))

        model.fit(ds, epochs=2, verbose=0, callbacks=[hook, Watch()])
        hook.close()
        trials[jit] = create_trial(out)
    assert holders[True] == [0, 0, 0, 1, 1, 1, 1, 1]  # the variables from step 3 on
    plain, xla = trials[False], trials[True]
    names = xla.tensor_names(collection="gradients")
    assert len(names) == 4
    for name in names:
        for step in range(8):
            assert set(xla.tensor(name).reduction_values(step)) == {("max", False), ("l2", False)}
        for trial in (plain, xla):
            with_values = []
            for step in range(8):
                try:
                    trial.tensor(name).value(step)
                    with_values.append(step)
                except TensorUnavailableForStep:
                    pass
            assert with_values == [3, 5], (name, with_values)
        for step in (3, 5):
            np.testing.assert_allclose(xla.tensor(name).value(step), plain.tensor(name).value(step),
                                       rtol=1e-5, atol=1e-6, err_msg=f"{name} {step}")


def test_xla_tensors_of_unknown_shape_warn_and_another_batchs_values_are_not_saved(tmp_path):
    # 70 samples in batches of 16: the train step is compiled for a batch of unknown size, whose
    # layer outputs and model inputs XLA cannot hand out (named in a warning); the gradients
    # (the variables' shapes) are saved at every due step. The validation data (2 full batches)
    # gives the test step static shapes: its layers are saved at its due steps, and evaluate()
    # of 70 samples (unknown shapes again) saves none, not the validation's values left in the
    # variables either.
    x, y = dataset(70)
    model = _xla_mlp(True)
    out = str(tmp_path / "run")
    hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=1),
                        include_collections=["gradients", "layers"])
    with pytest.warns(RuntimeWarning, match=r"compiled by XLA.*: dense/inputs, dense/outputs not saved"):
        model.fit(x, y, batch_size=16, epochs=1, verbose=0, callbacks=[hook],
                  validation_data=(x[:32], y[:32]))
        model.evaluate(x, y, batch_size=16, verbose=0, callbacks=[hook])
    hook.close()
    trial = create_trial(out)
    assert trial.steps(mode=st.modes.TRAIN) == [0, 1, 2, 3, 4]
    assert trial.steps(mode=st.modes.EVAL) == list(range(7))
    for name in trial.tensor_names(collection="gradients"):
        assert trial.tensor(name).steps(mode=st.modes.TRAIN) == [0, 1, 2, 3, 4], name
    layers = trial.tensor_names(collection="layers")
    assert sorted(layers) == ["dense/inputs", "dense/outputs", "dense_1/inputs", "dense_1/outputs"]
    for name in layers:
        assert trial.tensor(name).steps(mode=st.modes.TRAIN) == [], name
        assert trial.tensor(name).steps(mode=st.modes.EVAL) == [0, 1], name
    np.testing.assert_allclose(trial.tensor("dense/inputs").value(1, mode=st.modes.EVAL), x[16:32])


@pytest.mark.parametrize("how", ["graph", "xla", "eager"])
def test_steps_per_execution_saves_the_last_inner_steps_tensors_once(tmp_path, how):
    # with steps_per_execution=4 Keras runs 4 train steps per call of its train function and calls
    # the callbacks once: one hook step, whose gradients and layer outputs are the last inner
    # step's (batch 3, 7), saved once, as the same training one step per call saves at its steps 3, 7
    x, y = dataset(128)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(16, drop_remainder=True)
    trials = {}
    for spe in (1, 4):
        keras.backend.clear_session()
        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="tanh"),
                                  keras.layers.Dense(1)])
        model.compile(optimizer=keras.optimizers.SGD(LR), loss="mse", steps_per_execution=spe,
                      jit_compile=how == "xla", run_eagerly=how == "eager")
        out = str(tmp_path / f"spe{spe}")
        hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=1),
                            include_collections=["gradients", "layers"])
        model.fit(ds, epochs=1, verbose=0, callbacks=[hook])
        hook.close()
        trials[spe] = create_trial(out)
    one, four = trials[1], trials[4]
    assert four.steps() == [0, 1] and one.steps() == list(range(8))
    names = four.tensor_names(collection="gradients") + four.tensor_names(collection="layers")
    assert len(names) == 8
    index = json.load(open(str(tmp_path / "spe4" / "index" / "000000000" / "000000000000_worker_0.json")))
    saved = [e["tensorname"] for e in index["tensor_payload"]]
    for name in names:
        assert saved.count(name) == 1, (name, saved.count(name))
        for step, inner in ((0, 3), (1, 7)):
            np.testing.assert_allclose(four.tensor(name).value(step), one.tensor(name).value(inner),
                                       rtol=1e-5, atol=1e-6, err_msg=f"{name} {step}")


MIRRORED = r"""
import json, sys
from collections import Counter
import numpy as np
import tensorflow as tf
import smd.tensorflow as st
from smd.exceptions import TensorUnavailableForStep
from smd.trials import create_trial
keras = tf.keras
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
x = np.random.default_rng(0).normal(size=(64, 4)).astype("float32")
y = x.sum(1, keepdims=True)
with tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]).scope():
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
hook = st.KerasHook(OUT, save_config=st.SaveConfig(save_interval=1),
                    include_collections=["gradients", "layers"])
model.fit(x, y, batch_size=16, epochs=1, verbose=0, shuffle=False, callbacks=[hook])
hook.close()
trial = create_trial(OUT)
index = json.load(open(OUT + "/index/000000000/000000000001_worker_0.json"))
print(json.dumps({"records": Counter(e["tensorname"] for e in index["tensor_payload"]),
                  "steps": trial.steps(),
                  "replica0_inputs": [bool(np.array_equal(trial.tensor("dense/inputs").value(s),
                                                          x[16 * s:16 * s + 8])) for s in range(4)]}))
"""


def test_mirrored_strategy_saves_the_first_replicas_tensors_once(tmp_path):
    # two replicas (two logical CPUs) each run the train step on half of the batch: the tensors
    # captured in the step are the first replica's (smdebug's include_workers="one"), once a step
    out = str(tmp_path / "run")
    info = run_script(MIRRORED.replace("OUT", repr(out)))
    assert info["steps"] == [0, 1, 2, 3]
    assert len(info["records"]) == 10 and set(info["records"].values()) == {1}, info["records"]
    assert info["replica0_inputs"] == [True] * 4


def test_second_hook_on_a_wrapped_optimizer_warns(tmp_path):
    x, y = dataset()
    model = mlp()
    first = st.KerasHook(str(tmp_path / "first"), include_collections=["gradients"])
    model.fit(x, y, batch_size=32, epochs=1, verbose=0, callbacks=[first])
    first.close()
    second = st.KerasHook(str(tmp_path / "second"), include_collections=["gradients"])
    with pytest.warns(RuntimeWarning, match="wrapped by another smd hook"):
        model.fit(x, y, batch_size=32, epochs=1, verbose=0, callbacks=[second])
    second.close()
    # a recompiled model's new optimizer is wrapped by the hook it trains with
    model.compile(optimizer=keras.optimizers.SGD(LR), loss="mse")
    third = st.KerasHook(str(tmp_path / "third"), save_config=st.SaveConfig(save_interval=1),
                         include_collections=["gradients"])
    model.fit(x, y, batch_size=32, epochs=1, verbose=0, callbacks=[third])
    third.close()
    assert len(create_trial(str(tmp_path / "third")).tensor_names(collection="gradients")) == 4


def test_fit_after_an_interrupted_fit(tmp_path):
    x, y = dataset()
    model = mlp()

    class Boom(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            raise KeyError("boom")

    out = str(tmp_path / "run")
    hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=1))
    with pytest.raises(KeyError, match="boom"):
        model.fit(x, y, batch_size=32, epochs=1, verbose=0, callbacks=[Boom(), hook])
    model.fit(x, y, batch_size=32, epochs=1, verbose=0, callbacks=[hook])
    hook.close()
    assert create_trial(out).steps() == [1, 2]  # step 0 was interrupted before its end


def test_model_save_and_pickle_while_hooked(tmp_path):
    """model.save (.keras), load_model, pickle and deepcopy work with the hook registered (it wraps
    the optimizer and layer calls): same predictions, and the hook goes on saving."""
    import copy
    import pickle
    x, y = dataset()
    model = mlp()
    hook = st.KerasHook(str(tmp_path / "run"), save_config=st.SaveConfig(save_interval=1),
                        include_collections=["weights", "gradients", "layers"])
    model.fit(x, y, batch_size=16, epochs=1, verbose=0, callbacks=[hook])
    model.save(tmp_path / "model.keras")
    loaded = keras.models.load_model(tmp_path / "model.keras")
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(model)).predict(x, verbose=0),
                                  model.predict(x, verbose=0))
    copy.deepcopy(model)
    model.fit(x, y, batch_size=16, epochs=1, verbose=0, callbacks=[hook])
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert trial.steps(mode=st.modes.TRAIN) == list(range(8))
    assert len(trial.tensor_names(collection="gradients")) == 4


def test_register_model_before_fit(tmp_path):
    """smdebug's register_model: the layers of a model registered before compile and fit."""
    x, y = dataset()
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"),
                              keras.layers.Dense(1)])
    hook = st.KerasHook(str(tmp_path / "run"), save_config=st.SaveConfig(save_interval=1),
                        include_collections=["layers", "gradients"])
    hook.register_model(model)
    model.compile(optimizer=keras.optimizers.SGD(LR), loss="mse", run_eagerly=True)
    model.fit(x, y, batch_size=16, epochs=1, verbose=0, callbacks=[hook])
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert set(trial.tensor_names(collection="layers")) == {
        "dense/inputs", "dense/outputs", "dense_1/inputs", "dense_1/outputs"}
    assert len(trial.tensor_names(collection="gradients")) == 4
    with pytest.raises(TypeError, match="register_model takes a Keras model"):
        hook.register_model("model")


def test_module_functions_smdebug_exports(tmp_path, monkeypatch):
    # smdebug.tensorflow's names (smdebug 1.0.34's smdebug/tensorflow/__init__.py)
    for name in ("KerasHook", "SessionHook", "EstimatorHook", "SaveConfig", "SaveConfigMode",
                 "ReductionConfig", "modes", "CollectionKeys", "create_trial", "Collection",
                 "get_hook", "set_hook", "del_hook"):
        assert hasattr(st, name), name
    assert st.create_trial is create_trial
    monkeypatch.setenv("SMDEBUG_CONFIG_FILE_PATH", str(tmp_path / "missing.json"))
    st.del_hook()
    assert st.get_hook() is None
    assert st.get_hook("keras", create_if_not_exists=True) is None  # no JSON configuration
    hook = st.KerasHook(str(tmp_path / "run"))
    assert st.get_hook() is hook and st.get_hook("keras") is hook
    assert st.get_hook("session") is None  # smdebug: a hook of another kind is not returned
    st.del_hook()
    assert st.get_hook() is None
    st.set_hook(hook)
    assert st.get_hook("keras") is hook
    with pytest.raises(ValueError, match="hook_type"):
        st.get_hook("kears")
    st.del_hook()
    # a custom collection built with smdebug's Collection constructor
    coll = st.Collection("custom", include_regex=["^dense"])
    hook.add_collection(coll)
    assert hook.get_collection("custom").include_regex == ["^dense"]
    hook.close()


def _save_counter(hook):
    """Counts hook.save_tensor calls by (step, name)."""
    calls = {}
    real = hook.save_tensor

    def counting(name, value, *args, **kwargs):
        calls[(hook.step, name)] = calls.get((hook.step, name), 0) + 1
        return real(name, value, *args, **kwargs)
    hook.save_tensor = counting
    return calls


@pytest.mark.parametrize("jit", [False, True], ids=["graph", "xla"])
def test_mixed_precision_gradients_are_saved_unscaled(tmp_path, jit):
    # Keras 3's LossScaleOptimizer is handed the gradients of the loss times its scale (32768 at
    # first); the hook saves them as the optimizer applies them, close to the float32 run's
    x, y = dataset()
    grads = {}
    try:
        for policy in ("float32", "mixed_float16"):
            keras.backend.clear_session()
            keras.utils.set_random_seed(0)
            keras.mixed_precision.set_global_policy(policy)
            model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3),
                                      keras.layers.Dense(1, dtype="float32")])
            model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse", jit_compile=jit)
            out = str(tmp_path / policy)
            hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=1),
                                include_collections=["gradients"])
            model.fit(x, y, batch_size=16, epochs=1, verbose=0, shuffle=False, callbacks=[hook])
            hook.close()
            if policy == "mixed_float16":
                assert type(model.optimizer).__name__ == "LossScaleOptimizer"
            grads[policy] = create_trial(out).tensor("gradients/sequential/dense/biasGrad").value(0)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    np.testing.assert_allclose(grads["mixed_float16"], grads["float32"], rtol=1e-2, atol=1e-4)


def test_sparse_inputs_are_skipped_with_a_warning_and_training_goes_on(tmp_path):
    # a SparseTensor input has no dense value to hand out: fit works as without the hook, the
    # layers' dense tensors are saved, the sparse input is named in a warning
    x, y = dataset()
    ds = tf.data.Dataset.from_tensor_slices((tf.sparse.from_dense(tf.constant(x)), y)).batch(16)
    model = keras.Sequential([keras.Input((4,), sparse=True), keras.layers.Dense(3), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(LR), loss="mse")
    hook = st.KerasHook(str(tmp_path / "run"), save_config=st.SaveConfig(save_interval=1),
                        include_collections=["layers", "inputs"])
    with pytest.warns(RuntimeWarning, match="SparseTensor"):
        model.fit(ds, epochs=1, verbose=0, callbacks=[hook])
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert trial.tensor("dense_1/inputs").steps() == [0, 1, 2, 3]
    assert "dense/inputs" not in trial.tensor_names() and "inputs" not in trial.tensor_names()


@pytest.mark.parametrize("jit", [False, True], ids=["graph", "xla"])
def test_a_callbacks_predict_inside_a_train_batch_is_not_saved_as_that_batch(tmp_path, jit):
    # a callback before the hook runs model.predict in on_train_batch_end: the batch's layer
    # tensors are the training batch's, once
    x, y = dataset()
    model = mlp()
    model.compile(optimizer=keras.optimizers.SGD(LR), loss="mse", jit_compile=jit)
    probe = np.full((16, 4), 7.0, "float32")

    class Probe(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            self.model.predict(probe, verbose=0)
    out = str(tmp_path / "run")
    hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=1), include_collections=["layers"])
    calls = _save_counter(hook)
    model.fit(x, y, batch_size=16, epochs=1, verbose=0, shuffle=False, callbacks=[Probe(), hook])
    hook.close()
    layer_saves = {k: v for k, v in calls.items() if "/" in k[1]}  # (epoch logs: at the epoch's end too)
    assert len(layer_saves) == 4 * 4 and all(v == 1 for v in layer_saves.values()), layer_saves
    trial = create_trial(out)
    for step in range(4):
        np.testing.assert_array_equal(trial.tensor("dense/inputs").value(step), x[16 * step:16 * step + 16])


@pytest.mark.parametrize("jit", [False, True], ids=["graph", "xla"])
def test_a_layer_called_twice_in_a_step_saves_its_first_call_once(tmp_path, jit):
    x, y = dataset()
    keras.utils.set_random_seed(0)
    shared = keras.layers.Dense(4, name="shared")
    a, b = keras.Input((4,)), keras.Input((4,))
    model = keras.Model([a, b], keras.layers.Dense(1, name="head")(
        keras.layers.Concatenate()([shared(a), shared(b)])))
    model.compile(optimizer=keras.optimizers.SGD(LR), loss="mse", jit_compile=jit)
    out = str(tmp_path / "run")
    hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=1), include_collections=["layers"])
    calls = _save_counter(hook)
    model.fit([x, 2 * x], y, batch_size=16, epochs=1, verbose=0, shuffle=False, callbacks=[hook])
    hook.close()
    layer_saves = {k: v for k, v in calls.items() if "/" in k[1]}  # (epoch logs: at the epoch's end too)
    assert calls[(0, "shared/inputs")] == 1 and all(v == 1 for v in layer_saves.values()), layer_saves
    np.testing.assert_array_equal(create_trial(out).tensor("shared/inputs").value(0), x[:16])


@pytest.mark.parametrize("how", ["graph", "xla", "eager"])
def test_an_embeddings_sparse_gradient_is_saved_dense(tmp_path, how):
    # an Embedding's gradient reaches the optimizer as IndexedSlices: saved as its dense value
    # (rows of the ids not in the batch are zeros), made dense only in a step that saves it
    rng = np.random.default_rng(0)
    x = rng.integers(0, 50, size=(32, 3)).astype("int32")
    y = rng.normal(size=(32, 1)).astype("float32")
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((3,), dtype="int32"), keras.layers.Embedding(50, 4),
                              keras.layers.Flatten(), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(LR), loss="mse", jit_compile=how == "xla",
                  run_eagerly=how == "eager")
    out = str(tmp_path / "run")
    hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=1),
                        include_collections=["gradients", "weights"])
    model.fit(x, y, batch_size=16, epochs=1, verbose=0, shuffle=False, callbacks=[hook])
    hook.close()
    trial = create_trial(out)
    name = [n for n in trial.tensor_names() if n.startswith("gradients/") and "embeddings" in n][0]
    w = [n for n in trial.tensor_names() if not n.startswith("gradients/") and "embeddings" in n][0]
    for step in (0, 1):
        g = trial.tensor(name).value(step)
        assert g.shape == (50, 4)
        untouched = sorted(set(range(50)) - set(x[16 * step:16 * step + 16].reshape(-1).tolist()))
        assert untouched and not g[untouched].any() and g.any()
        # the update SGD made from it: weights after step - before = -LR * gradient
        before = trial.tensor(w).value(step - 1) if step else None
        if before is not None:
            np.testing.assert_allclose(trial.tensor(w).value(step) - before, -LR * g, rtol=1e-5, atol=1e-7)


def test_a_model_hooked_by_one_hook_then_another_keeps_one_guard_each(tmp_path):
    # each hook wraps the model's step functions once; fits and train_on_batch calls (which make
    # the train function again) must not wrap them again (the chain grew to a RecursionError)
    x, y = dataset()
    model = mlp()
    first = st.KerasHook(str(tmp_path / "a"), save_config=st.SaveConfig(save_interval=1))
    model.fit(x, y, batch_size=16, epochs=1, verbose=0, callbacks=[first])
    first.close()
    second = st.KerasHook(str(tmp_path / "b"), save_config=st.SaveConfig(save_interval=1))
    for _ in range(4):
        model.fit(x, y, batch_size=16, epochs=1, verbose=0, callbacks=[second])
    for _ in range(3):
        model.train_on_batch(x[:16], y[:16])
    second.close()
    depth, fn = 0, model.train_function
    while getattr(fn, "_smd_hook", None) is not None:
        depth, fn = depth + 1, fn._smd_inner
    assert depth == 2
    assert create_trial(str(tmp_path / "b")).tensor("loss").steps()[-1] == 4 * 4 - 1
