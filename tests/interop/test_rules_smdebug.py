"""Rules against the real smdebug: trials written by smdebug's own hook, smdebug's invoke_rule
running the same logic as a custom smdebug Rule, a custom rule through libsmd's C ABI (ctypes), and
`smd rules` on finished and running jobs (--follow, the progress line on a terminal, the stop
signal)."""
import ctypes as C
import json
import os
import pty
import select
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from conftest import HERE, LIBSMD, _env

E_CANCELLED, E_RULE_CONDITION_MET = 10, 19
END_STEP, END_NO_MORE_DATA = 1, 2


# ---- trials written by the real smdebug hook ---------------------------------------------------

def write_trial(path, steps=20, vanish_at=None, nan_at=None, save_interval=1, loss=None,
                end=True):
    """fc1/fc2 gradients (abs_mean reductions only), fc1.weight, loss; TRAIN mode."""
    from smdebug_hook import NumpyHook, fixed_wall_time
    from smdebug import ReductionConfig, SaveConfig, modes

    fixed_wall_time()
    hook = NumpyHook(str(path), save_config=SaveConfig(save_interval=save_interval),
                     include_collections=["gradients", "weights", "losses"])
    hook.get_collection("gradients").reduction_config = ReductionConfig(
        abs_reductions=["mean"], save_raw_tensor=False)
    hook.set_mode(modes.TRAIN)
    rng = np.random.default_rng(7)
    for step in range(steps):
        hook.begin_step()
        g1 = rng.standard_normal((4, 4)).astype(np.float32) * 0.01
        if vanish_at is not None and step >= vanish_at:
            g1 *= 1e-7
        hook.record("gradient/fc1.weight", g1)
        hook.record("gradient/fc2.weight", rng.standard_normal((4, 2)).astype(np.float32) * 0.01)
        w = rng.standard_normal((4, 4)).astype(np.float32)
        if nan_at is not None and step == nan_at:
            w[1, 2] = np.nan
        hook.record("fc1.weight", w)
        hook.record("loss", np.float32(loss(step) if loss else 1.0 / (step + 1)))
    hook.close(end_of_job=end)
    return path


def smd(*args, **kw):
    from conftest import SMD_BIN
    return subprocess.run([str(SMD_BIN), *map(str, args)], capture_output=True, text=True,
                          timeout=300, **kw)


def json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


# ---- smdebug: the same logic as custom smdebug Rules -------------------------------------------

def smdebug_rules():
    from smdebug.rules import Rule

    class VanishingGradientRule(Rule):
        """The simplified VanishingGradient of smdebug's docs, checking every gradient."""

        def __init__(self, base_trial, threshold="0.0000001"):
            super().__init__(base_trial, action_str="")
            self.threshold = float(threshold)

        def invoke_at_step(self, step):
            for name in self.base_trial.tensor_names(collection="gradients"):
                t = self.base_trial.tensor(name)
                if step not in t.steps():
                    continue
                if t.reduction_value(step, "mean", abs=True) < self.threshold:
                    return True
            return False

    class LossAbove(Rule):
        def __init__(self, base_trial, threshold):
            super().__init__(base_trial, action_str="")
            self.threshold = float(threshold)
            self.invoked = []

        def invoke_at_step(self, step):
            self.invoked.append(step)
            return float(self.base_trial.tensor("loss").value(step)[0]) > self.threshold

    return VanishingGradientRule, LossAbove


def smdebug_first_fire(rule):
    """smdebug's invoke_rule with raise_eval_cond: the step of RuleEvaluationConditionMet, or None
    when the job ended (NoMoreData) first."""
    from smdebug.exceptions import NoMoreData, RuleEvaluationConditionMet
    from smdebug.rules import invoke_rule

    try:
        invoke_rule(rule, start_step=0, end_step=None, raise_eval_cond=True)
    except RuleEvaluationConditionMet as e:
        return e.step
    except NoMoreData:
        return None
    raise AssertionError("invoke_rule returned without NoMoreData")


def smd_first_fire(path, *rules):
    r = smd("rules", path, *[a for spec in rules for a in ("--rule", spec)], "--json")
    assert r.returncode in (0, 6), r.stderr
    lines = json_lines(r.stdout)
    findings = [x for x in lines if "step" in x]
    return (findings[0]["step"] if findings else None), findings, r.returncode


@pytest.mark.parametrize("vanish_at", [12, None])
def test_vanishing_gradient_fires_where_smdebug_fires(tmp_path, vanish_at):
    path = write_trial(tmp_path / "trial", vanish_at=vanish_at)
    VanishingGradientRule, _ = smdebug_rules()
    from smdebug.trials import create_trial
    expected = smdebug_first_fire(VanishingGradientRule(create_trial(str(path))))
    assert expected == vanish_at
    step, findings, code = smd_first_fire(path, "VanishingGradient")
    assert step == expected
    assert code == (6 if vanish_at is not None else 0)
    if findings:
        assert findings[0]["tensor"] == "gradient/fc1.weight"
        assert findings[0]["rule"] == "VanishingGradient"


def test_exploding_tensor_on_an_smdebug_trial(tmp_path):
    path = write_trial(tmp_path / "nan", nan_at=7)
    step, findings, code = smd_first_fire(path, "ExplodingTensor:collection_names=weights,gradients")
    assert (step, code) == (7, 6)
    assert findings[0]["tensor"] == "fc1.weight"
    assert "1 NaN" in findings[0]["message"]
    healthy = write_trial(tmp_path / "ok")
    assert smd_first_fire(healthy, "ExplodingTensor")[0] is None


def test_similar_across_runs_on_smdebug_trials(tmp_path):
    bad = write_trial(tmp_path / "bad", vanish_at=12)
    good = write_trial(tmp_path / "good")
    r = smd("rules", bad, "--rule", "SimilarAcrossRuns", "--other", good, "--json")
    assert r.returncode == 6, r.stderr
    first = json_lines(r.stdout)[0]
    # Only abs_mean reductions of the gradients were saved: those are compared.
    assert (first["step"], first["tensor"]) == (12, "gradient/fc1.weight")
    assert "saved reduction abs_mean differs" in first["message"]
    r = smd("rules", good, "--rule", "SimilarAcrossRuns", "--other", write_trial(tmp_path / "again"))
    assert r.returncode == 0 and "NoIssuesFound" in r.stdout


def test_loss_not_decreasing_on_an_smdebug_trial(tmp_path):
    # Loss saved every 5 steps: flat from step 25 on.
    path = write_trial(tmp_path / "flat", steps=60, save_interval=5,
                       loss=lambda s: 1.0 / (s + 1) if s < 25 else 1.0 / 26)
    step, findings, _ = smd_first_fire(path, "LossNotDecreasing:num_steps=10")
    # Baseline 0; checks at 10 (vs 0), 20 (vs 10), 30 (vs 20), 40 (vs 30: flat) -> 40.
    assert step == 40
    assert findings[0]["tensor"] == "loss"


# ---- a custom rule through the C ABI (ctypes), next to smdebug's invoke_rule ----------------

INVOKE_FN = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_int64, C.POINTER(C.c_bool), C.c_void_p)
FINDING_FN = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_void_p, C.c_void_p)


class RulesLib:
    def __init__(self):
        L = self.L = C.CDLL(str(LIBSMD))
        P = C.c_void_p
        for name, res, args in [
            ("smd_error_code", C.c_int, [P]), ("smd_error_message", C.c_char_p, [P]),
            ("smd_error_free", None, [P]),
            ("smd_trial_open", P, [C.c_char_p, P, C.POINTER(P)]), ("smd_trial_free", None, [P]),
            ("smd_trial_tensor", P, [P, C.c_char_p, C.POINTER(P)]), ("smd_tensor_free", None, [P]),
            ("smd_tensor_value", P, [P, C.c_int64, C.c_int, C.c_char_p, C.POINTER(P)]),
            ("smd_value_double_at", P, [P, C.c_size_t, C.POINTER(C.c_double)]),
            ("smd_value_free", None, [P]),
            ("smd_rule_create", P, [C.c_char_p, P, P, C.c_size_t, INVOKE_FN, P, P, C.POINTER(P)]),
            ("smd_rule_free", None, [P]),
            ("smd_rule_context_trial", P, [P, C.c_size_t]),
            ("smd_rule_context_fail", C.c_int, [P, P]),
            ("smd_rule_context_report", P, [P, C.c_size_t, C.c_char_p, C.c_char_p]),
            ("smd_rule_invoke", P, [P, C.c_int64, C.c_int64, C.c_bool, P]),
            ("smd_rule_end_reason", C.c_int, [P]),
            ("smd_rule_steps_skipped", C.c_int64, [P]),
            ("smd_rule_findings_count", C.c_size_t, [P]),
            ("smd_rule_findings_at", P, [P, C.c_size_t]),
            ("smd_rule_finding_step", C.c_int64, [P]),
            ("smd_rule_invoke_options_create", P, [C.POINTER(P)]),
            ("smd_rule_invoke_options_free", None, [P]),
            ("smd_rule_invoke_options_set_finding_callback", P, [P, FINDING_FN, P]),
        ]:
            f = getattr(L, name)
            f.restype, f.argtypes = res, args

    def take_error(self, err):
        """(code, message) of an smd_error*, freed; None for NULL."""
        if not err:
            return None
        out = (self.L.smd_error_code(err), self.L.smd_error_message(err).decode())
        self.L.smd_error_free(err)
        return out


def test_custom_rule_through_the_c_abi_matches_smdebug_invoke_rule(tmp_path):
    """Saved every 3 steps; fires when loss > 0.3. smdebug's invoke_rule and smd_rule_invoke
    evaluate the same steps, fire at the same steps, and end at the job's end (smdebug raises
    NoMoreData, smd returns OK with SMD_RULE_END_NO_MORE_DATA)."""
    from smdebug.exceptions import NoMoreData
    from smdebug.rules import invoke_rule
    from smdebug.trials import create_trial

    path = write_trial(tmp_path / "t", steps=20, save_interval=3,
                       loss=lambda s: 0.5 if s in (6, 12) else 0.1)
    _, LossAbove = smdebug_rules()
    ref = LossAbove(create_trial(str(path)), "0.3")
    fired = []
    from smdebug.exceptions import RuleEvaluationConditionMet
    step = 0
    while True:  # invoke_rule with raise_eval_cond, resumed after each fire: every fire step
        try:
            invoke_rule(ref, start_step=step, end_step=None, raise_eval_cond=True)
        except RuleEvaluationConditionMet as e:
            fired.append(e.step)
            step = e.step + 1
            continue
        except NoMoreData:
            break
    assert ref.invoked == [0, 3, 6, 9, 12, 15, 18]
    assert fired == [6, 12]

    lib = RulesLib()
    L = lib.L
    trial = C.c_void_p()
    assert lib.take_error(L.smd_trial_open(str(path).encode(), None, C.byref(trial))) is None
    invoked = []

    @INVOKE_FN
    def invoke(ctx, step, met, payload):
        invoked.append(step)
        t = L.smd_rule_context_trial(ctx, 0)
        tensor, value = C.c_void_p(), C.c_void_p()
        err = L.smd_trial_tensor(t, b"loss", C.byref(tensor))
        if err:
            return L.smd_rule_context_fail(ctx, err)
        err = L.smd_tensor_value(tensor, step, 4, None, C.byref(value))
        L.smd_tensor_free(tensor)
        if err:
            return L.smd_rule_context_fail(ctx, err)
        x = C.c_double()
        L.smd_value_double_at(value, 0, C.byref(x))
        L.smd_value_free(value)
        met[0] = x.value > 0.3
        if met[0]:
            lib.take_error(L.smd_rule_context_report(ctx, 0, b"loss", f"loss {x.value:.1f}".encode()))
        return 0

    rule = C.c_void_p()
    assert lib.take_error(L.smd_rule_create(b"LossAbove", trial, None, 0, invoke, None, None,
                                            C.byref(rule))) is None
    try:
        assert lib.take_error(L.smd_rule_invoke(rule, 0, -1, False, None)) is None
        assert invoked == ref.invoked
        assert L.smd_rule_end_reason(rule) == END_NO_MORE_DATA
        assert L.smd_rule_steps_skipped(rule) == 19 - 7  # steps 0..18, then NoMoreData at 19
        steps = [L.smd_rule_finding_step(L.smd_rule_findings_at(rule, i))
                 for i in range(L.smd_rule_findings_count(rule))]
        assert steps == fired
        # raise_eval_cond: the same step and message as RuleEvaluationConditionMet.
        code, msg = lib.take_error(L.smd_rule_invoke(rule, 0, -1, True, None))
        assert code == E_RULE_CONDITION_MET
        assert msg.startswith(str(RuleEvaluationConditionMet("LossAbove", 6)))
        # A finding callback returning non-zero cancels.
        opts = C.c_void_p()
        lib.take_error(L.smd_rule_invoke_options_create(C.byref(opts)))
        cancel = FINDING_FN(lambda rule, finding, payload: 1)
        lib.take_error(L.smd_rule_invoke_options_set_finding_callback(opts, cancel, None))
        code, _ = lib.take_error(L.smd_rule_invoke(rule, 0, 10, False, opts))
        assert code == E_CANCELLED
        L.smd_rule_invoke_options_free(opts)
    finally:
        L.smd_rule_free(rule)
        L.smd_trial_free(trial)


# ---- smd rules on a running smdebug job -------------------------------------------------------

class LiveJob:
    """live_writer.py: the real smdebug hook writing one step per command (fc.weight, loss=step)."""

    def __init__(self, out):
        self.p = subprocess.Popen([sys.executable, str(HERE / "live_writer.py"), str(out)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=_env())

    def send(self, cmd):
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        assert line.startswith("ok"), line

    def finish(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()


class Lines(threading.Thread):
    """Collects a process's stdout lines as they come."""

    def __init__(self, stream):
        super().__init__(daemon=True)
        self.stream, self.lines, self.cv = stream, [], threading.Condition()

    def run(self):
        for line in self.stream:
            with self.cv:
                self.lines.append(line)
                self.cv.notify_all()

    def wait_for(self, n, timeout=30):
        with self.cv:
            self.cv.wait_for(lambda: len(self.lines) >= n, timeout)
            return list(self.lines)


def test_follow_a_running_job(tmp_path):
    out = tmp_path / "job"
    job = LiveJob(out)
    try:
        job.send("step")
        job.send("step")  # step 0 visible, collections written
        proc = subprocess.Popen([str(SMD()), "rules", str(out), "--follow", "--keep-going", "--json",
                                 "--rule", "LossNotDecreasing:num_steps=3,diff_percent=0",
                                 "--stop-training"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines = Lines(proc.stdout)
        lines.start()
        for _ in range(3):
            job.send("step")  # steps 1..3 visible once step 4 begins
        assert proc.poll() is None  # still following
        got = lines.wait_for(1)
        # loss = step: baseline at 0, first comparison at 3 (3 vs 0: the loss went up).
        assert json.loads(got[0])["step"] == 3, got
        assert json.loads(got[0])["tensor"] == "loss"
        # The finding is printed before the stop signal is written (findings first, so that a
        # signal that cannot be written loses none): wait for the file.
        signal = out / "stop_training.smd"
        for _ in range(500):
            if signal.is_file():
                break
            time.sleep(0.01)
        assert signal.is_file()
        assert json.loads(signal.read_text())["step"] == 3
        for _ in range(3):
            job.send("step")
        job.send("close")  # the end: smd rules finishes
        proc.wait(60)
        lines.join(10)
        assert proc.returncode == 6, proc.stderr.read()
        records = [json.loads(x) for x in lines.lines]
        assert [r["step"] for r in records if "step" in r] == [3, 6]
        summary = records[-1]
        assert summary["status"] == "IssuesFound" and summary["last_step"] == 7
    finally:
        job.finish()


def test_follow_started_before_the_training_waits_for_its_folder(tmp_path):
    """The natural order: the watcher first, then the training. --follow waits for the folder to
    appear (it exited at once, 'trial folder ... does not exist'), then for the collections file,
    within one limit."""
    from conftest import SMD_BIN
    out = tmp_path / "run"
    proc = subprocess.Popen([str(SMD_BIN), "rules", str(out), "--follow", "--timeout", "60000",
                             "--rule", "VanishingGradient"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(0.5)
        assert proc.poll() is None, proc.communicate()
        write_trial(out, steps=8, vanish_at=5)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 6, (stdout, stderr)
    assert "VanishingGradient: step 5: gradient/fc1.weight" in stdout
    # A folder that never appears: the limit, then the open's own error.
    r = smd("rules", tmp_path / "never", "--follow", "--timeout", "300", "--rule", "VanishingGradient")
    assert r.returncode == 1 and "does not exist" in r.stderr, r.stderr


def test_without_follow_stops_at_the_live_edge(tmp_path):
    out = tmp_path / "job"
    job = LiveJob(out)
    try:
        for _ in range(4):
            job.send("step")
        r = smd("rules", out, "--rule", "VanishingGradient")
        assert r.returncode == 0, r.stderr
        assert "NoIssuesFound" in r.stdout and "use --follow" in r.stdout
        assert "last step 2" in r.stdout
    finally:
        job.finish()


def test_another_running_trial_stops_only_the_rule_comparing_with_it(tmp_path):
    """The base job ended; SimilarAcrossRuns compares with one still running. Without --follow it
    stops at that run's live edge and says so, while the other rules run to the base job's end
    (they used to stop with it, reporting NoIssuesFound and exit 0 over a vanishing gradient)."""
    base = write_trial(tmp_path / "base", steps=8, vanish_at=5)
    out = tmp_path / "job"
    job = LiveJob(out)
    try:
        for _ in range(4):
            job.send("step")
        r = smd("rules", base, "--rule", "VanishingGradient",
                "--rule", "SimilarAcrossRuns:tensor_regex=^not_saved$",
                "--other", out)
        assert r.returncode == 6, (r.stdout, r.stderr)
        assert "VanishingGradient: step 5: gradient/fc1.weight" in r.stdout
        assert "VanishingGradient: IssuesFound" in r.stdout
        similar = [x for x in r.stdout.splitlines() if x.startswith("SimilarAcrossRuns:")]
        assert len(similar) == 1 and "another trial it reads is still running" in similar[0], r.stdout
        assert str(out) in r.stderr and "use --follow" in r.stderr, r.stderr
    finally:
        job.finish()


def test_stalled_training_rule_on_a_silent_job(tmp_path):
    out = tmp_path / "job"
    job = LiveJob(out)
    try:
        job.send("step")
        job.send("step")
        t0 = time.monotonic()
        r = smd("rules", out, "--follow", "--rule", "StalledTrainingRule:threshold=1")
        took = time.monotonic() - t0
        assert r.returncode == 6, r.stderr
        assert "StalledTrainingRule: step 1: -: no new data for" in r.stdout
        assert 1.0 <= took < 30
    finally:
        job.finish()


def SMD():
    from conftest import SMD_BIN
    return SMD_BIN


def test_progress_line_on_a_terminal(tmp_path):
    path = write_trial(tmp_path / "t", steps=30)
    master, slave = pty.openpty()
    proc = subprocess.Popen([str(SMD()), "rules", str(path), "--rule", "VanishingGradient"],
                            stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    err = b""
    while True:
        ready, _, _ = select.select([master], [], [], 30)
        if not ready:
            break
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        err += chunk
    proc.wait(30)
    os.close(master)
    assert proc.returncode == 0
    assert b"\r\x1b[Ksmd rules: step " in err
    assert err.endswith(b"\r\x1b[K")  # cleared at the end
    # Not on a pipe.
    r = smd("rules", path, "--rule", "VanishingGradient")
    assert "smd rules: step" not in r.stderr


def test_cli_usage_errors(tmp_path):
    path = write_trial(tmp_path / "t", steps=3)
    r = smd("rules", path, "--rule", "VanishingGradient:threshold=abc")
    assert r.returncode == 2
    assert "parameter 'threshold' = 'abc'" in r.stderr
    assert smd("rules", path).returncode == 2
    assert smd("rules", "--rule", "VanishingGradient").returncode == 2
    assert smd("rules", tmp_path / "missing", "--rule", "VanishingGradient").returncode == 1
    r = smd("rules", path, "--rule", "SimilarAcrossRuns", "--other", path)
    assert r.returncode == 0 and "NoIssuesFound" in r.stdout
    listing = smd("rules", "--list").stdout
    assert "FeatureImportanceOverweight" in listing and "threshold (default 0.0000001)" in listing
