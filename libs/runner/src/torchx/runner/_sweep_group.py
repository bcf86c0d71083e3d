"""The driver of a sweep on a scheduler without job arrays: one detached process per sweep.

``python -m torchx.runner._sweep_group SWEEP_ID INDICES`` submits one app per trial in
INDICES (comma separated) through the runner, never more than the sweep's ``parallel``
running at once, and records each submission in the sweep record before the next. On
SIGTERM (``torchx cancel SWEEP``) it submits nothing more, marks the trials it never
started as cancelled, cancels the ones running, and exits.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import traceback


def _run(sweep_id: str, indices: list[int]) -> int:
    from torchx.components import get_component
    from torchx.runner._runner import get_runner
    from torchx.runner._sweep_kubernetes import trial_cfg
    from torchx.runner._sweep_plan import trial_app
    from torchx.runner._sweep_processes import _LOCAL, _LOCAL_POLL_S, _REMOTE_POLL_S
    from torchx.runner._sweep_record import load, save
    from torchx.runner._sweep_status import exit_code
    from torchx.specs import is_terminal, make_app_handle

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    record = load(sweep_id)
    if record is None:
        print(f"torchx sweep driver: no record of {sweep_id}", file=sys.stderr)
        return 2
    record.driver_pid = os.getpid()
    record.driver_done = False
    save(record)
    poll = _LOCAL_POLL_S if record.scheduler in _LOCAL else _REMOTE_POLL_S
    limit = record.parallel or len(indices)
    pending = list(indices)
    running: dict[int, str] = {}
    # The submitting Runner's parameters, under the scheduler's name so that they reach
    # its factory alone (as that Runner gave them to it).
    params = {record.scheduler: record.scheduler_params}
    with get_runner(
        record.session, component_defaults=record.component_defaults, **params
    ) as runner:

        def forget_ended() -> None:
            """Record the end of each running trial that ended, and stop watching it."""
            ended = False
            for index, handle in list(running.items()):
                st = runner.status(handle)
                if st is None or is_terminal(st.state):
                    del running[index]
                    if st is not None:
                        trial = record.trials[index]
                        trial.final_state, trial.final_exit_code = st.state.name, exit_code(st)
                        ended = True
            if ended:
                save(record)

        schema = get_component(record.component)
        while (pending or running) and not stop.is_set():
            while pending and len(running) < limit and not stop.is_set():
                index = pending.pop(0)
                trial = record.trials[index]
                try:
                    app = trial_app(runner, schema, record, index)
                    info = runner.dryrun(
                        app,
                        record.scheduler,
                        trial_cfg(runner, record, index),
                        record.workspace,
                        parent_run_id=record.handle,
                    )
                    handle = runner.schedule(info)
                except Exception as e:  # one trial's refusal must not stop the others
                    print(f"trial {index}: {e}", file=sys.stderr)
                    trial.error = str(e)
                    save(record)
                    continue
                trial.attempts.append(handle.rsplit("/", 1)[-1])
                trial.final_state, trial.final_exit_code = "", None
                save(record)
                running[index] = handle
            if stop.wait(poll):
                break
            forget_ended()
        if stop.is_set():
            # What ended keeps its outcome; only what still runs is cancelled.
            forget_ended()
            for index in pending:
                record.trials[index].cancelled = True
            record.cancelled = True
            save(record)
            for index in running:
                attempt = record.trials[index].attempts[-1]
                runner.cancel(make_app_handle(record.scheduler, record.session, attempt))
    record.driver_done = True
    save(record)
    return 0


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: python -m torchx.runner._sweep_group SWEEP_ID INDICES", file=sys.stderr)
        return 2
    try:
        return _run(argv[1], [int(i) for i in argv[2].split(",") if i])
    except Exception:
        traceback.print_exc()
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
