"""The Python code examples of smdebug's documentation (the hook, trial, tensor and rule API; not
the framework-specific ones) run on smd with only their paths and names adapted.

Each example is kept as smdebug's documentation writes it, with `smdebug` in its imports. The
tests run it once with the imports changed to `smd` and, where smdebug itself runs it, once with
the real smdebug on the same trial, and compare what both return. Adapted: paths (the example
job below, instead of S3 and /home/ubuntu folders), tensor names, and the free variables the
documentation leaves open (tname, step_num, ...), which `run` binds.
"""
import json
import logging
import textwrap

import numpy as np
import pytest

import smd

logging.getLogger("smdebug").setLevel(logging.ERROR)

TRAIN_STEPS, EVAL_STEPS = 150, 60
TINY_GRADIENT_STEPS = {4, 9, 120}  # global steps at which the gradient's mean |g| is 1e-6


def write_job(out_dir):
    """A job like an image classifier's: relu and softmax outputs, a gradient, the loss; every
    step saved, raw values and reductions; TRAIN then EVAL."""
    hook = smd.Hook(out_dir, save_config=smd.SaveConfig(save_interval=1), include_regex=["relu", "softmax"],
                    reduction_config=smd.ReductionConfig(reductions=["min", "max", "mean"], abs_reductions=["mean"],
                                                         norms=["l1"], save_raw_tensor=True))
    rng = np.random.default_rng(7)
    hook.set_mode(smd.modes.TRAIN)
    for step in range(TRAIN_STEPS + EVAL_STEPS):
        if step == TRAIN_STEPS:
            hook.set_mode(smd.modes.EVAL)
        hook.begin_step()
        hook.save_tensor("relu0_output_0", rng.random((2, 8), dtype=np.float32))
        hook.save_tensor("softmax_output_0", rng.random((2, 3), dtype=np.float32))
        if step < TRAIN_STEPS:
            g = np.full((8, 4), 1e-6 if step in TINY_GRADIENT_STEPS else 0.5, dtype=np.float32)
            hook.save_tensor("gradient/dense.weight", g, "gradients")
        hook.save_tensor("nll_loss_output_0", np.array([2.0 / (step + 1)], dtype=np.float32), "losses")
    hook.close()


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    path = tmp_path_factory.mktemp("seeds") / "resnet"
    write_job(str(path))
    return str(path)


def run(code, lib, **names):
    """Runs a documentation example with its smdebug imports pointed at `lib` and the names it
    leaves open bound; returns its namespace."""
    src = textwrap.dedent(code)
    if lib == "smd":
        src = src.replace("import smdebug as smd", "import smd").replace("smdebug", "smd")
    ns = dict(names)
    exec(compile(src, f"<{lib} example>", "exec"), ns)
    return ns


def run_each(intro, lines, lib, **names):
    """Runs `intro`, then each `r_x = ...` line of `lines` on its own: {r_x: result or the
    exception it raised}."""
    ns = run(intro, lib, **names)
    out = {}
    for line in textwrap.dedent(lines).strip().splitlines():
        key = line.split("=", 1)[0].strip() if line.startswith("r_") else None
        try:
            exec(compile(line if lib == "smdebug" else line.replace("smdebug", "smd"), f"<{lib} line>", "exec"), ns)
            if key:
                out[key] = ns[key]
        except Exception as e:  # compared below: smd must run every line
            out[key or line] = e
    return out


def compare_each(intro, lines, smdebug_lacks=(), **names):
    """smd runs every line; smdebug's results are the same where smdebug runs the line (it lacks
    some documented methods, listed in smdebug_lacks)."""
    mine = run_each(intro, lines, "smd", **names)
    ref = run_each(intro, lines, "smdebug", **names)
    for key, value in mine.items():
        assert not isinstance(value, Exception), f"smd: {key}: {value!r}"
        if isinstance(ref[key], Exception):
            assert key in smdebug_lacks, f"smdebug: {key}: {ref[key]!r}"
            continue
        same(value, ref[key])
    return mine


def same(a, b):
    """Equal results of smd and smdebug (lists, dicts of arrays, arrays, enums by name)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(map(str, a)) == set(map(str, b)), (a, b)
        bk = {str(k): v for k, v in b.items()}
        for k, v in a.items():
            same(v, bk[str(k)])
    elif type(a).__name__ in ("dict_keys", "set", "frozenset"):
        assert type(a).__name__ == type(b).__name__, (a, b)
        assert sorted(map(str, a)) == sorted(map(str, b)), (a, b)
    elif isinstance(a, (list, tuple)) and not isinstance(a, np.ndarray):
        assert len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            same(x, y)
    elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), rtol=1e-6)
    elif hasattr(a, "name") and hasattr(b, "name") and not isinstance(a, str):
        assert a.name == b.name
    else:
        assert a == b, (a, b)


# -- seed 000: the Tensor API ------------------------------------------------------------------
TENSOR_INTRO = """
from smdebug.trials import create_trial
trial = create_trial(
  path=JOB,
  name='resnet_training_run'
)
output_tensor=trial.tensor(tname)
output_loss=trial.tensor("nll_loss_output_0")
"""

TENSOR_METHODS = """
from smdebug.core.modes import ModeKeys
from smdebug import modes
r_steps = output_tensor.steps(mode=ModeKeys.GLOBAL, show_incomplete_steps=False)
r_value = output_tensor.value(step_num, mode=ModeKeys.GLOBAL, worker=None)
r_reduction = output_tensor.reduction_value(step_num, reduction_name, mode=modes.GLOBAL, worker=None, abs=False)
r_shape = output_tensor.shape(step_num, mode=modes.GLOBAL, worker=None)
r_values = output_tensor.values(mode=modes.GLOBAL, worker=None)
r_reductions = output_tensor.reduction_values(step_num, mode=modes.GLOBAL, worker=None)
r_shapes = output_tensor.shapes(mode=modes.GLOBAL, worker=None)
r_workers = output_tensor.workers(step_num, mode=modes.GLOBAL)
r_prev = output_tensor.prev_steps(step, n, mode=modes.GLOBAL)
r_loss_steps = output_loss.steps()
"""


def test_seed000_tensor_api(job):
    names = dict(JOB=job, tname="relu0_output_0", step_num=3, reduction_name="mean", step=20, n=4)
    mine = compare_each(TENSOR_INTRO, TENSOR_METHODS, smdebug_lacks={"r_shapes"}, **names)
    assert mine["r_shapes"] == {s: (2, 8) for s in range(TRAIN_STEPS + EVAL_STEPS)}
    assert run(TENSOR_INTRO, "smd", **names)["trial"].name == "resnet_training_run"
    assert mine["r_steps"] == list(range(TRAIN_STEPS + EVAL_STEPS))
    assert mine["r_prev"] == [17, 18, 19, 20] and mine["r_shape"] == (2, 8)


# -- seed 001 and 003: the Trial API -----------------------------------------------------------
CREATE_TRIALS = """
from smdebug.trials import create_trial
trial = create_trial(path=S3_JOB, name='resnet_training_run')
trial = create_trial(path=LOCAL_JOB, name='resnet_training_run')
tr = create_trial(path=S3_JOB, name='resnet_training',
                  range_steps=(100, 200))
"""

TRIAL_METHODS = """
from smdebug import modes
r_all = trial.tensor_names()
r_train10 = trial.tensor_names(step=10, mode=modes.TRAIN)
r_relu = trial.tensor_names(regex='relu')
r_gradients = trial.tensor_names(collection='gradients')
r_softmax10 = trial.tensor_names(step=10, mode=modes.TRAIN, regex='softmax')
r_has = trial.has_tensor(tname)
r_steps = trial.steps()
r_eval_steps = trial.steps(mode=modes.EVAL, show_incomplete_steps=False)
r_modes = trial.modes()
r_mode = trial.mode(global_step)
r_mode_step = trial.mode_step(global_step)
r_global = trial.global_step(mode=modes.GLOBAL, mode_step=100)
r_global_eval = trial.global_step(modes.EVAL, 5)
r_workers = trial.workers()
r_collections = sorted(trial.collections())
r_collection = sorted(trial.collection(coll_name).tensor_names)
trial.wait_for_steps(required_steps, mode=modes.GLOBAL)
r_passed = trial.has_passed_step(step, mode=modes.GLOBAL)
r_passed_beyond = trial.has_passed_step(10_000)
r_range = tr.steps()
"""


def test_seed001_and_003_trial_api(job):
    names = dict(S3_JOB=job, LOCAL_JOB=job, tname="softmax_output_0", global_step=TRAIN_STEPS + 3,
                 coll_name="gradients", required_steps=[0, 5, 100], step=12)
    mine = compare_each(CREATE_TRIALS, TRIAL_METHODS, **names)
    assert mine["r_relu"] == ["relu0_output_0"] and mine["r_gradients"] == ["gradient/dense.weight"]
    assert mine["r_softmax10"] == ["softmax_output_0"] and mine["r_global_eval"] == TRAIN_STEPS + 5
    assert mine["r_range"] == list(range(100, 200)) and mine["r_mode_step"] == 3
    assert mine["r_passed"].name == "AVAILABLE" and mine["r_passed_beyond"].name == "UNAVAILABLE"


TENSOR_FROM_TRIAL = """
trial.tensor(name).steps(mode=ModeKeys.GLOBAL, show_incomplete_steps=False)
trial.tensor(name).value(step_num, mode=ModeKeys.GLOBAL, worker=None)
trial.tensor(name).reduction_value(step_num, reduction_name,
                                    mode=modes.GLOBAL, worker=None, abs=False)
trial.tensor(name).shape(step_num, mode=modes.GLOBAL, worker=None)
trial.tensor(name).values(mode=modes.GLOBAL, worker=None)
trial.tensor(name).reduction_values(step_num, mode=modes.GLOBAL, worker=None)
trial.tensor(name).shapes(mode=modes.GLOBAL, worker=None)
trial.tensor(name).workers(step_num, mode=modes.GLOBAL)
trial.tensor(name).prev_steps(step, n, mode=modes.GLOBAL)
"""


def test_seed003_tensor_api_lines(job):
    """Each line of seed 003's Tensor API, evaluated on both libraries."""
    imports = "from smdebug.trials import create_trial\nfrom smdebug import modes\nfrom smdebug.core.modes import ModeKeys\n" \
              "trial = create_trial(JOB)\n"
    names = dict(JOB=job, name="softmax_output_0", step_num=TRAIN_STEPS + 1, reduction_name="max", step=30, n=3)
    lines = textwrap.dedent(TENSOR_FROM_TRIAL).replace("\n                                    ", " ").strip().splitlines()
    mine = compare_each(imports, "\n".join(f"r_{i} = {line}" for i, line in enumerate(lines)),
                        smdebug_lacks={"r_6"}, **names)  # 6: shapes()
    assert len(mine) == 9


# -- seed 003: rules ---------------------------------------------------------------------------
RULE_CLASS = """
from smdebug.rules import Rule

class VanishingGradientRule(Rule):
    def __init__(self, base_trial, threshold=0.0000001):
        super().__init__(base_trial, other_trials=None)
        self.threshold = float(threshold)

    def invoke_at_step(self, step):
        for tensorname in self.base_trial.tensors(collection='gradients'):
            tensor = self.base_trial.tensor(tensorname)
            abs_mean = tensor.reduction_value(step, 'mean', abs=True)
            if abs_mean < self.threshold:
                return True
                return False
"""

RULE_INVOKE = """
from smdebug.rules import invoke_rule
from smdebug.trials import create_trial

trial = create_trial(JOB)
rule_obj = VanishingGradientRule(trial, threshold=0.0001)
invoke_rule(rule_obj, start_step=0, end_step=None)
"""


def test_seed003_custom_rule_and_invoke_rule(job):
    """smdebug's own example does not run on smdebug (its Rule needs action_str; its Trial has no
    `tensors`); smd runs it as written, and the rule fires where the gradient vanishes."""
    ns = run(RULE_CLASS + RULE_INVOKE, "smd", JOB=job)
    rule = ns["rule_obj"]
    assert [f.step for f in rule.findings] == sorted(TINY_GRADIENT_STEPS)
    # the gradient exists in TRAIN only: EVAL steps are skipped (TensorUnavailableForStep)
    assert rule.steps_evaluated == TRAIN_STEPS and rule.end_reason == "no_more_data"


def test_seed003_raise_eval_cond(job):
    from smd.exceptions import RuleEvaluationConditionMet
    with pytest.raises(RuleEvaluationConditionMet, match="step 4"):
        run(RULE_CLASS + RULE_INVOKE.replace("end_step=None)", "end_step=None, raise_eval_cond=True)"), "smd", JOB=job)


def test_seed003_exceptions_star_import():
    ns = run("from smdebug.exceptions import *\n", "smd")
    for name in ("TensorUnavailableForStep", "TensorUnavailable", "StepUnavailable", "StepNotYetAvailable",
                 "NoMoreData", "RuleEvaluationConditionMet", "MissingCollectionFiles"):
        assert issubclass(ns[name], Exception), name


REFRESH = """
from smdebug.analysis.utils import no_refresh
with no_refresh(trials):
    seen_inside = trials[0].steps()
    hook.begin_step()
    hook.save_tensor("w", value)
    hook.flush()
    hook.begin_step()
    still_inside = trials[0].steps()
from smdebug.analysis.utils import refresh
with refresh(trials):
    seen_after = trials[0].steps()
"""


def test_seed003_no_refresh_and_refresh(tmp_path):
    from smd.trials import create_trial
    hook = smd.Hook(str(tmp_path / "live"), save_all=True, save_config=smd.SaveConfig(save_interval=1),
                    max_pending_steps=0)  # each step complete on disk before the next begins
    value = np.ones(4, dtype=np.float32)
    hook.begin_step()
    hook.save_tensor("w", value)
    hook.begin_step()  # step 0 complete
    hook.flush()
    trial = create_trial(str(tmp_path / "live"))
    assert trial.steps() == [0]
    ns = run(REFRESH, "smd", trials=[trial], hook=hook, value=value)
    assert ns["seen_inside"] == [0] and ns["still_inside"] == [0]
    assert ns["seen_after"] == [0, 2]  # step 1 saved nothing
    hook.close()


# -- seeds 002 and 004: the hook ---------------------------------------------------------------
GLOSSARY = """
hook = smd.Hook(out_dir=OUT)
train_mode = smd.modes.TRAIN
collection = hook.get_collection("losses")
save_config = smd.SaveConfig(save_interval=10)
reduction_config = smd.ReductionConfig(reductions=['min', 'max', 'mean'], norms=['l1'])
"""


def test_seed002_and_004_glossary(tmp_path):
    out = str(tmp_path / "mnist_job")
    ns = run("import smdebug as smd\n" + GLOSSARY, "smd", OUT=out)
    hook = ns["hook"]
    hook.set_mode(ns["train_mode"])
    hook.get_collection("losses").save_config = ns["save_config"]
    hook.get_collection("weights").reduction_config = ns["reduction_config"]
    for _ in range(25):
        hook.begin_step()
        hook.save_tensor("loss", np.array([1.0], dtype=np.float32), "losses")
        hook.save_tensor("dense.weight", np.arange(4, dtype=np.float32) - 1, "weights")
    hook.close()
    assert ns["collection"].name == "losses"
    ns = run("import smdebug as smd\ntrial = smd.create_trial(out_dir=OUT)\n", "smd", OUT=out)
    trial = ns["trial"]
    assert trial.tensor("loss").steps() == [0, 10, 20]
    assert trial.tensor("dense.weight").reduction_value(0, "l1").item() == 4.0


HOOK_FROM_JSON = """
import smdebug.Framework as smd
hook = smd.HookClass.create_from_json_file()
"""


def test_seed002_hook_from_the_sagemaker_json(tmp_path, monkeypatch):
    config = {"LocalPath": str(tmp_path / "sm_out"), "HookParameters": {"save_interval": "2", "save_all": "true"}}
    (tmp_path / "debughookconfig.json").write_text(json.dumps(config))
    monkeypatch.setenv("SMDEBUG_CONFIG_FILE_PATH", str(tmp_path / "debughookconfig.json"))
    src = HOOK_FROM_JSON.replace("smdebug.Framework", "smdebug").replace("HookClass", "Hook")  # the framework-free hook
    hook = run(src, "smd")["hook"]
    for _ in range(5):
        hook.begin_step()
        hook.save_tensor("x", np.zeros(3, dtype=np.float32))
    hook.close()
    from smd.trials import create_trial
    assert create_trial(str(tmp_path / "sm_out")).tensor("x").steps() == [0, 2, 4]


HOOK_CONSTRUCTOR = """
hook = HookClass(
    out_dir,
    export_tensorboard = False,
    tensorboard_dir = None,
    dry_run = False,
    reduction_config = None,
    save_config = None,
    include_regex = None,
    include_collections = None,
    save_all = False,
    include_workers="one"
)
"""

COMMON_HOOK_API = """
from smdebug.core.collection import Collection
hook.add_collection(Collection("custom", include_regex=["^custom/"]))
c = hook.get_collection("custom")
all_collections = hook.get_collections()
hook.set_mode(smd.modes.TRAIN)
hook.get_collection("metrics").save_config.end_step = 0
hook.begin_step()
hook.save_scalar("accuracy", 0.75, sm_metric=False)
hook.save_tensor("custom/t", np.ones(2, dtype=np.float32), collections_to_write="custom")
hook.save_tensor("acc", np.ones(1, dtype=np.float32), collections_to_write=["metrics"])
hook.close()
"""


def test_seed002_hook_constructor_and_common_api(tmp_path):
    src = "import smdebug as smd\n" + HOOK_CONSTRUCTOR + COMMON_HOOK_API
    ns = run(src, "smd", HookClass=smd.Hook, out_dir=str(tmp_path / "run"), np=np)
    assert ns["c"].name == "custom" and ns["c"].include_regex == ["^custom/"]
    assert "custom" in ns["all_collections"]
    from smd.trials import create_trial
    trial = create_trial(str(tmp_path / "run"))
    assert trial.tensor("scalar/accuracy").value(0).tolist() == [0.75]
    assert trial.tensor("custom/t").steps() == [0]
    assert not trial.has_tensor("acc")  # metrics' end_step = 0: never saved
    # without that line, the same script saves it
    run(src.replace('hook.get_collection("metrics").save_config.end_step = 0', ""), "smd", HookClass=smd.Hook,
        out_dir=str(tmp_path / "control"), np=np)
    assert create_trial(str(tmp_path / "control")).tensor("acc").steps() == [0]


SAVE_CONFIGS = {
    "smd.SaveConfig(mode_save_configs = None, save_interval = 100, start_step = 0, end_step = None, save_steps = None)":
        [0, 100, 200, 300, 400, 500],
    "smd.SaveConfig()": [0, 500],
    "smd.SaveConfig(save_interval=1)": list(range(0, 501)),
    "smd.SaveConfig(save_interval=100, end_step=200)": [0, 100],
    "smd.SaveConfig(save_interval=100, end_step=201)": [0, 100, 200],
    "smd.SaveConfig(save_interval=100, start_step=150)": [200, 300, 400, 500],
    "smd.SaveConfig(save_steps=[3, 7])": [0, 3, 7, 500],
}


@pytest.mark.parametrize("expr", list(SAVE_CONFIGS))
def test_seed002_save_config_examples(expr):
    """The steps seed 002 says each SaveConfig saves, on smd and on smdebug."""
    for lib in ("smd", "smdebug"):
        cfg = run("import smdebug as smd\ncfg = " + expr + "\n", lib)["cfg"]
        modes = run("import smdebug as smd\nm = smd.modes.TRAIN\n", lib)["m"]
        saved = [s for s in range(501) if cfg.should_save_step(modes, s)]
        assert saved == SAVE_CONFIGS[expr], (lib, expr)


MODE_SAVE_CONFIGS = """
import smdebug as smd
cfg = smd.SaveConfig(mode_save_configs={
    smd.modes.TRAIN: smd.SaveConfigMode(save_interval=1),
    smd.modes.EVAL: smd.SaveConfigMode(save_interval=2),
    smd.modes.PREDICT: smd.SaveConfigMode(save_interval=3),
    smd.modes.GLOBAL: smd.SaveConfigMode(save_interval=4)
})
"""


def test_seed002_mode_save_configs():
    for lib in ("smd", "smdebug"):
        ns = run(MODE_SAVE_CONFIGS + "M = smd.modes\n", lib)
        cfg, m = ns["cfg"], ns["M"]
        got = {name: [s for s in range(10) if cfg.should_save_step(getattr(m, name), s)]
               for name in ("TRAIN", "EVAL", "PREDICT", "GLOBAL")}
        assert got == {"TRAIN": list(range(10)), "EVAL": [0, 2, 4, 6, 8], "PREDICT": [0, 3, 6, 9],
                       "GLOBAL": [0, 4, 8]}, lib


REDUCTION_CONFIGS = """
import smdebug as smd
reduction_config = smd.ReductionConfig(
    reductions = None,
    abs_reductions = None,
    norms = None,
    abs_norms = None,
    save_raw_tensor = False,
)
rc = ReductionConfig(reductions=['std', 'variance'], abs_reductions=['mean'], norms=['l1'])
"""


def test_seed002_reduction_config_examples(tmp_path):
    ns = run(REDUCTION_CONFIGS.replace("rc = ReductionConfig", "rc = smd.ReductionConfig"), "smd")
    assert ns["reduction_config"].save_raw_tensor is False
    hook = smd.Hook(str(tmp_path / "run"), reduction_config=ns["rc"], save_all=True)
    hook.begin_step()
    hook.save_tensor("t", np.array([1.0, -3.0], dtype=np.float32))
    hook.close()
    from smd.trials import create_trial
    got = create_trial(str(tmp_path / "run")).tensor("t").reduction_values(0)
    assert set(got) == {("std", False), ("variance", False), ("mean", True), ("l1", False)}
    assert got[("mean", True)].item() == 2.0 and got[("l1", False)].item() == 4.0


def test_seed002_collection_properties_and_methods(tmp_path):
    hook = smd.Hook(str(tmp_path / "run"), include_collections=["weights"])
    coll = hook.get_collection("weights")
    coll.include("^dense")
    coll.include(["^conv", "^bn"])
    coll.tensor_names = ["special"]
    coll.save_histogram = False
    coll.reduction_config = smd.ReductionConfig(norms=["l2"])
    coll.save_config = smd.SaveConfig(save_interval=5)
    assert coll.include_regex == ["^dense", "^conv", "^bn"] and coll.save_histogram is False
    assert coll.reduction_config.norms == ["l2"] and coll.save_config.save_interval == 5
    for _ in range(6):
        hook.begin_step()
        hook.save_tensor("dense.w", np.ones(3, dtype=np.float32))
        hook.save_tensor("special", np.ones(3, dtype=np.float32))
    hook.close()
    from smd.trials import create_trial
    t = create_trial(str(tmp_path / "run"))
    assert t.tensor("dense.w").steps() == [0, 5] and t.tensor("special").steps() == [0, 5]
    assert t.tensor("dense.w").reduction_value(5, "l2").item() == pytest.approx(3 ** 0.5)
