"""How the container and Ray backends map torchx.runtime.preemption's contract: the grace
they give a warned app, and what their dry runs say where they cannot requeue
(Kubernetes can: Volcano replaces an evicted pod)."""

from __future__ import annotations

from torchx.specs import CfgVal, SpecsError

DOCKER_NOTE = (
    "preemption: `docker stop` warns each container with SIGTERM (StopSignal) and kills it "
    "StopTimeout seconds later; `torchx requeue` stops every container so, then starts the "
    "same containers again (attempt() reads $TORCHX_ATTEMPT_FILE); a container exiting 75 by "
    "itself is restarted only as a retry (max_retries)"
)
RAY_NOTE = (
    "preemption: a stopped Ray job's driver gets SIGTERM and passes it on to the replicas; "
    "`torchx requeue` stops the job so, then submits it again under the same submission id "
    "with TORCHX_ATTEMPT one more"
)


def grace_seconds(option: str, value: CfgVal, default: int) -> int:
    """A run option giving the seconds between the warning (SIGTERM) and SIGKILL."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SpecsError(
            f"run option {option!r}",
            value,
            "give a whole number of seconds, 0 or more, for the app to checkpoint and exit",
        )
    return value
