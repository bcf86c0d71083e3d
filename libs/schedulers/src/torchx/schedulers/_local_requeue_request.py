"""The launcher's side of ``torchx requeue`` on local_cwd: ask the app's supervisor to
requeue it, and wait until the new attempt has started."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from typing import TYPE_CHECKING

from torchx.schedulers._errors import SchedulerError
from torchx.schedulers._local_requeue import REQUEUE_FILE
from torchx.schedulers._local_state_files import HOUSEKEEPING_INTERVAL, META_DIR, SUPERVISOR_LOG
from torchx.specs import AppState, SpecsError, is_terminal

if TYPE_CHECKING:
    from torchx.schedulers._api import DescribeAppResponse
    from torchx.schedulers._local_records import LocalAppRecords
    from torchx.schedulers.local_scheduler import LocalScheduler

# How often the launcher looks whether the new attempt has started.
_POLL_S = 0.02


def ask_requeue(
    sched: LocalScheduler, records: LocalAppRecords, app_id: str, timeout: float | None
) -> DescribeAppResponse:
    app_dir = records.app_dir(app_id)
    desc = sched.describe(app_id) if app_dir is not None else None
    if app_dir is None or desc is None:
        raise SpecsError(
            "app id", app_id, f"no such {sched.backend} app; `list` shows the known ones"
        )
    if is_terminal(desc.state):
        raise SpecsError(
            "app id",
            app_id,
            f"has ended ({desc.state.name}); only a running app can be requeued, "
            "`torchx run` it again instead",
        )
    before = desc.num_preemptions
    request, state = records.read(app_dir)
    with open(os.path.join(app_dir, META_DIR, REQUEUE_FILE), "w"):
        pass
    pid = state.get("supervisor_pid")
    if pid is not None and records.supervisor_alive(app_id, state):
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(pid), signal.SIGUSR1)
    grace = float(request.get("cancel_grace_s", 5.0))
    # the supervisor also looks for the marker once per housekeeping interval
    wait_s = timeout if timeout is not None else grace + 15.0 + HOUSEKEEPING_INTERVAL
    deadline = time.monotonic() + wait_s
    while True:
        desc = sched.describe(app_id)
        if desc is None or is_terminal(desc.state) or desc.num_preemptions > before:
            break
        if time.monotonic() >= deadline:
            raise SchedulerError(
                sched.backend,
                f"app {app_id!r} was not started again within {wait_s:.0f}s of the requeue request",
                f"see {os.path.join(app_dir, META_DIR, SUPERVISOR_LOG)}; `torchx status` "
                "shows whether it was requeued since",
            )
        time.sleep(_POLL_S)
    if desc is None:
        raise SpecsError("app id", app_id, "its records were deleted while it was requeued")
    if desc.state == AppState.CANCELLED and desc.num_preemptions == before:
        raise SchedulerError(
            sched.backend,
            f"app {app_id!r} was cancelled while being requeued; it was not started again",
            "`torchx run` it again to start it anew",
        )
    return desc
