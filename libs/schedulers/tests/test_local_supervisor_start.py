"""How a local app's supervisor process starts: garbage collection held off until its
replicas are started, and its watchdog forked before the request is read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from torchx.schedulers._local_state_files import META_DIR, REQUEST_FILE, STATE_FILE
from torchx.schedulers.local_scheduler import START_SCRIPT, LocalScheduler
from torchx.specs import AppDef, Role

# the directory that holds torchx/, as the start script finds it
SRC = os.path.dirname(os.path.dirname(os.path.dirname(START_SCRIPT)))


def _in_fresh_python(code: str, stdin: str = "") -> str:
    """What ``code`` prints, run as the start script runs its modules (``-I -S``)."""
    prelude = f"import sys; sys.path.append({SRC!r})\n"
    out = subprocess.run(
        [sys.executable, "-I", "-S", "-c", prelude + code],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return out.stdout.strip()


def test_collection_resumes_with_the_start_frozen_where_the_start_script_held_it_off() -> None:
    code = """
import gc
from torchx.schedulers._local_processes import collect_from_now_on
gc.disable()
kept = [[i] for i in range(1000)]
collect_from_now_on()
print(gc.isenabled(), gc.get_freeze_count() >= 1000)
"""
    assert _in_fresh_python(code) == "True True"


def test_collection_left_alone_where_it_was_on() -> None:
    code = """
import gc
from torchx.schedulers._local_processes import collect_from_now_on
collect_from_now_on()
print(gc.isenabled(), gc.get_freeze_count())
"""
    assert _in_fresh_python(code) == "True 0"


def _processes_naming(text: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if text.encode() in f.read():
                    found.append(int(name))
        except OSError:
            continue
    return found


def test_a_supervisor_that_cannot_read_its_request_dismisses_its_watchdog(
    tmp_path: Path,
) -> None:
    """The watchdog is forked before the request is read; a request that cannot be read
    ends the supervisor, and its watchdog goes quietly: nothing was started, and the
    app's state is left as the scheduler wrote it (readers then find the supervisor gone,
    as before the watchdog was forked this early)."""
    scheduler = LocalScheduler("test", state_dir=tmp_path / "state")
    info = scheduler.submit_dryrun(
        AppDef("bad", [Role("r", image="", entrypoint="true")]),
        {"log_dir": str(tmp_path / "logs")},
    )
    req = info.request
    meta = scheduler._make_app_dir(req)
    scheduler._write_app_files(req, meta)
    Path(meta, REQUEST_FILE).write_text("{not json")
    state_before = Path(meta, STATE_FILE).read_text()

    done = subprocess.run(
        [sys.executable, "-I", "-S", START_SCRIPT, "_local_supervisor", req.app_dir],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert REQUEST_FILE in done.stderr  # the error names the file

    if os.path.isdir("/proc"):
        deadline = time.monotonic() + 60
        while _processes_naming(req.app_dir) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _processes_naming(req.app_dir) == []
    assert Path(meta, STATE_FILE).read_text() == state_before
    assert json.loads(state_before)["state"] == "PENDING"


# Runs the start script as the scheduler does (``-I -S``, collection held off by it), with
# the observed entry points wrapped to print whether collection is on: a supervisor's or
# group's main once it returns (its whole life after starting its replicas or workers),
# and the watchdog as it starts watching.
_OBSERVED_START = """
import gc, runpy, sys
from torchx.schedulers import _local_group, _local_supervisor, _local_watchdog

def after(what, fn):
    def wrapped(*args):
        out = fn(*args)
        print(what, gc.isenabled(), flush=True)
        return out
    return wrapped

def before(what, fn):
    def wrapped(*args):
        print(what, gc.isenabled(), flush=True)
        return fn(*args)
    return wrapped

_local_supervisor.main = after("supervisor", _local_supervisor.main)
_local_group.main = after("group", _local_group.main)
_local_watchdog.Watchdog.run = before("watchdog", _local_watchdog.Watchdog.run)
sys.argv = [{script!r}, *{args!r}]
runpy.run_path({script!r}, run_name="__main__")
"""


def _start_observed(args: list[str], stdin: str = "") -> list[str]:
    code = _OBSERVED_START.format(script=START_SCRIPT, args=args)
    # in a fixed order: the watchdog prints from a process of its own
    return sorted(_in_fresh_python(code, stdin).splitlines())


def _written_app(tmp_path: Path, name: str) -> str:
    """The directory of an app whose files the scheduler wrote, not yet started."""
    scheduler = LocalScheduler("test", state_dir=tmp_path / "state")
    info = scheduler.submit_dryrun(
        AppDef(name, [Role("r", image="", entrypoint="true")]),
        {"log_dir": str(tmp_path / "logs")},
    )
    scheduler._write_app_files(info.request, scheduler._make_app_dir(info.request))
    return info.request.app_dir


def test_a_real_supervisor_and_its_watchdog_collect_garbage_after_the_start(
    tmp_path: Path,
) -> None:
    app_dir = _written_app(tmp_path, "gc")
    assert _start_observed(["_local_supervisor", app_dir]) == [
        "supervisor True",
        "watchdog True",
    ]
    assert json.loads(Path(app_dir, META_DIR, STATE_FILE).read_text())["state"] == "SUCCEEDED"


def test_a_real_group_collects_garbage_after_the_start(tmp_path: Path) -> None:
    apps = [_written_app(tmp_path, f"gc{i}") for i in range(2)]
    lines = _start_observed(["_local_group", "1", "gcgroup"], "".join(f"{a}\n" for a in apps))
    assert "group True" in lines
    for app_dir in apps:
        assert json.loads(Path(app_dir, META_DIR, STATE_FILE).read_text())["state"] == "SUCCEEDED"
