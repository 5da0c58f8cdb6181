"""TensorBoard export, loaded with the REAL tensorboard package (PyPI).

The same hook scenario runs in smd (smd_scenario, public C API) and in smdebug's own hook
(smdebug_scenario.py), both with TensorBoard export on. TensorBoard's own loaders then read:
  * smd's export and smdebug's export: the same runs (one per mode), scalars (tag, step, value)
    and histograms (tag, step, min, max, num, sum, sum_squares, bucket limits and counts);
  * `smd export-tensorboard` of the trial smdebug wrote: the same as smdebug's own export;
  * `smd export-tensorboard` of the trial smd wrote: the same as smd's hook export;
and TensorBoard's data provider (what its HTTP API serves) finds the scalars and histograms too.

Needs `tensorboard` next to smdebug in the test venv (tensorboard 2.16.2 works with smdebug's
protobuf 3.20.3 and numpy 1.26); without it the module is skipped.
"""
import math
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

tensorboard = pytest.importorskip(
    "tensorboard", reason="the tensorboard package is not installed (scripts/requirements.txt pins it)")

from tensorboard.backend.event_processing import event_accumulator as ea  # noqa: E402

from conftest import run_oracle, run_smd_scenario  # noqa: E402
from scenarios import Script, base  # noqa: E402

SIZE = {ea.SCALARS: 0, ea.HISTOGRAMS: 0, ea.COMPRESSED_HISTOGRAMS: 0, ea.TENSORS: 0}


def scenario(rng=None):
    """Every kind of TensorBoard content: histograms of several dtypes and collections (one without
    save_histogram), bool / empty / special-valued tensors, collection scalars (losses, metrics),
    a non-scalar loss, save_scalar values, and TRAIN, EVAL and GLOBAL modes."""
    rng = rng or np.random.default_rng(11)
    s = base().option("save_config", "all", 1, 0, "-", "-").option("export_tensorboard", 1)
    for c in ("weights", "biases", "gradients"):
        s.option("include_collection", c)
    s.create()
    s.add("collection", "custom", "regex", "^act")
    s.add("collection", "custom", "reduction_config", "max", 1, 0)
    s.add("collection", "nohist", "regex", "^nh_")
    s.add("collection", "nohist", "histogram", 0)
    s.add("collection", "metrics", "regex", "^acc$")
    for c in ("custom", "nohist", "metrics"):
        s.add("include", c)

    def train_step(k, scalar=True):
        s.add("step")
        s.tensor("fc.weight", (rng.normal(size=(8, 16)) * 10 ** (k % 3 - 1)).astype(np.float32))
        s.tensor("fc.bias", rng.normal(size=(16,)))
        s.tensor("gradient/fc.weight", (rng.normal(size=(8, 16)) * 1e-9).astype(np.float32))
        s.tensor("act_relu", np.maximum(rng.normal(size=(32,)), 0).astype(np.float16))
        s.tensor("act_int", rng.integers(-1000, 1000, size=(10,)).astype(np.int32))
        s.tensor("act_mask", rng.integers(0, 2, size=(5,)).astype(bool))
        s.tensor("act_special", np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e25, 3.0, -1e-30],
                                         dtype=np.float32))
        s.tensor("act_far", np.array([1e25, -1e30], dtype=np.float64))  # no value in a bucket
        s.tensor("act_empty", np.zeros((0,), dtype=np.float32))
        s.tensor("nh_x", rng.normal(size=(4,)).astype(np.float32))
        s.tensor("loss", np.array([1.0 / (k + 1)], dtype=np.float32))
        s.tensor("acc", np.array(0.5 + k / 100, dtype=np.float64))
        s.tensor("two_loss", np.array([1.0, 2.0], dtype=np.float32))
        if scalar:
            # smdebug writes a save_scalar value with the mode current when the step ends: keep
            # them away from mode switches, where smd (the mode of the call) differs.
            s.add("scalar", "lr", 0.01 * (k + 1))

    s.add("mode", "TRAIN")
    for k in range(3):
        train_step(k, scalar=k < 2)
    s.add("mode", "EVAL")
    for k in range(2):
        s.add("step")
        s.tensor("fc.weight", rng.normal(size=(4, 4)).astype(np.float32))
        s.tensor("loss", np.array([2.0 + k], dtype=np.float32))
    s.add("mode", "TRAIN")
    train_step(3, scalar=False)
    s.add("mode", "GLOBAL")
    s.add("step")
    s.tensor("loss", np.array([0.125], dtype=np.float32))
    return [s.add("close")]


# Tags the scenario must produce (per run), so that two empty exports cannot agree.
EXPECTED_SCALARS = {"TRAIN": {"loss", "acc", "scalar/lr"}, "EVAL": {"loss"}, "GLOBAL": {"loss"}}
EXPECTED_HISTOGRAMS = {
    "TRAIN": {"weights/fc.weight", "biases/fc.bias", "gradients/gradient/fc.weight",
              "custom/act_relu", "custom/act_int", "custom/act_special"},
    "EVAL": {"weights/fc.weight"},
}


def load(root):
    """{run: {"scalars": {(tag, step): [values]}, "histograms": {(tag, step): [HistogramValue]}}}
    as TensorBoard's EventAccumulator reads them."""
    runs = {}
    for run in sorted(os.listdir(root)):
        acc = ea.EventAccumulator(str(Path(root) / run), size_guidance=SIZE)
        acc.Reload()
        tags = acc.Tags()
        scalars, hists = {}, {}
        for t in tags["scalars"]:
            for e in acc.Scalars(t):
                scalars.setdefault((t, e.step), []).append(e.value)
        for t in tags["histograms"]:
            for e in acc.Histograms(t):
                hists.setdefault((t, e.step), []).append(e.histogram_value)
        if scalars or hists:
            runs[run] = {"scalars": scalars, "histograms": hists}
    return runs


def same_float(a, b, rel=0.0):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b) or rel == 0.0:
        return a == b
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-300)


def assert_same_histogram(h, g, where):
    assert list(h.bucket_limit) == list(g.bucket_limit), f"{where}: bucket limits"
    assert list(h.bucket) == list(g.bucket), f"{where}: bucket counts"
    assert h.num == g.num, f"{where}: num"
    assert same_float(h.min, g.min) and same_float(h.max, g.max), f"{where}: min/max"
    # numpy sums pairwise and BLAS computes sum_squares: the last bits may differ.
    assert same_float(h.sum, g.sum, 1e-12), f"{where}: sum {h.sum} != {g.sum}"
    assert same_float(h.sum_squares, g.sum_squares, 1e-12), f"{where}: sum_squares"


def assert_same_logs(ours, theirs):
    assert sorted(ours) == sorted(theirs), "runs (modes)"
    for run in theirs:
        o, t = ours[run], theirs[run]
        assert sorted(o["scalars"]) == sorted(t["scalars"]), f"{run}: scalar tags and steps"
        for key, values in t["scalars"].items():
            assert o["scalars"][key] == values, f"{run} {key}"
        assert sorted(o["histograms"]) == sorted(t["histograms"]), f"{run}: histogram tags and steps"
        for key, hs in t["histograms"].items():
            assert len(o["histograms"][key]) == len(hs), f"{run} {key}"
            for h, g in zip(o["histograms"][key], hs):
                assert_same_histogram(h, g, f"{run} {key}")


def assert_expected_content(logs):
    for run, tags in EXPECTED_SCALARS.items():
        assert {t for t, _ in logs[run]["scalars"]} == tags, run
    for run, tags in EXPECTED_HISTOGRAMS.items():
        assert {t for t, _ in logs[run]["histograms"]} == tags, run
    assert "histograms" not in logs["GLOBAL"] or not logs["GLOBAL"]["histograms"]
    # The values the script saved, at the global steps they were saved at.
    assert logs["TRAIN"]["scalars"][("loss", 0)] == [1.0]
    assert logs["TRAIN"]["scalars"][("loss", 2)] == [pytest.approx(1 / 3, rel=1e-7)]
    assert logs["TRAIN"]["scalars"][("scalar/lr", 1)] == [pytest.approx(0.02, rel=1e-7)]
    assert logs["EVAL"]["scalars"][("loss", 4)] == [3.0]
    assert logs["GLOBAL"]["scalars"][("loss", 6)] == [0.125]
    special = logs["TRAIN"]["histograms"][("custom/act_special", 0)][0]
    assert special.num == 8 and sum(special.bucket) == 4  # NaN, +-inf, 1e25 are in no bucket
    assert math.isnan(special.min) and math.isnan(special.max)


@pytest.fixture(scope="module")
def exports(tmp_path_factory, smd_scenario_bin):
    """The scenario written by smd and by smdebug (trials and their TensorBoard exports)."""
    tmp = tmp_path_factory.mktemp("tensorboard")
    script = scenario()[0]
    out = {}
    for name, runner in (("smd", lambda p: run_smd_scenario(smd_scenario_bin, p)), ("smdebug", run_oracle)):
        trial = tmp / name
        path = tmp / f"{name}.script"
        path.write_text(script.text(trial), encoding="utf-8")
        runner(path)
        out[name] = trial
    return out


def export_tensorboard(smd_bin, trial, out):
    r = subprocess.run([str(smd_bin), "export-tensorboard", str(trial), str(out)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"smd export-tensorboard failed ({r.returncode}):\n{r.stderr}"
    return r


def test_hook_export_matches_smdebug(exports):
    ours = load(exports["smd"] / "tensorboard")
    theirs = load(exports["smdebug"] / "tensorboard")
    assert_expected_content(theirs)
    assert_same_logs(ours, theirs)


def test_hook_export_layout(exports):
    root = exports["smd"] / "tensorboard"
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    names = {f.split("/")[0]: [] for f in files}
    for f in files:
        mode, name = f.split("/")
        step, rest = name.split("_", 1)
        assert len(step) == 12 and step.isdigit(), f
        pid, host = rest[: -len(".tfevents")].split("_", 1)  # <pid>_<hostname>.tfevents
        assert rest.endswith(".tfevents") and pid.isdigit() and host, f
        names[mode].append(int(step))
    assert names == {"TRAIN": [0, 1, 2, 5], "EVAL": [3, 4], "GLOBAL": [6]}


def test_export_of_smdebug_trial_matches_smdebug_export(exports, smd_bin, tmp_path):
    r = export_tensorboard(smd_bin, exports["smdebug"], tmp_path / "tb")
    assert "histogram(s)" in r.stderr
    ours = load(tmp_path / "tb")
    theirs = load(exports["smdebug"] / "tensorboard")
    assert_same_logs(ours, theirs)


def test_export_of_smd_trial_matches_hook_export(exports, smd_bin, tmp_path):
    export_tensorboard(smd_bin, exports["smd"], tmp_path / "tb")
    ours = load(tmp_path / "tb")
    assert_expected_content(ours)
    assert_same_logs(ours, load(exports["smd"] / "tensorboard"))


def test_export_skips_reduction_only_tensors(smd_scenario_bin, smd_bin, tmp_path):
    s = base().option("save_config", "all", 1, 0, "-", "-").option("include_collection", "weights")
    s.option("reduction_config", "max,l2_norm", 0, 1).create().add("mode", "TRAIN")
    s.add("step").tensor("fc.weight", np.arange(6, dtype=np.float32)).tensor("loss", np.array([2.5], np.float32))
    s.add("close")
    path = tmp_path / "s.script"
    path.write_text(s.text(tmp_path / "trial"), encoding="utf-8")
    run_smd_scenario(smd_scenario_bin, path)
    export_tensorboard(smd_bin, tmp_path / "trial", tmp_path / "tb")
    logs = load(tmp_path / "tb")
    assert logs == {"TRAIN": {"scalars": {("loss", 0): [2.5]}, "histograms": {}}}


def test_export_usage_errors(smd_bin, tmp_path):
    r = subprocess.run([str(smd_bin), "export-tensorboard", str(tmp_path / "missing"), str(tmp_path / "o")],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "missing" in r.stderr
    r = subprocess.run([str(smd_bin), "export-tensorboard", "only-one"], capture_output=True, text=True)
    assert r.returncode == 2


def test_export_of_nothing_an_unknown_worker_and_a_complex_scalar(smd_scenario_bin, smd_bin, tmp_path):
    """Nothing to export: an empty OUT and exit 0 (it failed, exit 4, on the staging folder that
    the writer never made). An unknown --worker: exit 7 naming the trial's workers (it exported
    nothing, silently). A one-element complex value in a scalar collection: its real part, as the
    hook's own export writes it (the export skipped it)."""
    s = base().option("save_config", "all", 1, 0, "-", "-").option("include_collection", "weights")
    s.option("reduction_config", "max", 0, 1).create().add("mode", "TRAIN")
    s.add("step").tensor("fc.weight", np.arange(6, dtype=np.float32))
    s.add("close")
    path = tmp_path / "s.script"
    path.write_text(s.text(tmp_path / "trial"), encoding="utf-8")
    run_smd_scenario(smd_scenario_bin, path)
    r = subprocess.run([str(smd_bin), "export-tensorboard", str(tmp_path / "trial"), str(tmp_path / "tb")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "0 scalar(s) and 0 histogram(s)" in r.stderr and (tmp_path / "tb").is_dir()
    assert not list(tmp_path.glob("tb.partial-*"))
    r = subprocess.run([str(smd_bin), "export-tensorboard", "--worker", "nobody", str(tmp_path / "trial"),
                        str(tmp_path / "tb2")], capture_output=True, text=True)
    assert r.returncode == 7 and "Invalid Worker: nobody" in r.stderr and "worker_0" in r.stderr, r.stderr

    c = base().option("save_config", "all", 1, 0, "-", "-").option("export_tensorboard", 1).create()
    c.add("mode", "TRAIN").add("step").tensor("loss", np.array([3 + 4j], np.complex64))
    c.add("close")
    path = tmp_path / "c.script"
    path.write_text(c.text(tmp_path / "complex"), encoding="utf-8")
    run_smd_scenario(smd_scenario_bin, path)
    export_tensorboard(smd_bin, tmp_path / "complex", tmp_path / "tbc")
    assert load(tmp_path / "tbc")["TRAIN"]["scalars"] == {("loss", 0): [3.0]}
    assert load(tmp_path / "complex" / "tensorboard")["TRAIN"]["scalars"] == {("loss", 0): [3.0]}


def test_export_refuses_a_folder_holding_event_files(exports, smd_bin, tmp_path):
    """A second export into the same OUT (or into the hook's own tensorboard folder) would put a
    second set of files beside the first, and TensorBoard would show every point twice."""
    export_tensorboard(smd_bin, exports["smd"], tmp_path / "tb")
    first = sorted(p.relative_to(tmp_path) for p in (tmp_path / "tb").rglob("*.tfevents"))
    r = subprocess.run([str(smd_bin), "export-tensorboard", str(exports["smd"]), str(tmp_path / "tb")],
                       capture_output=True, text=True)
    assert r.returncode == 4 and "already holds TensorBoard event files" in r.stderr, r.stderr
    assert sorted(p.relative_to(tmp_path) for p in (tmp_path / "tb").rglob("*.tfevents")) == first


def test_data_provider_reads_scalars_and_histograms(exports):
    """TensorBoard's data provider (what its HTTP API serves) after its data_compat migration."""
    from tensorboard import context
    from tensorboard.backend.event_processing import data_provider, plugin_event_multiplexer

    root = str(exports["smd"] / "tensorboard")
    mux = plugin_event_multiplexer.EventMultiplexer(tensor_size_guidance={"scalars": 0, "histograms": 0})
    mux.AddRunsFromDirectory(root)
    mux.Reload()
    provider = data_provider.MultiplexerDataProvider(mux, root)
    ctx = context.RequestContext()
    scalars = provider.read_scalars(ctx, experiment_id="", plugin_name="scalars", downsample=10000)
    assert {run: sorted(tags) for run, tags in scalars.items()} == {
        run: sorted(tags) for run, tags in EXPECTED_SCALARS.items()}
    assert [(d.step, d.value) for d in scalars["TRAIN"]["loss"]] == [
        (0, 1.0), (1, 0.5), (2, pytest.approx(1 / 3, rel=1e-7)), (5, 0.25)]
    hists = provider.read_tensors(ctx, experiment_id="", plugin_name="histograms", downsample=10000)
    assert {run: sorted(tags) for run, tags in hists.items()} == {
        run: sorted(tags) for run, tags in EXPECTED_HISTOGRAMS.items()}
    for run, tags in hists.items():
        for tag, data in tags.items():
            for d in data:
                arr = d.numpy  # [k, 3]: left edge, right edge, count (outer edges: min, max)
                assert arr.ndim == 2 and arr.shape[1] == 3, (run, tag)
                assert not np.any(arr[:, 0] > arr[:, 1]), (run, tag)  # NaN min/max compare false
    special = hists["TRAIN"]["custom/act_special"][0].numpy
    assert special[:, 2].sum() == 4
    weight0 = hists["TRAIN"]["weights/fc.weight"][0].numpy
    assert weight0[:, 2].sum() == 8 * 16


def test_rust_data_server_reads_the_export(exports):
    """TensorBoard's default loader (`--load_fast`): the Rust tensorboard-data-server, over gRPC."""
    import time

    from tensorboard import context
    from tensorboard.data import server_ingester
    from tensorboard.util import grpc_util

    try:
        binary = server_ingester.get_server_binary()
    except Exception as e:  # no tensorboard-data-server wheel for this platform
        pytest.skip(f"no TensorBoard data server: {e}")
    root = exports["smd"] / "tensorboard"
    ingester = server_ingester.SubprocessServerDataIngester(
        binary, str(root), reload_interval=0, channel_creds_type=grpc_util.ChannelCredsType.LOCAL,
        samples_per_plugin={"scalars": 0, "histograms": 0})
    ingester.start()
    provider = ingester.data_provider
    ctx = context.RequestContext()
    deadline = time.monotonic() + 60
    while True:  # the server loads the folder once, in the background
        scalars = provider.read_scalars(ctx, experiment_id="", plugin_name="scalars", downsample=10000)
        hists = provider.read_tensors(ctx, experiment_id="", plugin_name="histograms", downsample=10000)
        loaded = {run: sorted(tags) for run, tags in scalars.items()} == {
            run: sorted(tags) for run, tags in EXPECTED_SCALARS.items()}
        if loaded or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    reference = load(root)
    got = {(run, tag, d.step): [d.value] for run, tags in scalars.items() for tag, data in tags.items()
           for d in data}
    want = {(run, tag, step): values for run, r in reference.items() for (tag, step), values in
            r["scalars"].items()}
    assert got == want
    counts = {(run, tag, d.step): d.numpy[:, 2].tolist() for run, tags in hists.items()
              for tag, data in tags.items() for d in data}
    want_counts = {(run, tag, step): list(h[0].bucket) for run, r in reference.items()
                   for (tag, step), h in r["histograms"].items()}
    assert counts.keys() == want_counts.keys()
    for key, c in counts.items():
        assert c == want_counts[key], key


def test_export_of_a_multi_worker_trial(smd_scenario_bin, smd_bin, tmp_path):
    trial = tmp_path / "trial"
    for w in (1, 0):  # the worker writing training_job_end.ts last
        s = base(workers=(f"worker_{w}", 2)).option("save_config", "all", 1, 0, "-", "-")
        s.option("end_marker", int(w == 0)).create()
        s.add("mode", "TRAIN")
        for step in range(2):
            s.add("step").tensor("loss", np.array([10.0 * w + step], np.float32))
        s.add("close")
        path = tmp_path / f"w{w}.script"
        path.write_text(s.text(trial), encoding="utf-8")
        run_smd_scenario(smd_scenario_bin, path)
    export_tensorboard(smd_bin, trial, tmp_path / "first")
    assert load(tmp_path / "first")["TRAIN"]["scalars"] == {("loss", 0): [0.0], ("loss", 1): [1.0]}
    r = subprocess.run([str(smd_bin), "export-tensorboard", "--worker", "worker_1", str(trial),
                        str(tmp_path / "w1")], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert load(tmp_path / "w1")["TRAIN"]["scalars"] == {("loss", 0): [10.0], ("loss", 1): [11.0]}
