"""KerasHook with Keras 2 (tf_keras, TF_USE_LEGACY_KERAS=1), in a fresh interpreter because the
Keras of tf.keras is chosen when TensorFlow is first imported. The training script writes the
trial and what TensorFlow computed (npz); the test compares them."""
import numpy as np
import pytest

import smd.tensorflow as st
from smd.trials import create_trial

from conftest import run_script

SCRIPT = r"""
import json, sys
import numpy as np
import tensorflow as tf
import smd.tensorflow as st
keras = tf.keras
assert keras.__name__.startswith("tf_keras") or "_v2" in keras.__name__, keras.__name__
out, npz = sys.argv[1:] if len(sys.argv) > 2 else (OUT, NPZ)
rng = np.random.default_rng(0)
x = rng.normal(size=(64, 4)).astype("float32")
y = (x @ np.array([[1.0], [-2.0], [0.5], [0.0]], dtype="float32")).astype("float32")
keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)])
model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse", metrics=["mae"], jit_compile=JIT)
hook = st.KerasHook(out, save_config=st.SaveConfig(save_interval=1),
                    include_collections=["weights", "biases", "gradients", "optimizer_variables", "outputs"])
before, after = [], []
class Rec(keras.callbacks.Callback):
    def on_train_batch_begin(self, b, logs=None): before.append([w.numpy().copy() for w in self.model.weights])
    def on_train_batch_end(self, b, logs=None): after.append([w.numpy().copy() for w in self.model.weights])
hist = model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0, callbacks=[hook, Rec()],
                 validation_data=(x[:16], y[:16]))
pred = model.predict(x, batch_size=64, verbose=0, callbacks=[hook])
hook.close()
grads = []
for step in range(4):
    probe = keras.models.clone_model(model)
    probe.set_weights(before[step])
    xb, yb = x[step * 16:(step + 1) * 16], y[step * 16:(step + 1) * 16]
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(probe(xb, training=True) - yb))
    grads.append([g.numpy() for g in tape.gradient(loss, probe.trainable_weights)])
arrays = {"pred": pred, "loss0": np.array(hist.history["loss"])}
for s in range(4):
    for i, w in enumerate(after[s]):
        arrays[f"after_{s}_{i}"] = w
    for i, g in enumerate(grads[s]):
        arrays[f"grad_{s}_{i}"] = g
np.savez(npz, **arrays)
print(json.dumps({"names": [w.name for w in model.weights], "keras": keras.__name__}))
"""


@pytest.mark.parametrize("jit", [False, True])
def test_keras2_fit_and_predict(tmp_path, jit):
    # jit: the steps compiled by XLA, whose tensors leave through the hook's variables
    out, npz = str(tmp_path / "run"), str(tmp_path / "expect.npz")
    script = SCRIPT.replace("OUT", repr(out)).replace("NPZ", repr(npz)).replace("JIT", repr(jit))
    info = run_script(script, env={"TF_USE_LEGACY_KERAS": "1"})
    assert info["names"] == ["dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "dense_1/bias:0"]
    expect = np.load(npz)
    trial = create_trial(out)
    assert trial.steps(mode=st.modes.TRAIN) == [0, 1, 2, 3]
    assert trial.steps(mode=st.modes.EVAL) == [0]
    assert trial.steps(mode=st.modes.PREDICT) == [0]
    assert set(trial.tensor_names(collection="weights")) == {"dense/kernel:0", "dense_1/kernel:0"}
    # optimizer slots of biases also match smd's biases regex: listed in both collections
    biases = set(trial.tensor_names(collection="biases"))
    assert {"dense/bias:0", "dense_1/bias:0"} <= biases
    assert biases - {"dense/bias:0", "dense_1/bias:0"} <= set(trial.tensor_names(collection="optimizer_variables"))
    # smdebug's gradient names for Keras 2: gradients/<variable without :0>Grad
    assert set(trial.tensor_names(collection="gradients")) == {
        "gradients/dense/kernelGrad", "gradients/dense/biasGrad",
        "gradients/dense_1/kernelGrad", "gradients/dense_1/biasGrad"}
    assert any(n.startswith("SGD/") or n.startswith("iteration") for n in
               trial.tensor_names(collection="optimizer_variables"))
    for step in range(4):
        for i, name in enumerate(info["names"]):
            np.testing.assert_array_equal(trial.tensor(name).value(step, mode=st.modes.TRAIN),
                                          expect[f"after_{step}_{i}"])
            np.testing.assert_allclose(
                trial.tensor(f"gradients/{name.split(':')[0]}Grad").value(step, mode=st.modes.TRAIN),
                expect[f"grad_{step}_{i}"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(trial.tensor("predictions").value(0, mode=st.modes.PREDICT),
                               expect["pred"], rtol=1e-6)
    assert trial.tensor("loss").value(3, mode=st.modes.TRAIN)[0] == pytest.approx(expect["loss0"][0], rel=1e-6)


SCRIPT_LEGACY = r"""
import json, sys
import numpy as np
import tensorflow as tf
import smd.tensorflow as st
keras = tf.keras
rng = np.random.default_rng(0)
x = rng.normal(size=(48, 4)).astype("float32")
y = (x @ np.array([[1.0], [-2.0], [0.5], [0.0]], dtype="float32")).astype("float32")
keras.utils.set_random_seed(0)

def make():
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)])

# fit with a legacy optimizer (optimizer.variables is a method there), reductions only
model = make()
model.compile(optimizer=keras.optimizers.legacy.Adam(0.01), loss="mse")
hook = st.KerasHook(OUT_FIT, save_config=st.SaveConfig(save_interval=1),
                    include_collections=["weights", "biases", "optimizer_variables"],
                    reduction_config=st.ReductionConfig(reductions=["min", "max"]))
after = []
class Rec(keras.callbacks.Callback):
    def on_train_batch_end(self, b, logs=None): after.append([w.numpy().copy() for w in self.model.weights])
model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0, callbacks=[hook, Rec()])
model.save(SAVED)  # while the hook is still open
hook.close()
loaded = keras.models.load_model(SAVED)
same = bool(np.array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0)))

# a GradientTape loop with wrap_tape and wrap_optimizer (legacy Adam)
model2 = make()
hook2 = st.KerasHook(OUT_TAPE, save_config=st.SaveConfig(save_interval=1),
                     include_collections=["weights", "biases", "gradients", "optimizer_variables", "losses"])
opt = hook2.wrap_optimizer(keras.optimizers.legacy.Adam(0.01))
opt_after = []
for step in range(3):
    xb, yb = x[step * 16:(step + 1) * 16], y[step * 16:(step + 1) * 16]
    with hook2.wrap_tape(tf.GradientTape()) as tape:
        loss = tf.reduce_mean(tf.square(model2(xb, training=True) - yb))
    grads = tape.gradient(loss, model2.trainable_variables)
    opt.apply_gradients(zip(grads, model2.trainable_variables))
    own = [opt.iterations] + [v for v in opt._hyper.values() if isinstance(v, tf.Variable)]
    opt_after.append({v.name: v.numpy().tolist() for v in own})
hook2.close()
np.savez(NPZ, **{f"after_{s}_{i}": w for s, ws in enumerate(after) for i, w in enumerate(ws)})
print(json.dumps({"names": [w.name for w in model.weights], "fit_opt": [v.name for v in model.optimizer.variables()],
                  "tape_opt": opt_after, "loaded_same": same}))
"""


def test_keras2_legacy_optimizer_reductions_tape_and_save(tmp_path):
    paths = {k: str(tmp_path / v) for k, v in
             (("OUT_FIT", "fit"), ("OUT_TAPE", "tape"), ("SAVED", "model.h5"), ("NPZ", "after.npz"))}
    script = SCRIPT_LEGACY
    for k, v in paths.items():
        script = script.replace(k, repr(v))
    info = run_script(script, env={"TF_USE_LEGACY_KERAS": "1"})
    assert info["loaded_same"]  # model.save with the hook open, load_model, same predictions
    # reductions of "dense/kernel:0" are written under that name (smdebug's TF hooks keep the :0)
    # and so belong to the tensor of the weights collection
    fit = create_trial(paths["OUT_FIT"])
    assert set(fit.tensor_names(collection="weights")) == {"dense/kernel:0", "dense_1/kernel:0"}
    assert {"dense/bias:0", "dense_1/bias:0"} <= set(fit.tensor_names(collection="biases"))
    expect = np.load(paths["NPZ"])
    for step in range(3):
        for i, name in enumerate(info["names"]):
            w = expect[f"after_{step}_{i}"]
            t = fit.tensor(name)
            assert t.reduction_value(step, "min", mode=st.modes.TRAIN) == pytest.approx(w.min())
            assert t.reduction_value(step, "max", mode=st.modes.TRAIN) == pytest.approx(w.max())
    # a legacy optimizer's variables (a method there): as smdebug, the optimizer's own
    # (add_weight) variables, not its slots ("Adam/dense/kernel/m:0", ".../v:0")
    adam = {"Adam/iter:0", "Adam/beta_1:0", "Adam/beta_2:0", "Adam/decay:0", "Adam/learning_rate:0"}
    assert set(fit.tensor_names(collection="optimizer_variables")) == adam
    assert any("/m:0" in n for n in info["fit_opt"])  # the optimizer has slots, not saved
    assert not any("/m:0" in n or "/v:0" in n for n in fit.tensor_names())
    # wrap_tape + wrap_optimizer: the optimizer variables after each step's update
    tape = create_trial(paths["OUT_TAPE"])
    assert tape.steps() == [0, 1, 2]
    assert set(tape.tensor_names(collection="optimizer_variables")) == adam
    for step in range(3):
        for name in adam:
            np.testing.assert_allclose(tape.tensor(name).value(step), info["tape_opt"][step][name], rtol=1e-6)
    assert len(tape.tensor_names(collection="gradients")) == 4
    assert tape.tensor_names(collection="losses") == ["loss"]
    # no slot of a bias lands in the biases collection
    assert set(tape.tensor_names(collection="weights")) == {"dense_2/kernel:0", "dense_3/kernel:0"}
    assert set(tape.tensor_names(collection="biases")) == {"dense_2/bias:0", "dense_3/bias:0"}


SCRIPT_SAVEDMODEL = r"""
import json
import numpy as np
import tensorflow as tf
import smd.tensorflow as st
keras = tf.keras
rng = np.random.default_rng(0)
x = rng.normal(size=(32, 4)).astype("float32")
y = x[:, :1].copy()
keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"),
                          keras.layers.Dropout(0.25), keras.layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
hook = st.KerasHook(OUT, save_config=st.SaveConfig(save_interval=1),
                    include_collections=["layers", "inputs", "outputs", "gradients"])
model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0, callbacks=[hook])
# the SavedModel export traces every layer's call (Dropout's with its training argument) while
# the hook's wrappers are in place: nothing of the hook may go into it
model.save(SAVED, save_format="tf")
at_save = model.predict(x, verbose=0)
model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0, callbacks=[hook])
hook.close()
loaded = keras.models.load_model(SAVED)
print(json.dumps({"same": bool(np.allclose(loaded.predict(x, verbose=0), at_save))}))
"""


def test_keras2_savedmodel_export_with_the_hook_in_place(tmp_path):
    out, saved = str(tmp_path / "run"), str(tmp_path / "saved")
    script = SCRIPT_SAVEDMODEL.replace("OUT", repr(out)).replace("SAVED", repr(saved))
    info = run_script(script, env={"TF_USE_LEGACY_KERAS": "1"})
    assert info["same"]
    trial = create_trial(out)
    assert trial.steps() == [0, 1, 2, 3]  # training went on after the export, still saved
    layers = set(trial.tensor_names(collection="layers"))
    assert {"dropout/inputs", "dropout/outputs", "dense/outputs"} <= layers
    for step in (1, 3):
        assert trial.tensor("dropout/outputs").value(step).shape == (16, 8)
        assert len(trial.tensor_names(collection="gradients")) == 4
