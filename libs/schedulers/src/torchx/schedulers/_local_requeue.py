"""Requeues on local_cwd: the supervisor's side of ``torchx requeue`` and of an app that
exits asking to be run again (torchx.runtime.preemption's contract).

Standard library only, like every module the supervisor imports. The numbers repeat
torchx-runtime-preemption's (the launcher does not depend on the runtime library); a
test holds the two equal.
"""

from __future__ import annotations

import os

from torchx.schedulers._local_ending import end_groups, terminate
from torchx.schedulers._local_state_files import CANCEL_FILE, remove_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from torchx.schedulers._local_replica import Replica
    from torchx.schedulers._local_supervisor import Supervisor

# sysexits' EX_TEMPFAIL: the app asks to be run again (torchx.runtime.preemption.requeue).
REQUEUE_EXIT_CODE = 75
# Each replica's run of the app: 0 on its first start, +1 on each start after it.
ATTEMPT_ENV = "TORCHX_ATTEMPT"
# torchx.runtime.preemption.requeue() creates the file this names before it exits: the
# request survives a launcher that rewrites exit code 75 (torchrun makes it 1), as on Slurm.
ASKED_FILE_ENV = "TORCHX_REQUEUE_ASKED_FILE"
# ``torchx requeue`` creates this marker in the app's .torchx/ folder, then sends the
# supervisor SIGUSR1 (the marker covers a signal sent before the pid was recorded).
REQUEUE_FILE = "requeue"
# How many requeues an app may ask for by itself (exit 75 with no warning sent): an app
# that never finishes in its time must not loop forever. Preemptions are not capped.
DEFAULT_MAX_REQUEUES = 3


def take_requeue_marker(meta: str) -> bool:
    """Whether a requeue was asked for; the marker is removed, so each request counts once."""
    return remove_file(os.path.join(meta, REQUEUE_FILE))


def asked_file(meta: str, replica: Replica) -> str:
    """The file the replica's current attempt creates to ask for a requeue (in the app's
    .torchx/ folder, which exists: nothing is created at start)."""
    return os.path.join(meta, f"asked-{replica.role}-{replica.id}-{replica.attempt}")


def asked_requeue(meta: str, replica: Replica) -> bool:
    """Whether the replica's app, which just exited, asked to run again: exit code 75, or
    ``requeue()``'s file (removed, so that it counts once). An end the supervisor caused
    (a kill) never asks."""
    asked = remove_file(asked_file(meta, replica))
    return not replica.killed and (asked or replica.exit_code == REQUEUE_EXIT_CODE)


def requeue_app(sup: Supervisor, why: str) -> None:
    """Warn every running replica with SIGTERM, give it the grace to checkpoint and exit,
    then start again every replica that has not succeeded, under the same app.

    The ends this causes are neither failures nor retries: they are left out of the
    replicas' outcomes, and ``spawn`` writes the attempt marker into each log."""
    killed = terminate(sup, [r for r in sup.replicas if r.pid is not None and r.pid in sup.by_pid])
    if killed:
        _say_killed_after_grace(sup, killed)
    # what the old attempts left in their groups must not meet the new one
    end_groups(sup, {r.pid for r in sup.replicas if r.pid is not None})
    for r in sup.replicas:
        while r in sup.exited:
            sup.exited.remove(r)
    if sup.cancel_requested or os.path.exists(os.path.join(sup.meta, CANCEL_FILE)):
        # cancelled while its replicas were stopping: the app ends, nothing starts again
        sup.cancel_requested = True
        return
    sup.num_preemptions += 1
    for r in sup.replicas:
        if r.state != "SUCCEEDED":
            sup.spawn(r, why)
    sup.dirty = True


def _say_killed_after_grace(sup: Supervisor, killed: list[Replica]) -> None:
    """An app killed while it may still have been checkpointing: said in the log of the
    attempt that ended so and in the app's message (``status``, and ``torchx requeue``'s
    answer), which would otherwise read as a clean requeue."""
    names = ", ".join(f"{r.role}/{r.id}" for r in killed)
    sup.msg = (
        f"{names} did not exit within cancel_grace_seconds ({sup.grace:g}s) of the requeue's "
        "SIGTERM and was killed; its checkpoint may be incomplete (run it with a larger "
        "-cfg cancel_grace_seconds)"
    )
    for r in killed:
        try:  # noqa: SIM105 -- contextlib stays unimported, as in the supervisor
            r.record("stderr", f"[torchx] {sup.msg}\n".encode())
        except OSError:
            pass  # the app's message says it all the same
    sup.dirty = True


def on_requeue_exit(sup: Supervisor, role: str, replica_id: int) -> bool:
    """A replica exited with ``REQUEUE_EXIT_CODE`` on its own: requeue the app unless it
    asked more often than the request's ``max_requeues``. False when the cap is reached
    (the app is then FAILED with the reason)."""
    cap = int(sup.request.get("max_requeues", DEFAULT_MAX_REQUEUES))
    if sup.num_requeues >= cap:
        sup.state = "FAILED"
        sup.msg = sup.error = (
            f"role {role!r} replica {replica_id} asked for a requeue (exit code "
            f"{REQUEUE_EXIT_CODE}) after {sup.num_requeues} requeue(s) it asked for, the "
            f"most run option 'max_requeues' ({cap}) allows; raise it or let the app "
            "finish in fewer runs"
        )
        return False
    sup.num_requeues += 1
    requeue_app(
        sup,
        f"{role}/{replica_id} asked for a requeue (exit code {REQUEUE_EXIT_CODE}; "
        f"{sup.num_requeues} of at most {cap})",
    )
    return True
