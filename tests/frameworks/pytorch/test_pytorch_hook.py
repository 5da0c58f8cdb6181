"""smd.pytorch.Hook with the real PyTorch: collections, values against torch's, modes, save
intervals, module tensors, the real smdebug reading the trials, built-in rules, distributed worker
names, the JSON configuration, bad input."""
import copy
import hashlib
import json
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import smd.pytorch as smd
from smd.pytorch.hook import _host_view
from smd.trials import create_trial
from models import Net, data, train

EVERY_STEP = ["weights", "biases", "gradients", "losses"]


def hook_every_step(out, **kw):
    kw.setdefault("include_collections", EVERY_STEP)
    return smd.Hook(str(out), save_config=smd.SaveConfig(save_interval=1), **kw)


def sha(a):
    a = np.ascontiguousarray(np.asarray(a))
    return hashlib.sha256(a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()).hexdigest()


PARAMS = ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]


def test_default_collections_hold_smdebugs_tensor_names(tmp_path):
    hook = hook_every_step(tmp_path / "run")
    train(hook, 2)
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    colls = trial.collections()
    assert colls["weights"].tensor_names == {"Net_fc1.weight", "Net_fc2.weight"}
    assert colls["biases"].tensor_names == {"Net_fc1.bias", "Net_fc2.bias"}
    assert colls["gradients"].tensor_names == {"gradient/Net_" + p for p in PARAMS}
    assert colls["losses"].tensor_names == {"CrossEntropyLoss_output_0"}
    assert trial.steps() == [0, 1]
    assert set(trial.tensor_names()) == {"Net_" + p for p in PARAMS} | {"gradient/Net_" + p for p in PARAMS} | {"CrossEntropyLoss_output_0"}


def test_values_equal_what_torch_computed(tmp_path):
    hook = hook_every_step(tmp_path / "run")
    rec = {}
    train(hook, 4, record=rec)
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    for step in range(4):
        for p in PARAMS:
            # weights: as they were when the step started (after `step` SGD updates)
            np.testing.assert_array_equal(trial.tensor("Net_" + p).value(step), rec[step]["params"][p].numpy())
            # gradients: autograd's, bit for bit
            np.testing.assert_array_equal(trial.tensor("gradient/Net_" + p).value(step), rec[step]["grads"][p].numpy())
        loss = trial.tensor("CrossEntropyLoss_output_0").value(step)
        assert loss.dtype == np.float32 and loss.item() == rec[step]["loss"].item()
    # the weights really change between steps (the comparison above is not vacuous)
    assert not np.array_equal(trial.tensor("Net_fc1.weight").value(0), trial.tensor("Net_fc1.weight").value(3))


def test_the_real_smdebug_reads_the_trial(tmp_path, smdebug_dump):
    hook = hook_every_step(tmp_path / "run")
    rec = {}
    train(hook, 3, record=rec)
    hook.close()
    doc = smdebug_dump(tmp_path / "run")
    assert doc["ended"] is True and doc["workers"] == ["worker_0"]
    assert doc["steps"]["GLOBAL"] == [0, 1, 2]
    assert doc["collections"]["weights"]["tensor_names"] == ["Net_fc1.weight", "Net_fc2.weight"]
    assert doc["collections"]["losses"]["tensor_names"] == ["CrossEntropyLoss_output_0"]
    for step in range(3):
        for p in PARAMS:
            got = doc["tensors"]["Net_" + p]["at"][str(step)]["workers"]["worker_0"]["value"]
            assert got["sha256"] == sha(rec[step]["params"][p].numpy()), (p, step)
            got = doc["tensors"]["gradient/Net_" + p]["at"][str(step)]["workers"]["worker_0"]["value"]
            assert got["sha256"] == sha(rec[step]["grads"][p].numpy()), (p, step)


def test_default_hook_saves_losses_only_every_500_steps(tmp_path):
    hook = smd.Hook(str(tmp_path / "run"))
    train(hook, 3)
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert trial.tensor_names() == ["CrossEntropyLoss_output_0"]
    assert trial.steps() == [0]


def test_save_interval_and_save_steps(tmp_path):
    hook = smd.Hook(str(tmp_path / "a"), save_config=smd.SaveConfig(save_interval=3), include_collections=EVERY_STEP)
    train(hook, 8)
    hook.close()
    trial = create_trial(str(tmp_path / "a"))
    assert trial.steps() == [0, 3, 6]
    assert trial.tensor("gradient/Net_fc2.bias").steps() == [0, 3, 6]
    hook = smd.Hook(str(tmp_path / "b"), save_config=smd.SaveConfig(save_steps=[1, 4]), include_collections=["weights"])
    train(hook, 6)
    hook.close()
    trial = create_trial(str(tmp_path / "b"))
    # as in smdebug, save_steps comes on top of the default save_interval (500): step 0 too
    assert trial.tensor("Net_fc1.weight").steps() == [0, 1, 4]


def test_modes_train_then_eval(tmp_path):
    hook = hook_every_step(tmp_path / "run")
    hook.set_mode(smd.modes.TRAIN)
    net = train(hook, 3)
    hook.set_mode(smd.modes.EVAL)
    x, _ = data(seed=1)
    with torch.no_grad():
        for _ in range(2):
            net(x)
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert trial.steps() == [0, 1, 2, 3, 4]
    assert trial.steps(mode=smd.modes.TRAIN) == [0, 1, 2]
    assert trial.steps(mode=smd.modes.EVAL) == [0, 1]
    # no backward pass in EVAL: gradients only in TRAIN, weights in both
    assert trial.tensor("gradient/Net_fc1.weight").steps(mode=smd.modes.EVAL) == []
    assert trial.tensor("Net_fc1.weight").steps(mode=smd.modes.EVAL) == [0, 1]
    np.testing.assert_array_equal(trial.tensor("Net_fc1.weight").value(1, mode=smd.modes.EVAL),
                                  net.fc1.weight.detach().numpy())


def test_per_mode_save_config(tmp_path):
    cfg = smd.SaveConfig(mode_save_configs={smd.modes.TRAIN: smd.SaveConfigMode(save_interval=2),
                                            smd.modes.EVAL: smd.SaveConfigMode(save_interval=1)})
    hook = smd.Hook(str(tmp_path / "run"), save_config=cfg, include_collections=["weights"])
    hook.set_mode(smd.modes.TRAIN)
    net = train(hook, 5)
    hook.set_mode(smd.modes.EVAL)
    with torch.no_grad():
        for _ in range(3):
            net(data()[0])
    hook.close()
    t = create_trial(str(tmp_path / "run")).tensor("Net_fc2.weight")
    assert t.steps(mode=smd.modes.TRAIN) == [0, 2, 4]
    assert t.steps(mode=smd.modes.EVAL) == [0, 1, 2]


def test_module_inputs_and_outputs_through_add_module_tensors(tmp_path):
    hook = smd.Hook(str(tmp_path / "run"), save_config=smd.SaveConfig(save_interval=1),
                    include_collections=["relu_acts"])
    net = Net()
    hook.register_module(net)
    hook.get_collection("relu_acts").add_module_tensors(net.relu, inputs=True, outputs=True)
    x, _ = data()
    out = net(x)
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert trial.collection("relu_acts").tensor_names == {"relu_input_0", "relu_output_0"}
    pre = net.fc1(x).detach()
    np.testing.assert_array_equal(trial.tensor("relu_input_0").value(0), pre.numpy())
    np.testing.assert_array_equal(trial.tensor("relu_output_0").value(0), torch.relu(pre).numpy())
    assert out.shape == (16, 3)


def test_include_regex_saves_module_outputs_in_default(tmp_path):
    hook = smd.Hook(str(tmp_path / "run"), save_config=smd.SaveConfig(save_interval=1),
                    include_regex=["fc2_output_", "Net_output_"])
    net = Net()
    hook.register_module(net)
    out = net(data()[0])
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert {"fc2_output_0", "Net_output_0"} <= trial.collection("default").tensor_names
    np.testing.assert_array_equal(trial.tensor("Net_output_0").value(0), out.detach().numpy())
    np.testing.assert_array_equal(trial.tensor("fc2_output_0").value(0), out.detach().numpy())


def test_a_module_called_twice_in_a_step_gets_numbered_outputs(tmp_path):
    class Twice(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            return self.lin(self.lin(x))

    hook = smd.Hook(str(tmp_path / "run"), save_config=smd.SaveConfig(save_interval=1), include_regex=["lin_output_"])
    m = Twice()
    hook.register_module(m)
    x = torch.ones(2, 3)
    m(x)
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    first = m.lin(x)
    np.testing.assert_array_equal(trial.tensor("lin_output_0").value(0), first.detach().numpy())
    np.testing.assert_array_equal(trial.tensor("lin_output_1").value(0), m.lin(first).detach().numpy())


def test_record_tensor_value_of_a_functional_loss(tmp_path):
    hook = smd.Hook(str(tmp_path / "run"), save_config=smd.SaveConfig(save_interval=1))
    net = Net()
    hook.register_module(net)
    x, _ = data()
    losses = []
    for _ in range(2):
        out = net(x)
        loss = F.mse_loss(out, torch.zeros_like(out))
        hook.record_tensor_value("mse_loss", loss)
        losses.append(loss.item())
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert "mse_loss_output_0" in trial.collection("losses").tensor_names
    assert [trial.tensor("mse_loss_output_0").value(s).item() for s in (0, 1)] == pytest.approx(losses, rel=0, abs=0)


def test_save_tensor_and_save_scalar_with_torch_tensors(tmp_path):
    hook = smd.Hook(str(tmp_path / "run"), save_config=smd.SaveConfig(save_interval=1))
    net = Net()
    hook.register_module(net)
    net(data()[0])
    w = net.fc1.weight  # requires grad
    hook.save_tensor("fc1_w_t", w.t(), "custom")           # not contiguous
    hook.save_tensor("half", torch.arange(6, dtype=torch.float16).reshape(2, 3), "custom")
    hook.save_tensor("bf16", torch.tensor([1.5, -2.0], dtype=torch.bfloat16), "custom")
    hook.save_tensor("flags", torch.tensor([True, False]), "custom")
    hook.save_scalar("lr", torch.tensor(0.25))
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    np.testing.assert_array_equal(trial.tensor("fc1_w_t").value(0), w.detach().t().numpy())
    np.testing.assert_array_equal(trial.tensor("half").value(0), np.arange(6, dtype=np.float16).reshape(2, 3))
    bf = trial.tensor("bf16").value(0)
    assert bf.shape == (2,)
    assert np.asarray(bf).astype(np.float32).tolist() == [1.5, -2.0] or bf.view(np.uint16).tolist() == [0x3FC0, 0xC000]
    assert trial.tensor("flags").value(0).tolist() == [True, False]
    assert trial.tensor("scalar/lr").value(0).tolist() == [0.25]
    assert trial.collection("custom").tensor_names == {"fc1_w_t", "half", "bf16", "flags"}


def test_cpu_tensors_go_to_smd_without_a_copy():
    t = torch.randn(4, 5, requires_grad=True)
    dtype, shape, buf = _host_view("t", t)
    assert (dtype, shape) == (1, [4, 5])
    assert buf.ctypes.data == t.data_ptr()  # the tensor's own memory
    _, _, buf = _host_view("t", t.t())        # a transposed view needs one contiguous copy
    assert buf.ctypes.data != t.data_ptr()


def test_json_configuration_zero_script_change(tmp_path, monkeypatch):
    cfg = {"LocalPath": str(tmp_path / "run"),
           "HookParameters": {"save_interval": "2"},
           "CollectionConfigurations": [{"CollectionName": "weights"},
                                        {"CollectionName": "gradients",
                                         "CollectionParameters": {"save_interval": "3"}}]}
    path = tmp_path / "debughookconfig.json"
    path.write_text(json.dumps(cfg))
    monkeypatch.setenv("SMDEBUG_CONFIG_FILE_PATH", str(path))
    hook = smd.Hook.create_from_json_file()
    assert isinstance(hook, smd.Hook)
    assert smd.get_hook() is hook
    train(hook, 7)
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert trial.tensor("Net_fc1.weight").steps() == [0, 2, 4, 6]
    assert trial.tensor("gradient/Net_fc1.weight").steps() == [0, 3, 6]
    assert trial.tensor("CrossEntropyLoss_output_0").steps() == [0, 2, 4, 6]


def saturated_net():
    """A net whose hidden sigmoids are pinned at 0 or 1: the gradients of fc1 all but vanish."""
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.Sigmoid(), nn.Linear(8, 3))
    with torch.no_grad():
        net[0].weight.mul_(1e4)
        net[0].bias.fill_(0)
    return net


@pytest.mark.parametrize("broken", [True, False])
def test_vanishing_gradient_fires_on_a_saturated_net_only(tmp_path, smd_tool, broken):
    hook = hook_every_step(tmp_path / "run")
    torch.manual_seed(0)
    train(hook, 5, net=saturated_net() if broken else nn.Sequential(nn.Linear(4, 8), nn.Sigmoid(), nn.Linear(8, 3)))
    hook.close()
    r = subprocess.run([str(smd_tool), "rules", str(tmp_path / "run"), "--rule", "VanishingGradient"],
                       capture_output=True, text=True, timeout=120)
    if broken:
        assert r.returncode == 6, r.stdout + r.stderr
        assert "gradient/Sequential_0.weight" in r.stdout and "IssuesFound" in r.stdout
    else:
        assert r.returncode == 0, r.stdout + r.stderr
        assert "NoIssuesFound (5 step(s) evaluated" in r.stdout


def run_python(code, env=None, timeout=300, args=()):
    """Runs code in a new Python (a script file: torch.multiprocessing's spawn re-imports it),
    with no launcher variables but those in env."""
    e = dict(os.environ)
    for k in ("RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "HOROVOD_RANK",
              "HOROVOD_SIZE", "PMI_RANK", "PMI_SIZE"):
        e.pop(k, None)
    e.update(env or {})
    here = os.path.dirname(os.path.abspath(__file__))
    e["PYTHONPATH"] = here + os.pathsep + e.get("PYTHONPATH", "")
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(textwrap.dedent(code))
    try:
        r = subprocess.run([sys.executable, f.name, *args], capture_output=True, text=True, env=e, timeout=timeout)
    finally:
        os.unlink(f.name)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_worker_names_from_an_initialized_process_group(tmp_path):
    run_python(f"""
        import torch.distributed as dist, torch.multiprocessing as mp
        import smd.pytorch as smd
        from models import train

        def work(rank):
            dist.init_process_group("gloo", init_method="file://{tmp_path}/pg", rank=rank, world_size=2)
            hook = smd.Hook("{tmp_path}/run", include_workers="all", include_collections=["weights"],
                            save_config=smd.SaveConfig(save_interval=1))
            train(hook, 2, seed=rank)
            hook.close()
            dist.destroy_process_group()

        if __name__ == "__main__":
            mp.spawn(work, nprocs=2)
        """)
    trial = create_trial(str(tmp_path / "run"))
    assert trial.workers() == ["worker_0", "worker_1"]
    assert trial.num_workers == 2
    w0 = trial.tensor("Net_fc1.weight").value(1, worker="worker_0")
    w1 = trial.tensor("Net_fc1.weight").value(1, worker="worker_1")
    assert not np.array_equal(w0, w1)  # each worker saved its own (differently seeded) model


def test_worker_name_from_rank_environment_and_only_the_chief_writes(tmp_path):
    code = """
        import sys
        import smd.pytorch as smd
        from models import train
        hook = smd.Hook(sys.argv[1], include_collections=["weights"], save_config=smd.SaveConfig(save_interval=1))
        train(hook, 2)
        hook.close()
        """
    run_python(code, {"RANK": "1", "WORLD_SIZE": "2"}, args=[str(tmp_path / "rank1")])
    assert not (tmp_path / "rank1" / "events").exists()  # include_workers="one": worker_1 saves nothing
    run_python(code, {"RANK": "0", "WORLD_SIZE": "2"}, args=[str(tmp_path / "rank0")])
    trial = create_trial(str(tmp_path / "rank0"))
    assert trial.workers() == ["worker_0"] and trial.num_workers == 1  # smdebug: one worker saved
    assert trial.tensor("Net_fc1.weight").steps() == [0, 1]


def test_importing_smd_does_not_import_torch():
    out = run_python("import sys, smd; print('torch' in sys.modules)")
    assert out.strip() == "False"


# -- bad input ---------------------------------------------------------------------------------

def test_a_module_registered_twice_is_refused(tmp_path):
    hook = smd.Hook(str(tmp_path / "run"))
    net = Net()
    hook.register_module(net)
    with pytest.raises(ValueError, match="module Net is already registered"):
        hook.register_module(net)
    with pytest.raises(ValueError, match="submodule 'fc1' of Linear|already registered"):
        hook.register_module(net.fc1)
    hook.close()


def test_a_model_registered_with_two_open_hooks_is_refused(tmp_path):
    first = smd.Hook(str(tmp_path / "a"))
    net = Net()
    first.register_module(net)
    second = smd.Hook(str(tmp_path / "b"), include_collections=["weights"])
    with pytest.raises(ValueError, match="registered with another open smd hook"):
        second.register_module(net)
    first.close()
    second.register_module(net)  # the first hook is closed: its torch hooks are gone
    net(data()[0])
    second.close()
    assert create_trial(str(tmp_path / "b")).steps() == [0]


def test_a_module_without_parameters_is_refused(tmp_path):
    hook = smd.Hook(str(tmp_path / "run"))
    with pytest.raises(ValueError, match="module ReLU has no parameters"):
        hook.register_module(nn.ReLU())
    with pytest.raises(TypeError, match="register_module takes a torch.nn.Module, not function"):
        hook.register_module(lambda x: x)
    hook.close()


def test_non_tensor_losses_are_refused(tmp_path):
    hook = smd.Hook(str(tmp_path / "run"))
    with pytest.raises(TypeError, match=r"record_tensor_value\('loss'\): the value must be a torch.Tensor, not float"):
        hook.record_tensor_value("loss", 0.5)
    with pytest.raises(TypeError, match="register_loss takes a loss module .* not Linear"):
        hook.register_loss(nn.Linear(2, 2))
    with pytest.raises(TypeError, match="a tensor of 3 elements is not a scalar"):
        hook.save_scalar("loss", torch.ones(3))
    crit = nn.MSELoss()
    hook.register_loss(crit)
    with pytest.raises(ValueError, match="loss module MSELoss is already registered"):
        hook.register_loss(crit)
    hook.close()


def test_add_module_tensors_of_an_unregistered_module_is_reported(tmp_path):
    hook = smd.Hook(str(tmp_path / "run"))
    net = Net()
    hook.register_module(net)
    hook.get_collection("other").add_module_tensors(nn.ReLU())
    with pytest.raises(ValueError, match="ReLU \\(collection 'other'\\) is not a module registered"):
        net(data()[0])
    with pytest.raises(TypeError, match="add_module_tensors takes a torch.nn.Module"):
        hook.get_collection("other").add_module_tensors("relu")
    hook.close()


def test_hook_without_out_dir_says_how_to_configure_it():
    with pytest.raises(TypeError, match="needs an out_dir"):
        smd.Hook()


def test_close_removes_the_torch_hooks(tmp_path):
    hook = hook_every_step(tmp_path / "run")
    net = train(hook, 2)
    hook.close()
    net(data()[0])  # no step, no error after close
    assert create_trial(str(tmp_path / "run")).steps() == [0, 1]


@pytest.mark.parametrize("collections", [EVERY_STEP, ["gradients", "losses"], ["losses"],
                                         ["acts", "losses"]],
                         ids=["everything", "gradients", "losses", "relu-outputs"])
def test_same_trial_as_smdebugs_own_pytorch_hook(tmp_path, collections):
    """smdebug 1.0.34's PyTorch hook (installed in this venv, run in a subprocess) and smd's, on the
    same seeded model and data: same tensor names, collections (and the names each lists), steps,
    modes and values. smd hooks only the modules and parameters whose tensors some saved
    collection can hold; smdebug hooks them all."""
    script = """
        import os, sys
        os.environ.setdefault("SMDEBUG_LOG_LEVEL", "error")
        os.environ.pop("TRAINING_JOB_NAME", None)
        import smdebug.pytorch as sd
        from models import train
        hook = sd.Hook(sys.argv[1], save_config=sd.SaveConfig(save_interval=2),
                       include_collections=sys.argv[2].split(","))
        hook.get_collection("acts").include("relu_output_")
        hook.set_mode(sd.modes.TRAIN)
        train(hook, 5)
        hook.close()
        """
    run_python(script, args=[str(tmp_path / "smdebug"), ",".join(collections)])
    hook = smd.Hook(str(tmp_path / "smd"), save_config=smd.SaveConfig(save_interval=2),
                    include_collections=collections)
    hook.get_collection("acts").include("relu_output_")
    hook.set_mode(smd.modes.TRAIN)
    train(hook, 5)
    hook.close()
    ref, ours = create_trial(str(tmp_path / "smdebug")), create_trial(str(tmp_path / "smd"))
    assert ours.tensor_names() == ref.tensor_names()
    assert ours.steps() == ref.steps() == [0, 2, 4]
    assert ours.steps(mode=smd.modes.TRAIN) == ref.steps(mode=smd.modes.TRAIN)
    for c in collections:
        assert ours.collection(c).tensor_names == ref.collection(c).tensor_names, c
    assert ours.tensor_names(collection=collections[0])  # something of each was saved
    for name in ref.tensor_names():
        for step in ref.tensor(name).steps():
            np.testing.assert_array_equal(ours.tensor(name).value(step), ref.tensor(name).value(step))


def test_a_step_that_saves_nothing_leaves_no_hooks_on_submodules_or_parameters(tmp_path):
    hook = smd.Hook(str(tmp_path / "run"), save_config=smd.SaveConfig(save_interval=2), include_collections=EVERY_STEP)
    rec = {}
    net = train(hook, 2, record=rec)  # step 0 saves, step 1 does not
    assert not net.fc1._forward_hooks and not net.relu._forward_hooks
    assert all(p._backward_hooks is None for p in net.parameters())  # autograd calls no Python
    x, y = data()
    net(x)  # step 2 saves again: the hooks are back
    assert net.fc1._forward_hooks
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert trial.tensor("gradient/Net_fc1.weight").steps() == [0]
    np.testing.assert_array_equal(trial.tensor("Net_fc1.weight").value(2), net.fc1.weight.detach().numpy())


def test_only_what_a_saved_collection_can_hold_is_hooked(tmp_path):
    """By default only losses is saved: the loss module is the one module hooked, and no
    parameter has a gradient hook. A regex added to a saved collection later hooks the modules it
    can match from the next step on, and their outputs are saved from that step."""
    hook = smd.Hook(str(tmp_path / "run"), save_config=smd.SaveConfig(save_interval=1),
                    include_collections=["losses", "acts"])
    rec = {}
    net = train(hook, 2, record=rec)
    crit = next(m for _, m in hook._modules.values() if isinstance(m, nn.CrossEntropyLoss))
    assert crit._forward_hooks
    assert not net._forward_hooks and not net.fc1._forward_hooks and not net.relu._forward_hooks
    assert all(p._backward_hooks is None for p in net.parameters())
    hook.get_collection("acts").include("^relu_output_")
    x, y = data()
    out = net(x)
    assert net.relu._forward_hooks and not net.fc1._forward_hooks and not net.fc2._forward_hooks
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert trial.tensor("CrossEntropyLoss_output_0").steps() == [0, 1]
    assert trial.tensor("relu_output_0").steps() == [2]
    assert trial.collection("acts").tensor_names == {"relu_output_0"}
    np.testing.assert_array_equal(trial.tensor("relu_output_0").value(2),
                                  torch.relu(net.fc1(x)).detach().numpy())
    assert out.shape == (16, 3)


def test_gradient_monitoring_hooks_parameters_not_modules(tmp_path):
    """Gradients as reductions and the loss, every step (the usual monitoring): gradient hooks on
    every parameter, forward hooks on the loss module alone, and every reduction saved."""
    hook = smd.Hook(str(tmp_path / "run"), save_config=smd.SaveConfig(save_interval=1),
                    include_collections=["gradients", "losses"],
                    reduction_config=smd.ReductionConfig(reductions=["max", "mean"], norms=["l2"]))
    rec = {}
    net = train(hook, 3, record=rec)
    assert not any(m._forward_hooks for m in net.modules())
    assert all(p._backward_hooks for p in net.parameters())
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    for p in PARAMS:
        t = trial.tensor("gradient/Net_" + p)
        assert t.steps() == [0, 1, 2]
        for step in range(3):
            g = rec[step]["grads"][p].double()
            assert t.reduction_value(step, "max") == pytest.approx(g.max().item(), rel=1e-6)
            assert t.reduction_value(step, "l2", abs=False) == pytest.approx(g.norm().item(), rel=1e-6)
    assert trial.tensor("CrossEntropyLoss_output_0").steps() == [0, 1, 2]


def test_smd_hook_options_pass_through(tmp_path):
    """The framework hook takes smd.Hook's keyword-only options (worker, fsync, ...)."""
    hook = smd.Hook(str(tmp_path / "run"), save_config=smd.SaveConfig(save_interval=1),
                    include_collections=["losses"], worker="trainer_7", fsync=True, max_pending_steps=2)
    train(hook, 2)
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert trial.workers() == ["trainer_7"]
    assert trial.tensor("CrossEntropyLoss_output_0").steps() == [0, 1]
    with pytest.raises(TypeError):
        smd.Hook(str(tmp_path / "other"), no_such_option=1)


@pytest.mark.parametrize("closed", [False, True])
def test_torch_save_of_a_registered_model(tmp_path, closed):
    """torch.save(model) (the whole module, pickled) works while the hook is registered and after
    close(), as with smdebug; the loaded model trains without saving, and the hook goes on."""
    hook = hook_every_step(tmp_path / "run")
    net = train(hook, 2)
    if closed:
        hook.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not even torch's "backward hook will not be serialized"
        torch.save(net, tmp_path / "model.pt")
    loaded = torch.load(tmp_path / "model.pt", weights_only=False)
    for p, q in zip(net.parameters(), loaded.parameters()):
        assert torch.equal(p, q)
    x, y = data()
    nn.CrossEntropyLoss()(loaded(x), y).backward()  # runs; its stand-in hook saves nothing
    copied = copy.deepcopy(net)
    copied(x)
    if not closed:
        net(x)  # the original model still steps its hook
        hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert trial.steps() == ([0, 1] if closed else [0, 1, 2])


def test_a_model_registered_after_its_hook_closed_can_be_registered_again(tmp_path):
    first = hook_every_step(tmp_path / "a")
    net = train(first, 1)
    first.close()
    second = hook_every_step(tmp_path / "b")
    second.register_module(net)  # the first hook's mark is gone with its close
    net(data()[0])
    second.close()
    assert create_trial(str(tmp_path / "b")).steps() == [0]


def test_module_functions_smdebug_exports(tmp_path, monkeypatch):
    import smdebug.pytorch as ref
    from fwtest import smdebug_names_missing
    assert smdebug_names_missing(smd, ref) == set()
    assert smd.create_trial is create_trial
    monkeypatch.delenv("SMDEBUG_CONFIG_FILE_PATH", raising=False)
    smd.del_hook()
    assert smd.get_hook() is None
    hook = hook_every_step(tmp_path / "run")
    assert smd.get_hook() is hook
    smd.del_hook()
    assert smd.get_hook() is None
    smd.set_hook(hook)
    assert smd.get_hook() is hook
    with pytest.raises(TypeError, match="set_hook takes an smd hook"):
        smd.set_hook("hook")
    smd.del_hook()
    # without a JSON configuration there is nothing to create (smdebug: None as well)
    monkeypatch.setenv("SMDEBUG_CONFIG_FILE_PATH", str(tmp_path / "missing.json"))
    assert smd.get_hook(create_if_not_exists=True) is None
    hook.close()


def test_the_readmes_pytorch_example_runs_as_written(tmp_path):
    """The README's PyTorch example, run as a script: weights, biases, gradients and the loss
    every 10 steps of its 100."""
    from fwtest import readme_python_examples, run_example
    [example] = readme_python_examples("PyTorch")
    run_example(example, tmp_path)
    trial = create_trial(str(tmp_path / "run-torch"))
    steps = list(range(0, 100, 10))
    for name in ("Sequential_0.weight", "Sequential_2.bias", "gradient/Sequential_0.weight",
                 "gradient/Sequential_2.bias", "CrossEntropyLoss_output_0"):
        assert trial.tensor(name).steps() == steps, name
    assert os.path.exists(tmp_path / "run-torch" / "training_job_end.ts")


def test_reductions_are_smds_own_definitions_not_torchs(tmp_path):
    """docs/frameworks.md, difference 8: std and variance are population statistics
    (torch's, which smdebug's PyTorch hook uses, divide by N - 1), every reduction record has
    shape (1,) (smdebug's: 0-d), and an integer tensor's reductions are written (smdebug's hook
    fails on them)."""
    torch.manual_seed(0)
    net = nn.Linear(3, 2)
    hook = smd.Hook(str(tmp_path / "run"), save_config=smd.SaveConfig(save_interval=1),
                    include_collections=["weights", "ints"],
                    reduction_config=smd.ReductionConfig(reductions=["std", "variance", "mean"]))
    hook.get_collection("ints").include("^labels_output_0$")
    hook.register_module(net)
    net(torch.ones(1, 3))
    hook.record_tensor_value("labels", torch.tensor([0, 1, 1, 3]))
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    w = net.weight.detach().numpy()
    std = trial.tensor("Linear_weight").reduction_value(0, "std")
    var = trial.tensor("Linear_weight").reduction_value(0, "variance")
    assert std.shape == (1,) and var.shape == (1,)
    assert std[0] == pytest.approx(float(np.std(w.astype(np.float64))), rel=1e-6)
    assert var[0] == pytest.approx(float(np.var(w.astype(np.float64))), rel=1e-6)
    assert var[0] != pytest.approx(float(torch.var(net.weight.detach())), rel=1e-3)
    assert trial.tensor("labels_output_0").reduction_value(0, "mean")[0] == pytest.approx(1.25)
