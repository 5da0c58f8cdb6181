"""Where smd's hook deliberately writes something smdebug's would not (docs/compatibility.md,
"Writing"): the real smdebug still opens the trial, and reads exactly what smd's semantics say.

W1 norms are vector norms over all elements, for any rank (smdebug: matrix norms for 2-D);
W2 l1/l2 of a 0-d tensor are written (smdebug skips them);
W3 median is a reduction (smdebug rejects it);
W5 save_scalar goes into the step during which it was called;
W6 a tensor saved into several collections belongs to all of them, and those are saved;
W7 the collections file is rewritten at close with names first seen late;
W11 bfloat16 tensors are written (decoded here from the event file: smdebug cannot read them).
"""
import json
import struct

import numpy as np
import pytest

from conftest import run_smd_scenario
from scenarios import Script, base, values


def run(tmp_path, smd_bin, script):
    out = tmp_path / "trial"
    path = tmp_path / "s.script"
    path.write_text(script.text(out), encoding="utf-8")
    run_smd_scenario(smd_bin, path)
    return out


def trial_of(out):
    from smdebug.trials import create_trial

    return create_trial(str(out))


def test_vector_norms_zero_d_norms_and_median(tmp_path, smd_scenario_bin):
    s = base().every_step().option("include_collection", "k").create()
    s.add("collection", "k", "regex", "^m")
    s.add("collection", "k", "reduction_config", "l1_norm,l2_norm,abs_l2_norm,median,abs_median", 0, 0)
    s.add("step")
    m2 = np.array([[1, -2], [3, 4]], dtype=np.float32)
    m3 = values("float64", (2, 3, 4), 9)
    s.tensor("m2", m2).tensor("m3", m3).tensor("m0", np.array(-3.0, dtype=np.float64))
    trial = trial_of(run(tmp_path, smd_scenario_bin, s.add("close")))

    def red(name, op, absolute=False):
        return np.asarray(trial.tensor(name).reduction_value(0, op, abs=absolute)).reshape(())

    # W1: vector norms, any rank (numpy's 2-D l1 would be 6, the max column sum)
    assert red("m2", "l1") == np.float32(10)
    assert red("m2", "l2").dtype == np.float32
    assert red("m2", "l2") == np.float32(np.sqrt(30.0))
    assert red("m3", "l2", True) == np.sqrt(np.sum(m3.astype(np.float64) ** 2))
    # W2: 0-d tensors get their norms too
    assert red("m0", "l1") == 3.0 and red("m0", "l2") == 3.0
    # W3: median, plain and abs
    assert red("m2", "median") == np.float32(2.0)
    assert red("m2", "median", True) == np.float32(2.5)
    assert red("m3", "median") == np.median(m3)


def test_scalar_goes_into_the_step_it_was_called_in(tmp_path, smd_scenario_bin):
    s = base().option("save_config", "all", 2, 0, "-", "-").option("include_collection", "weights").create()
    s.add("mode", "TRAIN")
    for step in range(4):
        s.add("step")
        s.tensor("fc.weight", values("float32", (2,), step))
        s.add("scalar", "lr", repr(0.5 + step))
    trial = trial_of(run(tmp_path, smd_scenario_bin, s.add("close")))
    lr = trial.tensor("scalar/lr")
    assert lr.steps() == [0, 1, 2, 3]  # smdebug would put steps 1 and 3's values into 2 and at close
    for step in range(4):
        assert lr.value(step).tolist() == [0.5 + step]
        assert trial.mode_step(step) == step
    assert trial.tensor("fc.weight").steps() == [0, 2]


def test_explicit_collections_hold_and_save_the_tensor(tmp_path, smd_scenario_bin):
    s = base().every_step().create().add("step")
    s.tensor("custom/thing", values("int32", (3,), 1), collections=["mine", "theirs"])
    s.tensor("late", values("int32", (3,), 2))  # in no saved collection: not written
    s.add("step")
    s.tensor("custom/other", values("int32", (3,), 3), collections=["theirs"])
    out = run(tmp_path, smd_scenario_bin, s.add("close"))
    trial = trial_of(out)
    assert trial.tensor_names() == ["custom/other", "custom/thing"]
    colls = trial.collections()
    assert colls["mine"].tensor_names == {"custom/thing"}
    # W7: the file is rewritten at close, so the name first seen at step 1 is listed
    assert colls["theirs"].tensor_names == {"custom/thing", "custom/other"}
    doc = json.loads((out / "collections/000000000/worker_0_collections.json").read_text())
    assert doc["collections"]["theirs"]["tensor_names"] == ["custom/other", "custom/thing"]


def read_records(path):
    from smdebug.core.tfevent.proto.event_pb2 import Event

    data = path.read_bytes()
    i, out = 0, {}
    while i < len(data):
        (n,) = struct.unpack("<Q", data[i:i + 8])
        ev = Event()
        ev.ParseFromString(data[i + 12:i + 12 + n])
        v = ev.summary.value[0]
        out[v.tag] = v.tensor
        i += n + 16
    return out


def test_bfloat16_is_written(tmp_path, smd_scenario_bin):
    bits = np.array([0x3F80, 0xC000, 0x7F80, 0x0000], dtype=np.uint16)  # 1, -2, inf, 0
    s = base().every_step().option("save_all", 1).create().add("step")
    s.add("tensor", "bf", "bfloat16", "4", bits.tobytes().hex())
    out = run(tmp_path, smd_scenario_bin, s.add("close"))
    rec = read_records(out / "events/000000000000/000000000000_worker_0.tfevents")["bf"]
    assert rec.dtype == 14  # DT_BFLOAT16
    assert [d.size for d in rec.tensor_shape.dim] == [4]
    assert np.frombuffer(rec.tensor_content, dtype=np.uint16).tolist() == bits.tolist()


@pytest.mark.parametrize("crc", ["0", "1"])
def test_real_crc_option_frames_records(tmp_path, smd_scenario_bin, crc):
    """With real CRCs smdebug's own reader refuses the file (it demands its constant); smd reads
    both. Here: the footer is the masked CRC32C of the payload exactly when asked for."""
    s = base().every_step().option("save_all", 1).option("real_crc", crc).create().add("step")
    s.tensor("x", values("float32", (5,), 1))
    out = run(tmp_path, smd_scenario_bin, s.add("close"))
    data = (out / "events/000000000000/000000000000_worker_0.tfevents").read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    footer = data[12 + n:16 + n]
    assert (footer == b"\xb3\xc0\x2d\x06") == (crc == "0")
