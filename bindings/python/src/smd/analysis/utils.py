"""smdebug's ``no_refresh`` and ``refresh`` blocks (``smdebug.analysis.utils``).

``with no_refresh(trials):`` answers every query inside the block from the data already loaded
(new steps and tensors stay invisible); ``with refresh(trials):`` loads new data as queries need
it. ``trials`` is one Trial or a list of them, and the block gets it back, as in smdebug
(``with no_refresh([tr]) as [tr]:``). smd restores each trial's previous setting when the
block ends, also when it raises (smdebug sets refresh on after ``no_refresh`` and off after
``refresh``, and leaves the setting of a block that raised).
"""
from contextlib import contextmanager

__all__ = ["no_refresh", "refresh"]


def _as_list(trials):
    from smd.trials.trial import Trial
    items = [trials] if isinstance(trials, Trial) else list(trials)
    for t in items:
        if not isinstance(t, Trial):
            raise TypeError(f"trials must be an smd Trial or a list of them, not {type(t).__name__}")
    return items


@contextmanager
def _refresh_set(trials, on):
    items = _as_list(trials)
    previous = [t.set_auto_refresh(on) for t in items]
    try:
        yield trials
    finally:
        for t, was in zip(items, previous):
            t.set_auto_refresh(was)


def no_refresh(trials):
    """A block in which ``trials`` (a Trial or a list) do not load new data."""
    return _refresh_set(trials, False)


def refresh(trials):
    """A block in which ``trials`` (a Trial or a list) load new data as queries need it."""
    return _refresh_set(trials, True)
