"""local_cwd on a full disk: a real, small tmpfs holds the state; the disk fills while apps
run. No outcome is lost or invented, nothing half-made or temporary is left behind."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("unshare") is None,
    reason="needs Linux and unshare(1) to mount a private tmpfs",
)

SCENARIO = textwrap.dedent(
    r"""
    import errno, glob, json, os, sys, time
    from torchx.schedulers.local_scheduler import LocalScheduler
    from torchx.specs import AppDef, Role

    mnt, outside = sys.argv[1], sys.argv[2]
    s = LocalScheduler("torchx", state_dir=os.path.join(mnt, "state"))
    filler = os.path.join(mnt, "filler")
    out = {}

    def app(name, script):
        return AppDef(name, [Role("w", image="", entrypoint="bash", args=["-c", script])])

    def waits_for(flag, then="exit 0"):
        return f"while [ ! -e {outside}/{flag} ]; do sleep 0.02; done; {then}"

    def fill():
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        for size in (1 << 16, 1 << 12, 1 << 9, 1):
            try:
                while True:
                    os.write(fd, bytes(size))
            except OSError as e:
                assert e.errno == errno.ENOSPC, e
        os.close(fd)

    def running(app_id):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            path = os.path.join(s._app_dir(app_id), ".torchx", "state.json")
            st = json.load(open(path))
            if [r.get("state") for r in st.get("replicas", [])] == ["RUNNING"]:
                return os.path.dirname(path)
            time.sleep(0.02)
        raise AssertionError(f"{app_id} did not start")

    def ended(desc):
        reps = [r for rs in desc.roles_statuses for r in rs.replicas]
        return {"state": desc.state.name, "msg": desc.msg,
                "exit_codes": [r.exit_code for r in reps]}

    def touch(flag):
        open(os.path.join(outside, flag), "w").close()

    # 1. an app that writes nothing ends with 0 while the disk is full
    quiet = s.submit(app("quiet", waits_for("go1")))
    running(quiet)
    fill()
    touch("go1")
    out["quiet"] = ended(s.wait(quiet, timeout=60))
    out["quiet_on_disk"] = json.load(
        open(os.path.join(s._app_dir(quiet), ".torchx", "state.json")))["state"]

    # 2. submitting while full: a clear error, nothing half-made, nothing listed
    try:
        s.submit(app("while_full", "true"))
        out["submit"] = "accepted"
    except Exception as e:
        out["submit"] = f"{type(e).__name__}: {e}"
    out["listed"] = sorted(a.app_id for a in s.list())
    out["app_dirs"] = sorted(os.listdir(os.path.dirname(s._app_dir(quiet))))

    # 3. one that prints while the disk is full: its status names the full disk
    os.unlink(filler)
    chatty = s.submit(app("chatty", waits_for("go2", "echo hello; exit 0")))
    running(chatty)
    fill()
    touch("go2")
    out["chatty"] = ended(s.wait(chatty, timeout=60))

    # 4. the room set aside is gone too: the end waits for space, and is never FAILED
    os.unlink(filler)
    late = s.submit(app("late", waits_for("go3")))
    meta = running(late)
    if os.path.exists(os.path.join(meta, "reserve")):
        os.unlink(os.path.join(meta, "reserve"))
    fill()
    touch("go3")
    time.sleep(2.5)
    out["late_while_full"] = s.describe(late).state.name
    os.unlink(filler)
    out["late"] = ended(s.wait(late, timeout=60))

    out["tmp_files"] = glob.glob(os.path.join(mnt, "**", "*.tmp"), recursive=True)
    out["reserves_left"] = glob.glob(os.path.join(mnt, "**", "reserve"), recursive=True)
    print(json.dumps(out))
    """
)


def _in_private_tmpfs(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    mnt = tmp_path / "mnt"
    mnt.mkdir(exist_ok=True)
    # a mount namespace of our own: the tmpfs is seen by this command and its children only
    unshare = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-rm"]
    mount = 'mount -t tmpfs -o size=2m torchx-test "$0" && exec "$@"'
    return subprocess.run(
        [*unshare, "sh", "-c", mount, str(mnt), *argv],
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_a_full_state_disk_loses_no_outcome_and_leaves_nothing_behind(tmp_path: Path) -> None:
    probe = _in_private_tmpfs(tmp_path, "true")
    if probe.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {probe.stderr.strip()}")
    script = tmp_path / "scenario.py"
    script.write_text(SCENARIO)
    outside = tmp_path / "flags"
    outside.mkdir()
    mnt = str(tmp_path / "mnt")
    done = _in_private_tmpfs(tmp_path, sys.executable, str(script), mnt, str(outside))
    assert done.returncode == 0, done.stderr
    got: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])

    # exited 0 while full: SUCCEEDED, its exit code kept, and so on disk
    assert got["quiet"] == {"state": "SUCCEEDED", "msg": "", "exit_codes": [0]}
    assert got["quiet_on_disk"] == "SUCCEEDED"

    # a submit while full names the path and the cause, and leaves no app behind
    assert got["submit"].startswith("SchedulerError: local_cwd: cannot start app while_full-")
    assert "No space left on device" in got["submit"] and str(tmp_path / "mnt") in got["submit"]
    assert not any(a.startswith("while_full") for a in got["listed"] + got["app_dirs"])
    assert sorted(got["listed"]) == sorted(got["app_dirs"])

    # output that cannot be kept fails the app, and the status says it was the full disk
    chatty = got["chatty"]
    assert chatty["state"] == "FAILED"
    assert "No space left on device" in chatty["msg"]
    assert "cannot write the output of w/0 to " + str(tmp_path / "mnt") in chatty["msg"]
    assert "killed" not in chatty["msg"] and "supervisor.log" not in chatty["msg"]

    # no room at all: not ended while full (never FAILED), SUCCEEDED once space returns
    assert got["late_while_full"] == "RUNNING"
    assert got["late"] == {"state": "SUCCEEDED", "msg": "", "exit_codes": [0]}

    assert got["tmp_files"] == []
    assert got["reserves_left"] == []
