"""Fixtures shared by the framework hook suites (each conftest imports what it uses): the real
smdebug reads a trial in a subprocess of the project's .venv (tests/interop/smdebug_dump.py), and
built-in rules run through the `smd` tool of a build (SMD_BUILD_DIR, default build/); and the
TensorBoard histograms of a folder, read to compare a hook's device path with its host path."""
import json
import math
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def smdebug_dump():
    """smdebug_dump(trial) -> the smd-dump/1 document of the real smdebug 1.0.34 over trial."""
    py = REPO / ".venv" / "bin" / "python"
    if not py.exists():
        pytest.fail(f"{py} is missing: scripts/setup.sh makes it (the real smdebug lives there)")

    def dump(trial):
        r = subprocess.run([str(py), str(REPO / "tests" / "interop" / "smdebug_dump.py"), str(trial)],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f"smdebug could not read {trial}: {r.stderr[-2000:]}"
        return json.loads(r.stdout)
    return dump


@pytest.fixture
def smd_tool():
    build = Path(os.environ.get("SMD_BUILD_DIR", REPO / "build"))
    exe = build / "tools" / "smd" / "smd"
    if not exe.exists():
        pytest.fail(f"{exe} is missing: build the repository (cmake --build build --target smd_tool) "
                    "or set SMD_BUILD_DIR")
    return exe


def readme_python_examples(section):
    """The ```python blocks of the README's section `## <section>`, in order."""
    import re
    text = (REPO / "README.md").read_text(encoding="utf-8")
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", body, re.S)


def run_example(code, cwd):
    """Runs example code as a script in folder cwd with this Python; its stdout."""
    import sys
    r = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, f"the example failed:\n{code}\n{r.stderr[-3000:]}"
    return r.stdout


def smdebug_names_missing(ours, theirs):
    """The public names of smdebug's framework module `theirs` that smd's `ours` lacks: its
    functions, classes and the modes module (its other submodules come along with the package)."""
    import inspect
    have = {n for n in dir(ours) if not n.startswith("_")}
    want = {n for n in dir(theirs) if not n.startswith("_")
            and (not inspect.ismodule(getattr(theirs, n)) or n == "modes")}
    return want - have


# ---- TensorBoard histograms (the device paths of the framework hooks against the host path) ----

def _varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def _fields(b):
    """(field number, wire type, value) of a protobuf message; value: int or bytes."""
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 2:
            n, i = _varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError(f"wire type {wt}")
        yield f, wt, v


def tensorboard_histograms(tb_dir):
    """{(step, tag): {min, max, num, sum, sum_squares, bucket_limit, bucket}} of every histogram
    summary in a TensorBoard folder's event files."""
    out = {}
    for root, _, files in os.walk(tb_dir):
        for fn in files:
            data = open(os.path.join(root, fn), "rb").read()
            i = 0
            while i < len(data):
                n = int.from_bytes(data[i:i + 8], "little")
                rec = data[i + 12:i + 12 + n]
                i += 16 + n
                step, summary = 0, None
                for f, _, v in _fields(rec):
                    if f == 2:
                        step = v
                    elif f == 5:
                        summary = v
                if summary is None:
                    continue
                for f, _, value in _fields(summary):
                    tag, histo = None, None
                    for vf, _, vv in _fields(value):
                        if vf == 1:
                            tag = vv.decode()
                        elif vf == 5:
                            histo = vv
                    if histo is None:
                        continue
                    # proto3: a field left at 0 is not written
                    h = {"bucket_limit": [], "bucket": [], "min": 0.0, "max": 0.0, "num": 0.0, "sum": 0.0,
                         "sum_squares": 0.0}
                    names = {1: "min", 2: "max", 3: "num", 4: "sum", 5: "sum_squares"}
                    for hf, wt, hv in _fields(histo):
                        if hf in names:
                            h[names[hf]] = float(np.frombuffer(hv, "<f8")[0])
                        elif hf in (6, 7):
                            key = "bucket_limit" if hf == 6 else "bucket"
                            h[key] += (np.frombuffer(hv, "<f8").tolist() if wt == 2
                                       else [float(np.frombuffer(hv, "<f8")[0])])
                    out[(step, tag)] = h
    return out


def assert_same_histograms(host, dev, count_at_least):
    """Histograms of the host path and of a device path agree: the same histograms, bucket
    counts, edges, element counts, minima and maxima; sums and sums of squares within the bound
    of a float64 sum in another order."""
    assert sorted(host) == sorted(dev) and len(host) >= count_at_least, (sorted(host), sorted(dev))
    for key, h in host.items():
        d = dev[key]
        # counts, edges, element count, min and max: exact; sums: float64 in another order
        assert d["bucket"] == h["bucket"], key
        assert d["bucket_limit"] == h["bucket_limit"], key
        assert d["num"] == h["num"], key
        for k in ("min", "max"):
            assert d[k] == h[k] or (math.isnan(d[k]) and math.isnan(h[k])), (key, k, d[k], h[k])
        for k in ("sum", "sum_squares"):
            a, b = h[k], d[k]
            if math.isnan(a) or math.isinf(a):
                assert a == b or (math.isnan(a) and math.isnan(b)), (key, k, a, b)
            else:
                # a float64 sum of n terms in any order: within n * eps of the sum of magnitudes
                n = h["num"]
                mags = h["sum_squares"] if k == "sum_squares" else math.sqrt(n * h["sum_squares"])
                assert abs(a - b) <= n * 2.3e-16 * mags, (key, k, a, b)
