"""The device paths of smd.pytorch.Hook (smd/pytorch/_device.py), exercised on the CPU with
SMD_TORCH_DEVICE_CAPTURE=always (the code a GPU runs, with synchronous host copies): batched
reductions against the host path's, raw values through the staging pool bit for bit as torch's
(float32, bfloat16, float16), buffer reuse and backpressure under a tiny memory budget, values
modified in place after the hook saw them; and smd.Hook.save_tensor (framework-free) with torch
tensors: bfloat16/float16 saved as themselves, device tensors copied through their producer or
refused naming the device.

SMD_TEST_DEVICE=cuda runs the hook tests on a GPU (the CUDA branches: pinned buffers, the side
stream and its events); the default, cpu, runs the same code with synchronous host copies."""
import math
import os

import numpy as np
import pytest
import torch
import torch.nn as nn

import smd
import smd.pytorch as smdpt
from smd.pytorch import _device
from smd.trials import create_trial
from fwtest import assert_same_histograms, tensorboard_histograms
from models import Net, data

DEV = torch.device(os.environ.get("SMD_TEST_DEVICE", "cpu"))
REDUCTIONS = ["min", "max", "mean", "std", "variance", "sum", "prod", "median", "l1", "l2"]
ALL = REDUCTIONS + ["abs_" + r for r in REDUCTIONS]


def _train(hook, steps, dtype=torch.float32, record=None, seed=0):
    torch.manual_seed(seed)
    net = Net().to(DEV, dtype)
    crit = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    hook.register_module(net)
    hook.register_loss(crit)
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(16, 4, generator=g).to(DEV, dtype)
    y = torch.randint(0, 3, (16,), generator=g).to(DEV)
    for step in range(steps):
        before = {n: p.detach().cpu().clone() for n, p in net.named_parameters()}
        opt.zero_grad(set_to_none=False)  # gradients zeroed in place, after the hook saw them
        loss = crit(net(x).float(), y)
        loss.backward()
        if record is not None:
            record[step] = {"params": before,
                            "grads": {n: p.grad.detach().cpu().clone() for n, p in net.named_parameters()}}
        opt.step()  # parameters updated in place, after the hook saw them
    return net


def _reduction_hook(out, **kw):
    rc = smdpt.ReductionConfig(reductions=REDUCTIONS, abs_reductions=REDUCTIONS)
    return smdpt.Hook(str(out), save_config=smdpt.SaveConfig(save_interval=1),
                      include_collections=["weights", "biases", "gradients", "losses"],
                      reduction_config=rc, **kw)


def _the_pool(hook):
    pools = hook._device.pools()
    assert list(pools) == [str(DEV) if DEV.type == "cpu" else f"{DEV.type}:{DEV.index or 0}"], list(pools)
    return next(iter(pools.values()))


def _bits(a):
    a = np.asarray(a)
    return a.view(np.uint8).tobytes(), a.dtype


_MANTISSA = {"float16": (10, 2.0 ** -24), "bfloat16": (7, 2.0 ** -133), "float32": (23, 2.0 ** -149),
             "float64": (52, 2.0 ** -1074)}


def _num(a):
    """(float value, dtype name) of a 1-element reduction value; bfloat16 comes back as its uint16
    bits where ml_dtypes is missing."""
    a = np.asarray(a).reshape(-1)
    if a.dtype == np.uint16:
        return float(torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16).float()[0]), "bfloat16"
    return float(a[0]), str(a.dtype)


def _ulp(x, dtype):
    """One unit in the last place of x in a floating dtype (by name or numpy dtype)."""
    nmant, tiny = _MANTISSA[np.dtype(dtype).name if not isinstance(dtype, str) else dtype]
    x = abs(float(x))
    if x == 0 or not math.isfinite(x):
        return tiny
    return max(2.0 ** (math.floor(math.log2(x)) - nmant), tiny)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_device_reductions_equal_the_host_paths_within_the_bound(tmp_path, monkeypatch, dtype):
    runs = {}
    for mode in ("off", "always"):
        monkeypatch.setenv("SMD_TORCH_DEVICE_CAPTURE", mode)
        hook = _reduction_hook(tmp_path / mode)
        _train(hook, 3, dtype=dtype)
        if mode == "always":
            # weights+biases at the step's start, gradients at the end of backward: 2 batches a step
            assert hook._device.stats["reduction_batches"] == 6
            assert hook._device.stats["reduced_tensors"] == 3 * 8
            assert hook._device.stats["staged_tensors"] == 3  # the loss (raw) went through staging
        hook.close()
        runs[mode] = create_trial(str(tmp_path / mode))
    host, dev = runs["off"], runs["always"]
    assert host.steps() == dev.steps() == [0, 1, 2]
    assert sorted(host.tensor_names()) == sorted(dev.tensor_names())
    checked = 0
    for name in host.tensor_names():
        if "loss" in name.lower():
            continue
        for step in host.steps():
            hv = host.tensor(name).reduction_values(step)
            dv = dev.tensor(name).reduction_values(step)
            assert set(hv) == set(dv) and len(hv) == len(ALL), (name, sorted(hv), sorted(dv))
            for key, a in hv.items():
                b = dv[key]
                assert np.asarray(a).dtype == np.asarray(b).dtype, (name, key)
                (fa, dt), (fb, _) = _num(a), _num(b)
                if math.isnan(fa) or math.isinf(fa):
                    assert fa == fb or (math.isnan(fa) and math.isnan(fb)), (name, key, fa, fb)
                    continue
                # the documented bound: one unit in the last place of the result dtype
                assert abs(fa - fb) <= _ulp(fa, dt), (name, key, step, fa, fb)
                checked += 1
    assert checked > 100


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_raw_values_through_staging_equal_torchs_bit_for_bit(tmp_path, monkeypatch, dtype):
    monkeypatch.setenv("SMD_TORCH_DEVICE_CAPTURE", "always")
    hook = smdpt.Hook(str(tmp_path / "run"), save_config=smdpt.SaveConfig(save_interval=1),
                      include_collections=["weights", "biases", "gradients", "losses"])
    rec = {}
    _train(hook, 4, dtype=dtype, record=rec)
    staged = hook._device.stats["staged_tensors"]
    hook.close()
    assert staged == 4 * 9  # 4 parameters, 4 gradients and the loss a step
    trial = create_trial(str(tmp_path / "run"))
    tdt = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16"}[dtype]
    for step in range(4):
        for p, want in rec[step]["params"].items():
            got = trial.tensor("Net_" + p).value(step)
            assert str(got.dtype) == tdt or (tdt == "bfloat16" and got.dtype == np.uint16)
            assert np.asarray(got).view(np.uint8).tobytes() == want.contiguous().view(torch.uint8).numpy().tobytes(), (p, step)
        for p, want in rec[step]["grads"].items():
            got = trial.tensor("gradient/Net_" + p).value(step)
            assert np.asarray(got).view(np.uint8).tobytes() == want.contiguous().view(torch.uint8).numpy().tobytes(), (p, step)


def test_staging_buffers_are_reused_and_bounded(tmp_path, monkeypatch):
    monkeypatch.setenv("SMD_TORCH_DEVICE_CAPTURE", "always")
    budget = 1 << 20
    # max_pending_steps=0: each step is written (its buffers released) before the next begins, so
    # reuse does not depend on how fast the writer runs on a busy machine (a writer behind by the
    # whole budget makes the pool drop and reallocate: that is the backpressure test's case)
    hook = smdpt.Hook(str(tmp_path / "run"), save_config=smdpt.SaveConfig(save_interval=1),
                      include_collections=["weights", "biases", "gradients"], memory_budget=budget,
                      max_pending_steps=0)
    _train(hook, 30)
    pool = _the_pool(hook)
    staged = hook._device.stats["staged_tensors"]
    hook.close()
    # allocated once and reused: 9 tensors a step (8 and the loss) over 30 steps, far fewer buffers
    assert staged == 30 * 9
    assert 1 <= pool.allocations <= staged // 3
    assert pool.peak <= budget
    assert create_trial(str(tmp_path / "run")).steps() == list(range(30))


def test_tiny_budget_applies_backpressure_and_loses_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("SMD_TORCH_DEVICE_CAPTURE", "always")
    budget = 8192  # two 4 KiB buffers: every tensor of a step cannot be held at once
    hook = smdpt.Hook(str(tmp_path / "run"), save_config=smdpt.SaveConfig(save_interval=1),
                      include_collections=["weights", "biases", "gradients"], memory_budget=budget)
    net = Net(n_in=64, n_hidden=32, n_out=3).to(DEV)  # fc1.weight: 8 KiB, as large as the whole budget
    rec = {}
    torch.manual_seed(0)
    crit = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    hook.register_module(net)
    hook.register_loss(crit)
    x, y = torch.randn(8, 64).to(DEV), torch.randint(0, 3, (8,)).to(DEV)
    for step in range(5):
        rec[step] = {n: p.detach().cpu().clone() for n, p in net.named_parameters()}
        opt.zero_grad()
        crit(net(x), y).backward()
        opt.step()
    pool = _the_pool(hook)
    hook.close()
    assert pool.waits > 0
    assert pool.peak <= budget
    trial = create_trial(str(tmp_path / "run"))
    for step in range(5):
        for p, want in rec[step].items():
            np.testing.assert_array_equal(trial.tensor("Net_" + p).value(step), want.numpy())
            assert trial.tensor("gradient/Net_" + p).value(step).shape == tuple(want.shape)


def test_staging_pool_logic():
    pool = _device.StagingPool(_device.CpuBackend(), 3 * 4096)
    a = pool.acquire(100, lambda: pytest.fail("no wait needed"))
    b = pool.acquire(5000, lambda: pytest.fail("no wait needed"))
    assert pool.allocated == 3 * 4096 and a.cap == 4096 and b.cap == 8192
    # full: the waiter is called until smd releases a buffer (its flag set by smd's writer)
    calls = []

    def release():
        calls.append(1)
        a.flag[0] = 1
    pool.handed(a)
    pool.handed(b)
    a.flag[0] = b.flag[0] = 0
    c = pool.acquire(10, release)
    assert c is a and calls == [1] and pool.waits == 1
    # a tensor larger than the budget gets a buffer of its own once nothing else is held, freed after use
    pool.handed(c)
    b.flag[0] = 1
    big = pool.acquire(1 << 20, lambda: None)
    assert big.temporary and pool.allocated == 1 << 20
    pool.handed(big)
    big.flag[0] = 1
    pool._reclaim()
    assert pool.allocated == 0 or all(not s.temporary for s in pool.slots)


def test_values_modified_in_place_right_after_are_saved_as_seen(tmp_path, monkeypatch):
    monkeypatch.setenv("SMD_TORCH_DEVICE_CAPTURE", "always")
    hook = smdpt.Hook(str(tmp_path / "run"), save_config=smdpt.SaveConfig(save_interval=1),
                      include_collections=["custom"])
    hook.get_collection("custom").include("^seen")
    net = Net().to(DEV)
    hook.register_module(net)
    x = torch.randn(2, 4).to(DEV)
    seen_at = {}
    for step in range(3):
        net(x)
        t = torch.arange(6, dtype=torch.float32, device=DEV).reshape(2, 3) + step
        seen = t.cpu().clone()
        hook.record_tensor_value("seen", t)
        t.mul_(-100)  # in place, right after the hook saw it
        t.add_(7)
        assert not torch.equal(t.cpu(), seen)
        seen_at[step] = seen
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    for step in range(3):
        np.testing.assert_array_equal(trial.tensor("seen_output_0").value(step), seen_at[step].numpy())


def test_batch_statistics_use_a_fixed_number_of_launches():
    # the same operations whatever the number of tensors: count torch calls through the profiler
    def ops(n):
        ts = [torch.randn(10 + i) for i in range(n)]
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            _device.batch_statistics(ts, {"min", "max", "absmin", "absmax", "sum", "sumsq", "abssum",
                                          "var", "prod", "nan"})
        # views and dtype arithmetic launch no kernel
        return sum(e.count for e in prof.key_averages() if e.key.startswith("aten::") and e.key not in
                   ("aten::view", "aten::reshape", "aten::_reshape_alias", "aten::detach", "aten::flatten",
                    "aten::alias", "aten::empty", "aten::lift_fresh", "aten::slice", "aten::narrow",
                    "aten::as_strided", "aten::expand", "aten::promote_types"))
    assert ops(3) == ops(40)


@pytest.mark.parametrize("mixed", [False, True])
@pytest.mark.parametrize("chunk", [5, 1 << 16])
def test_batch_statistics_of_tensors_cut_into_chunks(monkeypatch, chunk, mixed):
    # each tensor is reduced in rows of `chunk` elements, then its rows: sizes around the row
    # length, empty too; mixed: float16, bfloat16, float32 and float64 tensors in one batch
    monkeypatch.setattr(_device, "_CHUNK", chunk)
    g = torch.Generator().manual_seed(7)
    sizes = [0, 1, chunk - 1, chunk, chunk + 1, 3 * chunk + 2, 2]
    dtypes = [torch.float16, torch.bfloat16, torch.float32, torch.float64] if mixed else [torch.float32]
    ts = [(torch.randn(n, generator=g) * 3).to(dtypes[i % len(dtypes)]).to(DEV)
          for i, n in enumerate(sizes)]
    wanted = {"nan", "min", "max", "absmin", "absmax", "sum", "abssum", "sumsq", "var", "absvar",
              "prod", "absprod"}
    out, names, _ = _device.batch_statistics(ts, wanted)
    got = {name: out[:, i].cpu().tolist() for i, name in enumerate(names)}
    for k, t in enumerate(ts):
        x = t.cpu().double().numpy()
        a = np.abs(x)
        want = {"nan": 0.0, "sum": x.sum(), "abssum": a.sum(), "sumsq": (x * x).sum(),
                "prod": x.prod(), "absprod": a.prod(),
                "min": x.min() if x.size else math.inf, "max": x.max() if x.size else -math.inf,
                "absmin": a.min() if a.size else math.inf, "absmax": a.max() if a.size else -math.inf,
                "var": ((x - x.mean()) ** 2).sum() if x.size else 0.0,
                "absvar": ((a - a.mean()) ** 2).sum() if a.size else 0.0}
        for name, w in want.items():
            v = got[name][k]
            if name in ("min", "max", "absmin", "absmax", "nan"):
                assert v == w, (sizes[k], name, v, w)
            else:
                assert v == pytest.approx(w, rel=1e-12, abs=1e-300), (sizes[k], name, v, w)


def test_batch_statistics_tell_which_tensors_hold_a_nan(monkeypatch):
    # a NaN first (in the padding of the extremes' rows too), last in a padded row, in a full row,
    # beside infinities; the others hold none
    monkeypatch.setattr(_device, "_CHUNK", 5)
    nan, inf = float("nan"), float("inf")
    ts = [torch.tensor(v).to(DEV) for v in (
        [nan, 1.0, 2.0], [1.0] * 7 + [nan], [1.0, 2.0, nan, 4.0, 5.0, 6.0], [inf, -inf, 1.0],
        [-1.0] * 6, [], [0.5])]
    for wanted in ({"nan"}, {"nan", "max"}, {"nan", "min", "sum"}):
        out, names, _ = _device.batch_statistics(ts, wanted)
        held = [v != 0 for v in out[:, names.index("nan")].cpu().tolist()]
        assert held == [True, True, True, False, False, False, False], (wanted, held)
    out, names, _ = _device.batch_statistics(ts, {"nan", "max", "min"})
    assert out[3, names.index("max")].item() == inf and out[3, names.index("min")].item() == -inf
    assert out[4, names.index("max")].item() == -1.0  # not the zeros padding its last row


def test_batch_layouts_are_reused_for_new_values_and_told_apart_by_dtype(monkeypatch):
    # a hook offers the same shapes step after step: the kept layout (index tensors, padding) must
    # serve new values, and tensors of the same sizes in other dtypes must not share it
    monkeypatch.setattr(_device, "_CHUNK", 4)
    monkeypatch.setattr(_device, "_layouts", {})
    g = torch.Generator().manual_seed(3)
    sizes = [6, 4, 1, 0, 9]
    wanted = {"nan", "min", "max", "absmin", "absmax", "sum", "sumsq", "var"}

    def check(ts):
        out, names, _ = _device.batch_statistics(ts, wanted)
        for k, t in enumerate(ts):
            x = t.cpu().double().numpy()
            want = {"min": x.min() if x.size else math.inf, "max": x.max() if x.size else -math.inf,
                    "absmin": abs(x).min() if x.size else math.inf,
                    "absmax": abs(x).max() if x.size else -math.inf,
                    "sum": x.sum(), "sumsq": (x * x).sum(), "nan": 0.0,
                    "var": ((x - x.mean()) ** 2).sum() if x.size else 0.0}
            for name, w in want.items():
                assert out[k, names.index(name)].item() == pytest.approx(w, rel=1e-12, abs=1e-300), (k, name)

    for step in range(3):  # negative values: a zero in the padding would be a wrong maximum
        check([(-1 - torch.rand(n, generator=g) * (step + 1)).to(DEV) for n in sizes])
    assert len(_device._layouts) == 1
    check([(-1 - torch.rand(n, generator=g)).to(DEV, torch.float16) for n in sizes])
    check([(1 + torch.rand(n, generator=g)).to(DEV, torch.float64) for n in sizes])
    assert len(_device._layouts) == 3
    for n in range(1, 40):  # kept layouts stay few
        _device.batch_statistics([torch.ones(n, device=DEV)], {"sum"})
    assert len(_device._layouts) <= 32


def test_reductions_of_special_values_match_the_host_path(tmp_path, monkeypatch):
    tensors = {
        "gradient/nan": torch.tensor([1.0, float("nan"), -3.0]),
        "gradient/inf": torch.tensor([float("inf"), 2.0, -1.0]),
        "gradient/empty": torch.zeros(0, 3),
        "gradient/one": torch.tensor([[-2.5]]),
        "gradient/big": torch.randn(1000, 37, generator=torch.Generator().manual_seed(3)) * 1e3,
        "gradient/half": torch.randn(50, generator=torch.Generator().manual_seed(4)).half(),
        "gradient/f64": torch.randn(300, generator=torch.Generator().manual_seed(5)).double(),
    }
    rc = smd.ReductionConfig(reductions=REDUCTIONS, abs_reductions=REDUCTIONS)
    out = {}
    for mode in ("host", "device"):
        h = smd.Hook(str(tmp_path / mode), save_config=smd.SaveConfig(save_interval=1),
                     include_collections=["gradients"], reduction_config=rc)
        h.begin_step()
        if mode == "host":
            for n, t in tensors.items():
                h.save_tensor(n, t.numpy())
        else:
            cap = _device.DeviceCapture(h._hook)
            cap.mode = "always"
            with cap.batch():
                for n, t in tensors.items():
                    assert cap.offer(n, t.to(DEV), smd.smdc.smd_dtype_from_name(str(t.numpy().dtype)))
            cap.flush()
        h.close()
        out[mode] = create_trial(str(tmp_path / mode))
    for n, t in tensors.items():
        hv = out["host"].tensor(n).reduction_values(0)
        dv = out["device"].tensor(n).reduction_values(0)
        assert set(hv) == set(dv), n
        for key in hv:
            assert np.asarray(hv[key]).dtype == np.asarray(dv[key]).dtype, (n, key)
            (fa, dt), (fb, _) = _num(hv[key]), _num(dv[key])
            if math.isnan(fa) or math.isnan(fb) or math.isinf(fa) or math.isinf(fb):
                assert fa == fb or (math.isnan(fa) and math.isnan(fb)), (n, key, fa, fb)
                continue
            if dt == "float64":  # float64 tensors: the float64 sum bound, n * 2^-52 * (sum|x| + sum x^2)
                bound = t.numel() * 2.0 ** -52 * float(t.double().abs().sum() + t.double().pow(2).sum()) + 1e-300
                assert abs(fa - fb) <= bound, (n, key)
            else:
                assert abs(fa - fb) <= _ulp(fa, dt), (n, key, fa, fb)


# -- the framework-free hook with torch tensors ---------------------------------------------------

def _plain_hook(out):
    return smd.Hook(str(out), save_config=smd.SaveConfig(save_interval=1), include_collections=["custom"])


def test_framework_free_hook_saves_bfloat16_and_float16_torch_tensors_as_themselves(tmp_path):
    h = _plain_hook(tmp_path / "run")
    h.begin_step()
    bf = torch.tensor([[1.5, -2.0, 3.25]], dtype=torch.bfloat16)
    h.save_tensor("bf16", bf, "custom")
    h.save_tensor("bf16_t", bf.t(), "custom")  # not contiguous
    h.save_tensor("f16", torch.arange(4, dtype=torch.float16), "custom")
    h.save_tensor("grad", torch.ones(2, requires_grad=True) * 2, "custom")
    on_dev = torch.arange(6, dtype=torch.float32, device=DEV).reshape(2, 3) * 1.5  # a real CUDA tensor on a GPU
    h.save_tensor("on_dev", on_dev, "custom")
    h.save_tensor("on_dev_bf16", on_dev.bfloat16(), "custom")
    h.close()
    trial = create_trial(str(tmp_path / "run"))
    v = trial.tensor("bf16").value(0)
    assert str(v.dtype) in ("bfloat16", "uint16")  # uint16: its bits, where ml_dtypes is missing
    assert np.asarray(v).view(np.uint16).tobytes() == bf.view(torch.int16).numpy().tobytes()
    assert trial.tensor("bf16_t").value(0).shape == (3, 1)
    assert trial.tensor("f16").value(0).dtype == np.float16
    np.testing.assert_array_equal(trial.tensor("grad").value(0), [2.0, 2.0])
    np.testing.assert_array_equal(trial.tensor("on_dev").value(0), on_dev.cpu().numpy())
    assert (np.asarray(trial.tensor("on_dev_bf16").value(0)).view(np.uint16).tobytes()
            == on_dev.bfloat16().cpu().view(torch.int16).numpy().tobytes())


def test_framework_free_hook_saves_flagged_views_and_torch_scalars_as_their_values(tmp_path):
    # torch views whose negation or conjugation is only a flag (DLPack does not carry it) are
    # saved as their values; a torch scalar (a loss that requires grad, bfloat16) is saved by
    # save_scalar in its dtype (bfloat16 as float32); what is neither numbers nor text is refused
    h = _plain_hook(tmp_path / "run")
    h.begin_step()
    neg = torch.tensor([1.0, 2.0])._neg_view()
    z = torch.tensor([1 + 2j, 3 - 1j], dtype=torch.complex64)
    h.save_tensor("neg", neg, "custom")
    h.save_tensor("conj", z.conj(), "custom")
    h.save_tensor("conj_imag", z.conj().imag, "custom")
    loss = (torch.ones(3, requires_grad=True) * 1.5).sum()
    h.save_scalar("loss", loss)
    h.save_scalar("bf16", torch.tensor(0.5, dtype=torch.bfloat16))
    h.save_scalar("conj", torch.tensor(1 + 2j, dtype=torch.complex64).conj())
    for bad in (None, {"a": 1}):
        with pytest.raises(TypeError, match="neither numbers nor text"):
            h.save_tensor("bad", bad, "custom")
    h.close()
    trial = create_trial(str(tmp_path / "run"))
    np.testing.assert_array_equal(trial.tensor("neg").value(0), [-1.0, -2.0])
    np.testing.assert_array_equal(trial.tensor("conj").value(0), z.conj().resolve_conj().numpy())
    np.testing.assert_array_equal(trial.tensor("conj_imag").value(0), [-2.0, 1.0])
    v = trial.tensor("scalar/loss").value(0)
    assert v.dtype == np.float32 and float(v[0]) == 4.5
    v = trial.tensor("scalar/bf16").value(0)
    assert v.dtype == np.float32 and float(v[0]) == 0.5
    v = trial.tensor("scalar/conj").value(0)
    assert v.dtype == np.complex64 and complex(v[0]) == 1 - 2j


def test_pytorch_hooks_save_scalar_keeps_a_tensors_dtype(tmp_path):
    hook = smdpt.Hook(str(tmp_path / "run"), save_config=smdpt.SaveConfig(save_interval=1))
    net = Net()
    hook.register_module(net)
    net(torch.randn(2, 4))
    hook.save_scalar("f32", torch.tensor(0.25))
    hook.save_scalar("i32", torch.tensor(3, dtype=torch.int32))
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert trial.tensor("scalar/f32").value(0).dtype == np.float32
    assert trial.tensor("scalar/i32").value(0).dtype == np.int32


class _OnDevice:
    """A DLPack producer that says it lives on CUDA device 0 (a CPU array underneath)."""

    def __init__(self, a, copy_ok, with_cpu):
        self.a = a
        self.copy_ok = copy_ok
        if with_cpu:
            self.cpu = lambda: torch.from_numpy(self.a)

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        if dl_device == (1, 0) and copy and self.copy_ok:
            return np.array(self.a).__dlpack__()
        raise BufferError("Unsupported device in DLTensor.")


def test_framework_free_hook_copies_device_tensors_through_their_producer_or_names_the_device(tmp_path):
    h = _plain_hook(tmp_path / "run")
    h.begin_step()
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    h.save_tensor("by_dlpack", _OnDevice(a, copy_ok=True, with_cpu=False), "custom")
    h.save_tensor("by_cpu", _OnDevice(a + 1, copy_ok=False, with_cpu=True), "custom")
    with pytest.raises(TypeError, match="cuda:0"):
        h.save_tensor("refused", _OnDevice(a, copy_ok=False, with_cpu=False), "custom")
    h.close()
    trial = create_trial(str(tmp_path / "run"))
    np.testing.assert_array_equal(trial.tensor("by_dlpack").value(0), a)
    np.testing.assert_array_equal(trial.tensor("by_cpu").value(0), a + 1)
    assert "refused" not in trial.tensor_names()


def test_save_reductions_binding_refuses_a_missing_reduction(tmp_path):
    h = smd.Hook(str(tmp_path / "run"), save_config=smd.SaveConfig(save_interval=1),
                 include_collections=["gradients"],
                 reduction_config=smd.ReductionConfig(reductions=["min", "l2"]))
    h.begin_step()
    *names, value, histogram = smd.smdc.smd_hook_due_reductions(h._hook, "gradient/x")
    assert names == ["min", "l2"] and value is False and histogram is False
    with pytest.raises(Exception, match="reduction min is due"):
        smd.smdc.smd_hook_save_reductions(h._hook, "gradient/x", 1, [3], [("l2", False, 1.0)], None, [])
    h.close()


# ---- TensorBoard histograms on the device ---------------------------------------------------

def _histogram_runs(tmp_path, monkeypatch, dtype):
    runs = {}
    for mode in ("off", "always"):
        monkeypatch.setenv("SMD_TORCH_DEVICE_CAPTURE", mode)
        rc = smdpt.ReductionConfig(reductions=["max", "mean"], norms=["l2"])
        hook = smdpt.Hook(str(tmp_path / mode), save_config=smdpt.SaveConfig(save_interval=1),
                          include_collections=["weights", "biases", "gradients", "losses"],
                          reduction_config=rc, tensorboard_dir=str(tmp_path / (mode + "_tb")))
        _train(hook, 3, dtype=dtype)
        if mode == "always":
            assert hook._device.stats["staged_tensors"] == 3  # only the loss went to the host whole
        hook.close()
        runs[mode] = (tmp_path / mode, tensorboard_histograms(tmp_path / (mode + "_tb")))
    return runs


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_device_histograms_equal_the_host_paths(tmp_path, monkeypatch, dtype):
    runs = _histogram_runs(tmp_path, monkeypatch, dtype)
    (host_dir, host), (dev_dir, dev) = runs["off"], runs["always"]
    # weights, biases and gradients of the 4 parameters, 3 steps
    assert_same_histograms(host, dev, 3 * 8)
    host_t, dev_t = create_trial(str(host_dir)), create_trial(str(dev_dir))
    assert sorted(host_t.tensor_names()) == sorted(dev_t.tensor_names())


def test_device_histograms_of_special_values(tmp_path, monkeypatch):
    monkeypatch.setenv("SMD_TORCH_DEVICE_CAPTURE", "always")
    g = torch.Generator().manual_seed(9)
    tensors = {
        "gradient/nan": torch.tensor([1.0, float("nan"), -3.0]),
        "gradient/inf": torch.tensor([float("inf"), 2.0, -1.0, -float("inf")]),
        "gradient/edges": torch.tensor(smd.smdc.smd_histogram_bucket_edges()[::97], dtype=torch.float64),
        "gradient/far": torch.tensor([1e25, -1e21, 3.0, 0.0, -0.0, 1e-13]),
        "gradient/all_out": torch.tensor([float("inf"), float("nan")]),
        "gradient/big": torch.randn(300, 70, generator=g) * 10,
        "gradient/int": torch.arange(-5, 5, dtype=torch.int32),
    }
    out = {}
    for mode in ("off", "always"):
        monkeypatch.setenv("SMD_TORCH_DEVICE_CAPTURE", mode)
        h = smd.Hook(str(tmp_path / mode), save_config=smd.SaveConfig(save_interval=1),
                     include_collections=["gradients"], tensorboard_dir=str(tmp_path / (mode + "_tb")),
                     reduction_config=smd.ReductionConfig(reductions=["min", "max"]))
        cap = _device.DeviceCapture(h._hook) if mode == "always" else None
        for step in range(2):
            h.begin_step()
            for name, t in tensors.items():
                t = t.to(DEV)
                if cap is None or not cap.offer(name, t, smd.smdc.SMD_DTYPE_FLOAT32 if t.dtype == torch.float32
                                                else smd.smdc.SMD_DTYPE_FLOAT64 if t.dtype == torch.float64
                                                else smd.smdc.SMD_DTYPE_INT32):
                    h.save_tensor(name, t.cpu().numpy(), collections_to_write=["gradients"])
            if cap is not None:
                cap.flush()
        if cap is not None:
            # every floating tensor reduced with its histogram on the device; the int32 one whole
            assert cap.stats["reduced_tensors"] == 2 * 6 and cap.stats["staged_tensors"] == 2
        h.close()
        out[mode] = tensorboard_histograms(tmp_path / (mode + "_tb"))
    # all_out has nothing within the edges: no histogram either way
    assert not any("all_out" in tag for _, tag in out["off"])
    assert_same_histograms(out["off"], out["always"], 2 * 6)


def test_bucket_counts_follow_numpys_rules():
    edges = torch.tensor(smd.smdc.smd_histogram_bucket_edges(), dtype=torch.float64)
    nb = edges.numel() - 1
    xs = [edges[0].item(), edges[-1].item(), edges[5].item(), float(np.nextafter(edges[5].item(), -np.inf)),
          float("nan"), float("inf"), 1e21, 0.0, -1e-300]
    flat = torch.tensor(xs + xs[:3], dtype=torch.float64)
    lengths = torch.tensor([len(xs), 3])
    counts = _device._bucket_counts(flat, lengths, flat.numel(), [True, True], edges)
    assert counts.shape == (2, nb)
    want = np.zeros(nb)
    for x in xs:
        if math.isfinite(x) and edges[0].item() <= x <= edges[-1].item():
            b = int(np.searchsorted(edges.numpy(), x, side="right")) - 1
            want[min(b, nb - 1)] += 1
    np.testing.assert_array_equal(counts[0].numpy(), want)
    assert counts[1].sum().item() == 3 and counts[1, 0].item() == 1 and counts[1, nb - 1].item() == 1
    # only the marked tensors get a row
    only = _device._bucket_counts(flat, lengths, flat.numel(), [False, True], edges)
    np.testing.assert_array_equal(only[0].numpy(), counts[1].numpy())


def test_save_reductions_binding_takes_a_histogram(tmp_path):
    h = smd.Hook(str(tmp_path / "run"), save_config=smd.SaveConfig(save_interval=1),
                 include_collections=["gradients"], tensorboard_dir=str(tmp_path / "tb"),
                 reduction_config=smd.ReductionConfig(reductions=["max"]))
    h.begin_step()
    *names, value, histogram = smd.smdc.smd_hook_due_reductions(h._hook, "gradient/x")
    assert names == ["max"] and value is False and histogram is True
    nb = len(smd.smdc.smd_histogram_bucket_edges()) - 1
    counts = np.zeros(nb, dtype=np.uint64)
    with pytest.raises(Exception, match="histogram of it is due"):
        smd.smdc.smd_hook_save_reductions(h._hook, "gradient/x", 1, [3], [("max", False, 2.0)], None, [])
    with pytest.raises(Exception, match="1548 buckets"):
        smd.smdc.smd_hook_save_reductions(h._hook, "gradient/x", 1, [3], [("max", False, 2.0)],
                                          (0.0, 2.0, 3.0, 5.0, counts[:10]), [])
    with pytest.raises(TypeError):
        smd.smdc.smd_hook_save_reductions(h._hook, "gradient/x", 1, [3], [("max", False, 2.0)],
                                          (0.0, 2.0, 3.0, 5.0, counts.astype(np.float64)), [])
    counts[nb // 2] = 3
    smd.smdc.smd_hook_save_reductions(h._hook, "gradient/x", 1, [3], [("max", False, 2.0)],
                                      (0.0, 2.0, 3.0, 5.0, counts), [])
    h.close()
    hists = tensorboard_histograms(tmp_path / "tb")
    assert len(hists) == 1
    (hist,) = hists.values()
    assert hist["num"] == 3 and hist["max"] == 2.0 and sum(hist["bucket"]) == 3


def test_gpu_benchmark_runs_on_the_cpu(tmp_path):
    # tests/bench/frameworks/gpu_bench.py is the GPU measurement; without a GPU it runs a small CNN
    # on the CPU, once here at its smallest, so that it cannot rot.
    import json
    import subprocess
    import sys
    from pathlib import Path
    bench = Path(__file__).resolve().parents[2] / "bench" / "frameworks" / "gpu_bench.py"
    import os
    # the device paths on the CPU too (SMD_TORCH_DEVICE_CAPTURE=always), so that --soak has a pool
    env = dict(os.environ, SMD_TORCH_DEVICE_CAPTURE="always")
    r = subprocess.run([sys.executable, str(bench), "--tiny", "--out", str(tmp_path), "--soak", "5",
                        "--skip", "smdebug:everything every 100"],
                       capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    rows = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    assert rows[0]["device"].startswith("CPU")
    assert rows[1]["bytes_per_step"] > 0 and rows[1]["bound_ms"] > 0
    assert rows[2]["batch_statistics_ms"] > 0 and rows[2]["foreach_norm_ms"] > 0
    soak = rows[-1]
    assert soak["soak_steps"] == 5 and soak["staged_tensors"] > 5 * 10, soak
    (pool,) = soak["pools"].values()
    assert 0 < pool["peak"] <= soak["budget_bytes"] and pool["allocations"] >= 1, soak
    runs = {(x["precision"], x["config"], x["hook"]) for x in rows[3:-1]}
    for precision in ("fp32", "bf16"):
        assert (precision, "none", "none") in runs
        for config in ("everything every 100", "everything every 10", "everything every step",
                       "gradients max/mean/l2 + loss every step",
                       "loss every step (default collections)"):
            assert (precision, config, "smd") in runs
            assert ((precision, config, "smdebug") in runs) == (config != "everything every 100"), r.stdout


def _grads_hook(out, raw=False):
    kw = {} if raw else dict(reduction_config=smdpt.ReductionConfig(reductions=["max"], norms=["l2"]))
    return smdpt.Hook(str(out), save_config=smdpt.SaveConfig(save_interval=1),
                      include_collections=["weights", "gradients", "losses"], **kw)


@pytest.mark.parametrize("raw", [False, True])
def test_end_step_and_flush_save_what_the_device_paths_hold(tmp_path, monkeypatch, raw):
    # hook.flush() and hook.end_step() complete the step with the device paths' reductions and
    # copies in it: not left for the next step, and close() after end_step has nothing to refuse
    monkeypatch.setenv("SMD_TORCH_DEVICE_CAPTURE", "always")
    hook = _grads_hook(tmp_path / "run", raw)
    torch.manual_seed(0)
    net, crit = Net().to(DEV), nn.CrossEntropyLoss()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    hook.register_module(net)
    hook.register_loss(crit)
    x, y = (t.to(DEV) for t in data())
    opt.zero_grad()
    crit(net(x), y).backward()
    opt.step()
    hook.flush()
    assert not hook._device._pending and not hook._device._batches and not hook._device._copies
    hook.end_step()
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    steps = {n: trial.tensor(n).steps() for n in trial.tensor_names()}
    assert len(steps) == 7 and all(s == [0] for s in steps.values()), steps


def test_a_backward_pass_that_raised_does_not_defer_the_next_ones_reductions(tmp_path, monkeypatch):
    # a backward pass raising after smd queued its end-of-pass callback (an out-of-memory error,
    # caught and retried): the retried pass's gradients are still reduced when it ends, before the
    # in-place clipping and update that follow it
    monkeypatch.setenv("SMD_TORCH_DEVICE_CAPTURE", "always")
    hook = smdpt.Hook(str(tmp_path / "run"), save_config=smdpt.SaveConfig(save_interval=1),
                      include_collections=["gradients"],
                      reduction_config=smdpt.ReductionConfig(reductions=["max"]))
    torch.manual_seed(0)
    net, crit = Net().to(DEV), nn.CrossEntropyLoss()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    fail = [True]

    def out_of_memory(g):
        if fail[0]:
            fail[0] = False
            raise RuntimeError("out of memory (simulated)")
    net.fc1.weight.register_hook(out_of_memory)
    hook.register_module(net)
    x, y = (t.to(DEV) for t in data())
    seen = {}
    for step in range(2):
        opt.zero_grad(set_to_none=False)
        loss = crit(net(x), y)
        try:
            loss.backward(retain_graph=True)
        except RuntimeError:
            opt.zero_grad(set_to_none=False)
            loss.backward()
        assert not hook._device._pending, step  # reduced when the retried pass ended
        seen[step] = net.fc1.weight.grad.max().item()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1e-3)  # in place
        opt.step()
        opt.zero_grad(set_to_none=False)  # in place: the gradients are zeros now
    hook.close()
    t = create_trial(str(tmp_path / "run")).tensor("gradient/Net_fc1.weight")
    assert t.steps() == [0, 1]
    for step in (0, 1):
        assert float(np.asarray(t.reduction_value(step, "max", abs=False)).reshape(-1)[0]) == \
            pytest.approx(seen[step], rel=1e-6)


def test_gradients_on_the_reduction_path_become_grad_without_a_copy(tmp_path, monkeypatch):
    # autograd makes a backward pass's gradient the parameter's .grad without copying it unless
    # something else holds a reference to that very tensor: the hook must not
    monkeypatch.setenv("SMD_TORCH_DEVICE_CAPTURE", "always")
    hook = _grads_hook(tmp_path / "run")
    torch.manual_seed(0)
    net, crit = Net().to(DEV), nn.CrossEntropyLoss()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    ptrs = {}
    for n, p in net.named_parameters():  # registered first: runs before the hook's
        p.register_hook(lambda g, n=n: ptrs.__setitem__(n, g.data_ptr()))
    hook.register_module(net)
    x, y = (t.to(DEV) for t in data())
    for step in range(2):
        opt.zero_grad()  # set_to_none
        crit(net(x), y).backward()
        assert all(ptrs[n] == p.grad.data_ptr() for n, p in net.named_parameters()), step
        opt.step()
    hook.close()


@pytest.mark.parametrize("collections,regex", [(["weights", "biases"], None),
                                               (["weights", "biases", "gradients"], None),
                                               ([], "gradient/Net_fc2.bias")])
def test_every_copy_is_ordered_before_the_optimizer_runs(tmp_path, monkeypatch, collections, regex):
    # the producing stream must wait for each copy before the optimizer's in-place update: with
    # parameters saved and no gradient hook, or a single gradient saved raw
    monkeypatch.setenv("SMD_TORCH_DEVICE_CAPTURE", "always")
    issued = []

    class Event:
        ordered = False

        def query(self):
            return True

        def synchronize(self):
            pass
    copy = _device.CpuBackend.copy_to_host

    def copy_to_host(self, dst, src):
        copy(self, dst, src)
        issued.append(Event())
        return issued[-1]

    def producer_waits(self, events):
        for e in events:
            e.ordered = True
    monkeypatch.setattr(_device.CpuBackend, "copy_to_host", copy_to_host)
    monkeypatch.setattr(_device.CpuBackend, "producer_waits", producer_waits)
    hook = smdpt.Hook(str(tmp_path / "run"), save_config=smdpt.SaveConfig(save_interval=1),
                      include_collections=collections, include_regex=[regex] if regex else None)
    torch.manual_seed(0)
    net, crit = Net(), nn.CrossEntropyLoss()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    hook.register_module(net)
    hook.register_loss(crit)
    x, y = data()
    for step in range(2):
        opt.zero_grad()
        crit(net(x), y).backward()
        assert issued and all(e.ordered for e in issued), (step, [e.ordered for e in issued])
        torch.nn.utils.clip_grad_norm_(net.parameters(), 0.01)
        opt.step()
        issued.clear()
    hook.close()


def test_staging_asks_only_the_oldest_copy_whether_it_completed(tmp_path, monkeypatch):
    # copies on a GPU complete later than they are staged: staging a step's tensors must not ask
    # every earlier copy again for each new one (that was n^2 / 2 event queries a saving step)
    monkeypatch.setenv("SMD_TORCH_DEVICE_CAPTURE", "always")
    counts = {"query": 0}

    class Event:
        done = False

        def query(self):
            counts["query"] += 1
            return self.done

        def synchronize(self):
            self.done = True
    copy = _device.CpuBackend.copy_to_host

    def copy_to_host(self, dst, src):
        copy(self, dst, src)
        return Event()
    monkeypatch.setattr(_device.CpuBackend, "copy_to_host", copy_to_host)
    hook = smdpt.Hook(str(tmp_path / "run"), save_config=smdpt.SaveConfig(save_interval=1),
                      include_collections=["weights", "biases", "gradients", "losses"])
    net = nn.Sequential(*[nn.Linear(4, 4) for _ in range(20)])
    crit = nn.MSELoss()
    hook.register_module(net)
    hook.register_loss(crit)
    x = torch.randn(8, 4)
    for _ in range(2):
        net.zero_grad()
        crit(net(x), x).backward()
    staged = hook._device.stats["staged_tensors"]
    assert staged >= 2 * 80
    assert counts["query"] <= staged, (counts, staged)
    hook.close()
    trial = create_trial(str(tmp_path / "run"))
    assert trial.tensor("gradient/Sequential_19.weight").steps() == [0, 1]
