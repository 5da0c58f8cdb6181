"""smd.analysis.utils.no_refresh / refresh on a live trial: a block overrides the trial's
auto_refresh on the thread that entered it only (smd_trial_refresh_scope_create), blocks nest,
and a block ends also when it raises. The trial's own setting is fixed when it opens."""
import threading

import numpy as np
import pytest

import smd
from smd import smdc
from smd.analysis.utils import no_refresh, refresh
from smd.rules import Rule
from smd.trials import create_trial


class LiveJob:
    """A running job written by smd's hook: tensor "w" (value = step) at every step, each step
    complete on disk once the next one begins."""

    def __init__(self, path):
        self.hook = smd.Hook(str(path), save_config=smd.SaveConfig(save_interval=1), include_regex=".*",
                             max_pending_steps=0)
        self.next = 0

    def write_step(self):
        """Writes the next step and makes it complete on disk; returns it."""
        step = self.next
        self.hook.begin_step()  # starts `step`
        self.hook.save_tensor("w", np.full(3, step, np.float32))
        self.hook.begin_step()  # starts step + 1 (which saves nothing): `step` is complete
        self.hook.flush()
        self.next = step + 2
        return step

    def close(self):
        self.hook.close()


@pytest.fixture
def live(tmp_path):
    job = LiveJob(tmp_path / "live")
    job.write_step()  # step 0
    yield job, tmp_path / "live"
    job.close()


def _in_thread(fn):
    """fn() run on a new thread (started by the caller's thread, inside its blocks)."""
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as e:  # handed back to the test
            out["error"] = e
    t = threading.Thread(target=run)
    t.start()
    t.join(30)
    assert not t.is_alive()
    if "error" in out:
        raise out["error"]
    return out["value"]


def test_no_refresh_hides_new_steps_on_this_thread_only(live):
    job, path = live
    tr = create_trial(str(path))
    assert tr.steps(show_incomplete_steps=True) == [0] and tr.auto_refresh is True
    w = tr.tensor("w")
    with no_refresh(tr) as same:
        assert same is tr and tr.auto_refresh is False
        new = job.write_step()
        # this thread does not refresh: neither the trial nor its tensor sees the new step
        assert tr.steps(show_incomplete_steps=True) == [0]
        assert tr.steps() == [0]
        assert w.steps() == [0]
        assert not tr.has_tensor("never/saved")
        # a thread started inside the block is not in it: its queries refresh
        assert _in_thread(lambda: tr.auto_refresh) is True
        assert _in_thread(lambda: tr.steps(show_incomplete_steps=True)) == [0, new]
        assert _in_thread(lambda: float(w.value(new)[0])) == new
        assert tr.auto_refresh is False  # still in the block here
    assert tr.auto_refresh is True
    assert tr.steps() == [0, new]


def test_after_no_refresh_queries_refresh_again(live):
    job, path = live
    tr = create_trial(str(path))
    with no_refresh([tr]) as [inner]:
        assert inner is tr
        new = job.write_step()
        assert tr.steps(show_incomplete_steps=True) == [0]
    assert tr.steps(show_incomplete_steps=True) == [0, new]
    assert tr.tensor("w").steps() == [0, new]


def test_refresh_nested_in_no_refresh_refreshes_and_the_innermost_wins(live):
    job, path = live
    tr = create_trial(str(path))
    with no_refresh(tr):
        a = job.write_step()
        assert tr.steps() == [0]
        with refresh(tr):
            assert tr.auto_refresh is True
            assert tr.steps() == [0, a]
            with no_refresh(tr):
                b = job.write_step()
                assert tr.auto_refresh is False and tr.steps() == [0, a]
            assert tr.auto_refresh is True and tr.steps() == [0, a, b]
        c = job.write_step()
        assert tr.auto_refresh is False and tr.steps() == [0, a, b]
    assert tr.auto_refresh is True and tr.steps() == [0, a, b, c]


def test_the_setting_the_trial_opened_with_holds_outside_blocks_and_on_other_threads(live):
    job, path = live
    tr = create_trial(str(path), auto_refresh=False)
    assert tr.auto_refresh is False
    assert not hasattr(tr, "set_auto_refresh")
    with pytest.raises(AttributeError):
        tr.auto_refresh = True  # fixed at open
    new = job.write_step()
    assert tr.steps() == [0]
    with refresh(tr):
        assert tr.auto_refresh is True
        assert _in_thread(lambda: tr.auto_refresh) is False
        assert _in_thread(lambda: tr.steps()) == [0]  # the other thread does not refresh
        assert tr.steps() == [0, new]
    assert tr.auto_refresh is False
    later = job.write_step()
    assert tr.steps() == [0, new]
    tr.refresh_data()  # an explicit refresh always loads
    assert tr.steps() == [0, new, later]


def test_a_block_ends_when_it_raises(live):
    job, path = live
    tr = create_trial(str(path))
    with pytest.raises(KeyError, match="inside"):
        with no_refresh(tr):
            new = job.write_step()
            assert tr.steps() == [0]
            raise KeyError("inside")
    assert tr.auto_refresh is True
    assert tr.steps() == [0, new]
    off = create_trial(str(path), auto_refresh=False)
    with pytest.raises(ValueError):
        with refresh(off):
            assert off.auto_refresh is True
            raise ValueError()
    assert off.auto_refresh is False


def test_a_block_over_several_trials_and_its_bad_arguments(live, tmp_path):
    job, path = live
    other_job = LiveJob(tmp_path / "other")
    other_job.write_step()
    a, b = create_trial(str(path)), create_trial(str(tmp_path / "other"))
    with no_refresh([a, b]) as trials:
        assert trials == [a, b] and a.auto_refresh is False and b.auto_refresh is False
        sa, sb = job.write_step(), other_job.write_step()
        assert a.steps() == [0] and b.steps() == [0]
    assert a.auto_refresh is True and b.auto_refresh is True
    assert a.steps() == [0, sa] and b.steps() == [0, sb]
    other_job.close()
    with pytest.raises(TypeError, match="Trial"):
        with no_refresh([a, "not a trial"]):
            pass
    assert a.auto_refresh is True  # the scope made for `a` before the bad item is gone


def test_two_handles_of_one_trial_share_the_block(live):
    """A scope (the C layer under the blocks) covers the trial through any handle: a Tensor
    made before it, and a second Tensor of the same name."""
    job, path = live
    tr = create_trial(str(path))
    w = tr.tensor("w")
    scope = smdc.smd_trial_refresh_scope_create(tr._trial, False)
    try:
        assert smdc.smd_trial_auto_refresh(tr._trial) is False
        new = job.write_step()
        assert w.steps() == [0] and tr.tensor("w").steps() == [0]
    finally:
        del scope  # the last reference: the proxy frees the scope at once, on this thread
    assert w.steps() == [0, new]
    assert tr.auto_refresh is True
    assert not hasattr(smdc, "smd_trial_refresh_scope_free")  # the proxy owns it


def test_loaded_all_steps_follows_the_calling_threads_setting(tmp_path):
    job = LiveJob(tmp_path / "live")
    job.write_step()
    tr = create_trial(str(tmp_path / "live"))
    assert tr.loaded_all_steps is False
    with no_refresh(tr):
        last = job.write_step()
        job.close()  # the job ends inside the block
        assert tr.loaded_all_steps is False  # no refresh on this thread
        assert tr.steps() == [0]
    assert tr.loaded_all_steps is True
    assert tr.steps() == [0, last]


def test_rule_invoke_does_not_refresh_and_ends_its_block(live):
    """Rule.invoke(step) evaluates the step inside no_refresh, also when the rule raises."""
    job, path = live
    tr = create_trial(str(path))

    class Probe(Rule):
        def __init__(self, trial):
            super().__init__(trial)
            self.seen = []

        def invoke_at_step(self, step):
            before = self.base_trial.steps()
            self.written.append(job.write_step())
            self.seen.append((self.base_trial.auto_refresh, before, self.base_trial.steps()))
            if step > 0:
                raise RuntimeError(f"fails at {step}")
            return False

    rule = Probe(tr)
    rule.written = []
    rule.invoke(0)
    assert rule.seen == [(False, [0], [0])]
    assert tr.auto_refresh is True and tr.steps() == [0] + rule.written
    second = rule.written[0]
    with pytest.raises(RuntimeError, match="fails at"):
        rule.invoke(second)
    assert rule.seen[1] == (False, [0, second], [0, second])
    assert tr.auto_refresh is True and tr.steps() == [0] + rule.written
