"""smd.mxnet.Hook with the real MXNet 1.9.1 (Gluon): collections, values against MXNet's, modes,
save intervals, block tensors, the real smdebug reading the trials and writing the same trial with
its own MXNet hook, a built-in rule, the JSON configuration, bad input."""
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import textwrap

import mxnet as mx
import numpy as np
import pytest
from mxnet import gluon, nd

import smd.mxnet as smd
from smd.trials import create_trial
from models import LOSS, data, make_net, train

EVERY_STEP = ["weights", "biases", "gradients", "losses"]
PARAMS = ["net_fc1_weight", "net_fc1_bias", "net_fc2_weight", "net_fc2_bias"]
LOSS_OUT = LOSS + "_output_0"


def hook_every_step(out, **kw):
    kw.setdefault("include_collections", EVERY_STEP)
    return smd.Hook(str(out), save_config=smd.SaveConfig(save_interval=1), **kw)


def sha(a):
    a = np.ascontiguousarray(np.asarray(a))
    return hashlib.sha256(a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()).hexdigest()


def run_python(code, args=(), timeout=300):
    e = dict(os.environ)
    here = os.path.dirname(os.path.abspath(__file__))
    e["PYTHONPATH"] = here + os.pathsep + e.get("PYTHONPATH", "")
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(textwrap.dedent(code))
    try:
        r = subprocess.run([sys.executable, f.name, *args], capture_output=True, text=True, env=e, timeout=timeout)
    finally:
        os.unlink(f.name)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_default_collections_hold_smdebugs_tensor_names(tmp_path):
    hook = hook_every_step(tmp_path / "run")
    train(hook, 2)
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    colls = trial.collections()
    assert colls["weights"].tensor_names == {"net_fc1_weight", "net_fc2_weight"}
    assert colls["biases"].tensor_names == {"net_fc1_bias", "net_fc2_bias"}
    assert colls["gradients"].tensor_names == {"gradient/" + p for p in PARAMS}
    assert colls["losses"].tensor_names == {LOSS_OUT}
    assert trial.steps() == [0, 1]


def test_values_equal_what_mxnet_computed(tmp_path):
    hook = hook_every_step(tmp_path / "run")
    rec = {}
    train(hook, 4, record=rec)
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    for step in range(4):
        for p in PARAMS:
            # as in smdebug: a step's parameters after its update, and its gradients
            np.testing.assert_array_equal(trial.tensor(p).value(step), rec[step]["params"][p])
            np.testing.assert_array_equal(trial.tensor("gradient/" + p).value(step), rec[step]["grads"][p])
        np.testing.assert_array_equal(trial.tensor(LOSS_OUT).value(step), rec[step]["loss"])
    assert not np.array_equal(trial.tensor("net_fc1_weight").value(0), trial.tensor("net_fc1_weight").value(3))


def test_the_real_smdebug_reads_the_trial(tmp_path, smdebug_dump):
    hook = hook_every_step(tmp_path / "run")
    rec = {}
    train(hook, 3, record=rec)
    hook.close()
    doc = smdebug_dump(tmp_path / "run")
    assert doc["ended"] is True and doc["steps"]["GLOBAL"] == [0, 1, 2]
    assert doc["collections"]["losses"]["tensor_names"] == [LOSS_OUT]
    for step in range(3):
        for p in PARAMS:
            got = doc["tensors"][p]["at"][str(step)]["workers"]["worker_0"]["value"]
            assert got["sha256"] == sha(rec[step]["params"][p]), (p, step)


def test_same_trial_as_smdebugs_own_mxnet_hook(tmp_path):
    script = """
        import os, sys
        os.environ.setdefault("SMDEBUG_LOG_LEVEL", "error")
        os.environ.pop("TRAINING_JOB_NAME", None)
        import smdebug.mxnet as sd
        from models import train
        hook = sd.Hook(sys.argv[1], save_config=sd.SaveConfig(save_interval=2),
                       include_collections=["weights", "biases", "gradients", "losses"])
        hook.set_mode(sd.modes.TRAIN)
        train(hook, 5)
        hook.close()
        """
    run_python(script, args=[str(tmp_path / "smdebug")])
    hook = smd.Hook(str(tmp_path / "smd"), save_config=smd.SaveConfig(save_interval=2), include_collections=EVERY_STEP)
    hook.set_mode(smd.modes.TRAIN)
    train(hook, 5)
    hook.close()
    ref, ours = create_trial(str(tmp_path / "smdebug")), create_trial(str(tmp_path / "smd"))
    assert ours.tensor_names() == ref.tensor_names()
    assert ours.steps() == ref.steps() == [0, 2, 4]
    for c in EVERY_STEP:
        assert ours.collection(c).tensor_names == ref.collection(c).tensor_names, c
    for name in ref.tensor_names():
        assert ours.tensor(name).steps() == ref.tensor(name).steps(), name
        for step in ref.tensor(name).steps():
            np.testing.assert_array_equal(ours.tensor(name).value(step), ref.tensor(name).value(step))


def test_default_hook_saves_losses_only(tmp_path):
    hook = smd.Hook(str(tmp_path / "run"))
    train(hook, 3)
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert trial.tensor_names() == [LOSS_OUT] and trial.steps() == [0]


def test_save_interval(tmp_path):
    hook = smd.Hook(str(tmp_path / "run"), save_config=smd.SaveConfig(save_interval=3), include_collections=EVERY_STEP)
    train(hook, 8)
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert trial.steps() == [0, 3, 6]
    assert trial.tensor("gradient/net_fc2_bias").steps() == [0, 3, 6]


def test_modes_train_then_eval(tmp_path):
    hook = hook_every_step(tmp_path / "run")
    hook.set_mode(smd.modes.TRAIN)
    net = train(hook, 3)
    hook.set_mode(smd.modes.EVAL)
    for _ in range(2):
        net(data(seed=1)[0])
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert trial.steps(mode=smd.modes.TRAIN) == [0, 1, 2]
    assert trial.steps(mode=smd.modes.EVAL) == [0, 1]
    np.testing.assert_array_equal(trial.tensor("net_fc1_weight").value(1, mode=smd.modes.EVAL),
                                  net[0].weight.data().asnumpy())


def test_block_inputs_and_outputs_through_add_block_tensors(tmp_path):
    hook = smd.Hook(str(tmp_path / "run"), save_config=smd.SaveConfig(save_interval=1), include_collections=["fc2"])
    net = make_net()
    hook.register_block(net)
    hook.get_collection("fc2").add_block_tensors(net[1], inputs=True, outputs=True)
    x, _ = data()
    out = net(x)
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert trial.collection("fc2").tensor_names == {"net_fc2_input_0", "net_fc2_output_0"}
    np.testing.assert_array_equal(trial.tensor("net_fc2_input_0").value(0), net[0](x).asnumpy())
    np.testing.assert_array_equal(trial.tensor("net_fc2_output_0").value(0), out.asnumpy())


def test_only_blocks_a_saved_collection_can_hold_are_hooked(tmp_path):
    """By default only the loss block has a forward hook; a regex added to a saved collection
    later hooks the blocks it can match from the next step on."""
    hook = smd.Hook(str(tmp_path / "run"), save_config=smd.SaveConfig(save_interval=1),
                    include_collections=["losses", "acts"])
    net = train(hook, 2)
    loss_block = next(b for b, is_loss in hook._blocks if is_loss)
    assert loss_block._forward_hooks
    assert not net._forward_hooks and not net[0]._forward_hooks and not net[1]._forward_hooks
    hook.get_collection("acts").include("^net_fc1_output_")
    x, _ = data()
    net(x)
    assert net[0]._forward_hooks and not net[1]._forward_hooks and not net._forward_hooks
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert trial.tensor(LOSS_OUT).steps() == [0, 1]
    assert trial.tensor("net_fc1_output_0").steps() == [2]
    assert trial.collection("acts").tensor_names == {"net_fc1_output_0"}
    np.testing.assert_array_equal(trial.tensor("net_fc1_output_0").value(2), net[0](x).asnumpy())


def test_save_tensor_and_save_scalar_with_ndarrays(tmp_path):
    hook = smd.Hook(str(tmp_path / "run"), save_config=smd.SaveConfig(save_interval=1))
    net = make_net()
    hook.register_block(net)
    net(data()[0])
    hook.save_tensor("ones", nd.ones((2, 3)), "custom")
    hook.save_scalar("lr", nd.array([0.5]))
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    np.testing.assert_array_equal(trial.tensor("ones").value(0), np.ones((2, 3), np.float32))
    assert trial.tensor("scalar/lr").value(0).tolist() == [0.5]


def test_json_configuration_zero_script_change(tmp_path, monkeypatch):
    cfg = {"LocalPath": str(tmp_path / "run"), "HookParameters": {"save_interval": "2"},
           "CollectionConfigurations": [{"CollectionName": "weights"}]}
    (tmp_path / "cfg.json").write_text(json.dumps(cfg))
    monkeypatch.setenv("SMDEBUG_CONFIG_FILE_PATH", str(tmp_path / "cfg.json"))
    hook = smd.Hook.create_from_json_file()
    assert isinstance(hook, smd.Hook) and smd.get_hook() is hook
    train(hook, 5)
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert trial.tensor("net_fc1_weight").steps() == [0, 2, 4]
    assert trial.tensor(LOSS_OUT).steps() == [0, 2, 4]


@pytest.mark.parametrize("broken", [True, False])
def test_vanishing_gradient_fires_on_a_saturated_net_only(tmp_path, smd_tool, broken):
    hook = hook_every_step(tmp_path / "run")
    net = make_net(sigmoid=True, scale=1e4 if broken else 1.0)
    train(hook, 5, net=net)
    hook.close()
    r = subprocess.run([str(smd_tool), "rules", str(tmp_path / "run"), "--rule", "VanishingGradient"],
                       capture_output=True, text=True, timeout=120)
    if broken:
        assert r.returncode == 6, r.stdout + r.stderr
        assert "gradient/net_fc1_weight" in r.stdout
    else:
        assert r.returncode == 0, r.stdout + r.stderr
        assert "NoIssuesFound (5 step(s) evaluated" in r.stdout


def test_importing_smd_does_not_import_mxnet():
    assert run_python("import sys, smd; print('mxnet' in sys.modules)").strip() == "False"


def test_bad_input_gives_clear_errors(tmp_path):
    hook = smd.Hook(str(tmp_path / "run"))
    net = make_net()
    hook.register_block(net)
    with pytest.raises(ValueError, match="block net_ is already registered|block net is already registered"):
        hook.register_block(net)
    with pytest.raises(ValueError, match="has no parameters"):
        hook.register_block(gluon.nn.Activation("relu"))
    with pytest.raises(TypeError, match="register_block takes an mxnet.gluon.Block, not ndarray"):
        hook.register_block(np.ones(2))
    with pytest.raises(TypeError, match="an NDArray of 3 elements is not a scalar"):
        hook.save_scalar("loss", nd.ones(3))
    with pytest.raises(TypeError, match="add_block_tensors takes an mxnet.gluon.Block"):
        hook.get_collection("x").add_block_tensors("fc1")
    other = smd.Hook(str(tmp_path / "other"))
    with pytest.raises(ValueError, match="block net is registered with another open smd hook"):
        other.register_block(net)
    other.close()
    hook.close()
    with pytest.raises(TypeError, match="needs an out_dir"):
        smd.Hook()


@pytest.mark.filterwarnings("ignore:All children of this Sequential")  # hybridize() on a Sequential
def test_a_hybridized_network_saves_its_blocks_outputs(tmp_path):
    hook = smd.Hook(str(tmp_path / "run"), save_config=smd.SaveConfig(save_interval=1),
                    include_collections=EVERY_STEP, include_regex=["_output_"])
    net = make_net()
    net.hybridize()
    rec = {}
    train(hook, 3, net=net, record=rec)
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert trial.tensor("net_fc1_output_0").steps() == [0, 1, 2]
    x, _ = data()
    # the last step's output of fc1 was computed with the parameters before the last update
    before_last = make_net()
    for p in before_last.collect_params().values():
        p.set_data(nd.array(rec[1]["params"][p.name]))
    np.testing.assert_allclose(trial.tensor("net_fc1_output_0").value(2), before_last[0](x).asnumpy(), rtol=1e-6)
    np.testing.assert_array_equal(trial.tensor("net_fc1_weight").value(2), rec[2]["params"]["net_fc1_weight"])


@pytest.mark.parametrize("closed", [False, True])
def test_a_registered_network_saves_pickles_and_copies(tmp_path, closed):
    """save_parameters of a registered network works while the hook is open and after close();
    the network pickles and deep-copies exactly when the same network without a hook does, and the
    loaded or copied network runs without saving, while the hook goes on."""
    import copy
    import pickle

    def pickles(block):
        try:
            return pickle.loads(pickle.dumps(block))
        except Exception as e:  # noqa: BLE001 - compared with the unhooked network below
            return type(e)

    hook = hook_every_step(tmp_path / "run")
    net = train(hook, 2)
    if closed:
        hook.close()
    net.save_parameters(str(tmp_path / "net.params"))
    fresh = make_net(prefix="net_", seed=5)
    fresh.load_parameters(str(tmp_path / "net.params"))
    for a, b in zip(net.collect_params().values(), fresh.collect_params().values()):
        np.testing.assert_array_equal(a.data().asnumpy(), b.data().asnumpy())
    x, _ = data()
    loaded, plain = pickles(net), pickles(make_net(prefix="plain_"))
    assert isinstance(loaded, type) == isinstance(plain, type), (loaded, plain)
    if not isinstance(loaded, type):
        np.testing.assert_array_equal(loaded(x).asnumpy(), fresh(x).asnumpy())
        copy.deepcopy(net)(x)
    if not closed:
        net(x)  # the original network still steps its hook
        hook.close()
    # the loaded and copied networks did not step the hook
    assert create_trial(str(tmp_path / "run")).steps() == ([0, 1] if closed else [0, 1, 2])


def test_module_functions_smdebug_exports(tmp_path, monkeypatch):
    import smdebug.mxnet as ref
    from fwtest import smdebug_names_missing
    assert smdebug_names_missing(smd, ref) == set()
    assert smd.create_trial is create_trial
    monkeypatch.setenv("SMDEBUG_CONFIG_FILE_PATH", str(tmp_path / "missing.json"))
    smd.del_hook()
    assert smd.get_hook() is None  # smdebug's MXNet get_hook creates from JSON: there is none
    hook = hook_every_step(tmp_path / "run")
    assert smd.get_hook() is hook
    smd.del_hook()
    smd.set_hook(hook)
    assert smd.get_hook() is hook
    smd.del_hook()
    hook.close()


def test_a_hybridized_hybridsequential_saves_its_own_outputs_and_parameters(tmp_path):
    # the children of a HybridBlock hybridized as a whole run inside its cached graph, where their
    # hooks never run: the network's outputs, parameters and gradients are saved
    hook = smd.Hook(str(tmp_path / "run"), save_config=smd.SaveConfig(save_interval=1),
                    include_collections=EVERY_STEP, include_regex=["_output_"])
    mx.random.seed(0)
    net = gluon.nn.HybridSequential(prefix="hs_")
    with net.name_scope():
        net.add(gluon.nn.Dense(8, activation="relu"), gluon.nn.Dense(3))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    train(hook, 2, net=net)
    hook.close()
    names = create_trial(str(tmp_path / "run")).tensor_names()
    assert "hs_output_0" in names and "hs_dense0_weight" in names and "gradient/hs_dense1_bias" in names
    assert not [n for n in names if n.startswith("hs_dense") and "_output_" in n]


def test_a_parameter_that_cannot_be_read_is_skipped_with_a_warning(tmp_path):
    # a child block with deferred shape inference that the forward pass never runs: its weight has
    # no data; the others are saved, training goes on, close() closes
    class Net(gluon.nn.Block):
        def __init__(self):
            super().__init__(prefix="net_")
            with self.name_scope():
                self.used = gluon.nn.Dense(3, in_units=4)
                self.unused = gluon.nn.Dense(3)  # in_units inferred at its first call: never

        def forward(self, x):
            return self.used(x)
    net = Net()
    net.initialize()
    hook = smd.Hook(str(tmp_path / "run"), save_config=smd.SaveConfig(save_interval=1),
                    include_collections=EVERY_STEP)
    hook.register_block(net)
    trainer = gluon.Trainer(net.used.collect_params(), "sgd", {"learning_rate": 0.1})
    x, _ = data()
    with pytest.warns(RuntimeWarning, match="net_dense1_weight is not saved"):
        for _ in range(3):
            with mx.autograd.record():
                loss = net(x).sum()
            loss.backward()
            trainer.step(x.shape[0])
        hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert trial.tensor("net_dense0_weight").steps() == [0, 1, 2]
    assert "net_dense1_weight" not in trial.tensor_names()
    assert os.path.exists(tmp_path / "run" / "training_job_end.ts")


def test_the_readmes_mxnet_example_runs_as_written(tmp_path):
    """The README's MXNet example, run as a script: weights, gradients and the loss every 10
    steps of its 100."""
    from fwtest import readme_python_examples, run_example
    [example] = readme_python_examples("MXNet")
    run_example(example, tmp_path)
    trial = create_trial(str(tmp_path / "run-mxnet"))
    steps = list(range(0, 100, 10))
    weights = trial.tensor_names(collection="weights")
    gradients = trial.tensor_names(collection="gradients")
    losses = trial.tensor_names(collection="losses")
    assert len(weights) == 2 and len(gradients) >= 2 and losses, (weights, gradients, losses)
    for name in weights + gradients + losses:
        assert trial.tensor(name).steps() == steps, name
