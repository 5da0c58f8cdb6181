"""smdebug's ``no_refresh`` and ``refresh`` blocks (``smdebug.analysis.utils``).

``with no_refresh(trials):`` answers every query inside the block from the data already loaded
(new steps and tensors stay invisible); ``with refresh(trials):`` loads new data as queries need
it. ``trials`` is one Trial or a list of them, and the block gets it back, as in smdebug
(``with no_refresh([tr]) as [tr]:``).

A block applies to the thread that enters it only: it overrides, for the queries this thread
makes while it is open (through the Trial, its Tensors, or a rule reading it), the
``auto_refresh`` the trial was opened with. The trial's own setting never changes, so other
threads keep refreshing (or not) as before, and nothing needs restoring: when the block ends,
also when it raises, the override is gone and the next block out (or the trial's setting) holds
again. Blocks nest, the innermost wins (``Trial.auto_refresh`` says which setting holds on the
calling thread). smdebug instead sets each trial's refresh on after ``no_refresh`` and off after
``refresh``, for every thread, and leaves the setting of a block that raised. Enter and leave a
block on the same thread, as a ``with`` statement does.
"""
from contextlib import contextmanager

from smd import smdc as _smd

__all__ = ["no_refresh", "refresh"]


def _as_list(trials):
    from smd.trials.trial import Trial
    items = [trials] if isinstance(trials, Trial) else list(trials)
    for t in items:
        if not isinstance(t, Trial):
            raise TypeError(f"trials must be an smd Trial or a list of them, not {type(t).__name__}")
    return items


@contextmanager
def _refresh_scope(trials, on):
    """One smd refresh scope per trial, made on entry and freed in reverse order on exit, on
    this thread (a scope freed on another thread would end nothing): dropping the last reference
    to a scope's proxy frees it at once."""
    items = _as_list(trials)
    scopes = []
    try:
        for t in items:
            scopes.append(_smd.smd_trial_refresh_scope_create(t._trial, on))
        yield trials
    finally:
        while scopes:
            scopes.pop()


def no_refresh(trials):
    """A block in which queries of ``trials`` (a Trial or a list) made on this thread do not
    load new data."""
    return _refresh_scope(trials, False)


def refresh(trials):
    """A block in which queries of ``trials`` (a Trial or a list) made on this thread load new
    data as they need it."""
    return _refresh_scope(trials, True)
