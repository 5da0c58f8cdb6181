"""A trial read while a job writes it: the real smdebug hook in a subprocess, or files copied in
step by step. Refresh sees new steps, wait_for_steps returns when a step appears (promptly, no
fixed sleeps), has_passed_step follows BEHAVIOR.md §6.10, NoMoreData after the end marker."""
import os
import shutil
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import cases
import smdlib
from conftest import HERE, LIBSMD, _env
from smdlib import (AVAILABLE, E_NO_MORE_DATA, E_STEP_NOT_YET_AVAILABLE, E_STEP_UNAVAILABLE, EVAL,
                    GLOBAL, NOT_YET_AVAILABLE, TRAIN, UNAVAILABLE, SmdError)


@pytest.fixture(scope="session")
def lib():
    if not LIBSMD.is_file():
        pytest.fail(f"{LIBSMD} is not built (set SMD_BUILD_DIR)")
    return smdlib.Lib(LIBSMD)


class Writer:
    """The live_writer.py subprocess."""

    def __init__(self, out):
        self.p = subprocess.Popen([sys.executable, str(HERE / "live_writer.py"), str(out)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=_env())

    def send(self, cmd):
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        assert line.startswith("ok"), line
        return int(line.split()[1])

    def finish(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()


class Waiter(threading.Thread):
    """Runs trial.wait_for_steps in a thread; records the outcome and when it returned."""

    def __init__(self, trial, steps, mode=GLOBAL, timeout_ms=30000):
        super().__init__(daemon=True)
        self.args = (trial, steps, mode, timeout_ms)
        self.error = None
        self.done_at = None

    def run(self):
        trial, steps, mode, timeout_ms = self.args
        try:
            trial.wait_for_steps(steps, mode, timeout_ms)
        except SmdError as e:
            self.error = e
        self.done_at = time.monotonic()


def expect_code(code, fn, *args):
    with pytest.raises(SmdError) as ei:
        fn(*args)
    assert ei.value.code == code, ei.value.message
    return ei.value


def test_live_smdebug_writer(lib, tmp_path):
    out = tmp_path / "trial"
    w = Writer(out)
    try:
        w.send("step")
        w.send("step")  # step 0 is complete on disk, and the collections file is written
        with lib.open(out, collection_wait_ms=10000) as t:
            assert t.steps() == [0]
            assert t.steps(TRAIN) == [0]
            assert t.has_passed_step(0) == AVAILABLE
            assert t.has_passed_step(1) == NOT_YET_AVAILABLE
            assert t.has_passed_step(7) == NOT_YET_AVAILABLE
            expect_code(E_STEP_NOT_YET_AVAILABLE, t.wait_for_steps, [1], GLOBAL, 0)

            waiter = Waiter(t, [3])
            waiter.start()
            time.sleep(0.2)
            assert waiter.done_at is None  # still waiting
            w.send("step")
            w.send("step")
            w.send("step")  # begins step 4: step 3 becomes visible
            visible_at = time.monotonic()
            waiter.join(20)
            assert waiter.done_at is not None and waiter.error is None, waiter.error
            assert waiter.done_at - visible_at < 1.0  # woken by the change, not by a fixed poll
            assert t.steps() == [0, 1, 2, 3]
            assert t.value_bytes("fc.weight", 3) == cases.weight(3).tobytes()

            # No automatic refresh in a scope: new steps stay invisible until an explicit refresh.
            with t.refresh_scope(False):
                assert t.auto_refresh() is False
                w.send("step")  # step 4 visible on disk
                assert t.steps() == [0, 1, 2, 3]
                assert t.has_passed_step(4) == NOT_YET_AVAILABLE
                t.refresh()
                assert t.steps() == [0, 1, 2, 3, 4]
                # wait_for_steps refreshes for its wait, then the scope holds again.
                t.wait_for_steps([4])
                assert t.auto_refresh() is False
            assert t.auto_refresh() is True

            w.send("close")  # step 5 and training_job_end.ts
            expect_code(E_NO_MORE_DATA, t.wait_for_steps, [100], GLOBAL, 10000)
            assert t.steps() == [0, 1, 2, 3, 4, 5]
            assert t.has_passed_step(100) == UNAVAILABLE
            assert t.has_passed_step(5) == AVAILABLE
            e = expect_code(E_NO_MORE_DATA, t.wait_for_steps, [6], TRAIN, 1000)
            assert "Max step available is 5" in e.message
    finally:
        w.finish()


def copy_step(src, dst, step, worker="worker_0"):
    """Copies one step's event file, then its index file (the order a writer makes them visible)."""
    s = f"{step:012d}"
    for rel in (f"events/{s}/{s}_{worker}.tfevents", f"index/{step // 1000:09d}/{s}_{worker}.json"):
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / rel, dst / (rel + ".tmp"))
        os.replace(dst / (rel + ".tmp"), dst / rel)


def copy_collections(src, dst):
    shutil.copytree(src / "collections", dst / "collections")


def test_live_copied_steps(lib, trial_of, tmp_path):
    src = trial_of("modes_reentry")  # TRAIN 0-2, EVAL 3-4, TRAIN 5-6, PREDICT 7-8, GLOBAL 9
    dst = tmp_path / "live"
    dst.mkdir()
    expect_code(16, lib.open, dst)  # MissingCollectionFiles: no collections file yet
    copy_collections(src, dst)
    with lib.open(dst) as t:
        assert t.steps() == [] and t.tensor_names() == []
        assert t.has_passed_step(0) == NOT_YET_AVAILABLE
        for s in range(3):
            copy_step(src, dst, s)
        assert t.steps() == [0, 1, 2]  # automatic refresh
        assert t.tensor_names() == ["fc.weight", "loss"]
        assert t.has_passed_step(0, EVAL) == NOT_YET_AVAILABLE

        waiter = Waiter(t, [1], EVAL)
        waiter.start()
        copy_step(src, dst, 3)
        time.sleep(0.1)
        assert waiter.done_at is None
        copy_step(src, dst, 4)
        waiter.join(10)
        assert waiter.done_at is not None and waiter.error is None, waiter.error
        assert t.steps(EVAL) == [0, 1]

        # A skipped step is UNAVAILABLE once a later one exists (single worker).
        copy_step(src, dst, 6)
        assert t.has_passed_step(5) == UNAVAILABLE
        expect_code(E_STEP_UNAVAILABLE, t.wait_for_steps, [5], GLOBAL, 1000)
        copy_step(src, dst, 5)  # late: smdebug's cursor has passed it, so it stays unseen
        t.refresh()
        assert 5 not in t.steps()

        (dst / "training_job_end.ts").write_bytes(b"")
        expect_code(E_NO_MORE_DATA, t.wait_for_steps, [50], GLOBAL, 5000)
        assert t.has_passed_step(50) == UNAVAILABLE
        assert t.has_passed_step(6) == AVAILABLE


def test_live_incomplete_multiworker_step(lib, trial_of, tmp_path):
    src = trial_of("workers3_ended")  # 3 workers, steps 0-4
    dst = tmp_path / "live"
    dst.mkdir()
    copy_collections(src, dst)
    for s in range(3):
        for w in range(3):
            copy_step(src, dst, s, f"worker_{w}")
    with lib.open(dst) as t:
        assert t.workers() == ["worker_0", "worker_1", "worker_2"]
        assert t.steps() == [0, 1, 2]
        copy_step(src, dst, 3, "worker_0")
        copy_step(src, dst, 3, "worker_1")
        assert t.steps() == [0, 1, 2]
        assert t.steps(GLOBAL, True) == [0, 1, 2, 3]
        assert t.has_passed_step(3) == NOT_YET_AVAILABLE
        waiter = Waiter(t, [3])
        waiter.start()
        time.sleep(0.1)
        assert waiter.done_at is None
        copy_step(src, dst, 3, "worker_2")
        waiter.join(10)
        assert waiter.done_at is not None and waiter.error is None, waiter.error
        assert t.has_passed_step(3) == AVAILABLE
        assert t.value_bytes("fc.weight", 3, worker="worker_2") == cases.weight(3 + 20).tobytes()


def test_wait_timeout_and_forever_argument(lib, trial_of, tmp_path):
    src = trial_of("running_single")
    dst = tmp_path / "t"
    shutil.copytree(src, dst)
    with lib.open(dst) as t:
        start = time.monotonic()
        expect_code(E_STEP_NOT_YET_AVAILABLE, t.wait_for_steps, [100], GLOBAL, 300)
        assert 0.25 < time.monotonic() - start < 2.0
        # timeout < 0 waits until the job ends
        waiter = Waiter(t, [100], GLOBAL, -1)
        waiter.start()
        time.sleep(0.2)
        assert waiter.done_at is None
        (dst / "training_job_end.ts").write_bytes(b"")
        waiter.join(10)
        assert waiter.error is not None and waiter.error.code == E_NO_MORE_DATA
