"""The launcher's record of a requeue in the configured trackers: the app's run (its
handle) gets one metadata entry per attempt that ``torchx requeue`` started."""

from __future__ import annotations

from datetime import datetime, timezone

from torchx.runner import load_config, trackers_env
from torchx.specs import AppStatus


def attempt_key(attempt: int) -> str:
    """The metadata key of attempt ``attempt``, numbered as ``torchx log --attempt`` and
    ``status`` number them (1 is the first run's)."""
    return f"attempt_{attempt}"


def record_requeue(handle: str, status: AppStatus) -> list[str]:
    """Adds the attempt that the requeue started to every configured tracker's run of
    ``handle``; returns one line per tracker that could not record it (the requeue itself
    is done by then and stands)."""
    from torchx.tracker import trackers_from_environ

    attempt = status.num_preemptions + status.num_restarts + 1
    record = {
        "cause": "torchx requeue",
        "requeued_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "preemptions": status.num_preemptions,
        "state": status.state.name,
    }
    try:
        trackers = trackers_from_environ(trackers_env(load_config().trackers()))
    except Exception as e:  # a broken tracker config must not hide the done requeue
        return [f"trackers not updated: {e}"]
    problems = []
    for tracker in trackers:
        try:
            tracker.add_metadata(handle, **{attempt_key(attempt): record})
        except Exception as e:
            problems.append(f"{type(tracker).__name__} did not record attempt {attempt}: {e}")
    return problems
