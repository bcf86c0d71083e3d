"""local_cwd with real processes: roles, env, macros, logs, failures, retries, state on disk."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from datetime import datetime
from pathlib import Path

import pytest
from torchx_test_fixtures_processes import alive

from torchx.schedulers import Stream
from torchx.schedulers.local_scheduler import LocalScheduler, split_gpus, wait_for_exit
from torchx.specs import AppDef, AppState, Resource, RetryPolicy, Role, SpecsError, macros

needs_proc = pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc (Linux)")


def sh(name: str, script: str, replicas: int = 1, **kw: object) -> Role:
    return Role(name, image="", entrypoint="bash", args=["-c", script], num_replicas=replicas, **kw)  # type: ignore[arg-type]


def run(s: LocalScheduler, app: AppDef, **cfg: object) -> str:
    return s.schedule(s.submit_dryrun(app, cfg))  # type: ignore[arg-type]


def test_multi_role_multi_replica_env_macros_and_log_files(
    scheduler: LocalScheduler, tmp_path: Path
) -> None:
    log_dir = tmp_path / "logs"
    app = AppDef(
        "multi",
        [
            sh(
                "trainer",
                'echo "$TORCHX_APP_ID $TORCHX_ROLE_NAME $TORCHX_REPLICA_ID $RANK $WORLD_SIZE $X"',
                replicas=3,
                env={"X": f"r{macros.replica_id}"},
            ),
            Role(
                "ps",
                image=str(tmp_path),
                entrypoint="/bin/echo",
                args=[macros.app_id, macros.img_root, "ps-out"],
                num_replicas=2,
            ),
        ],
    )
    app_id = run(scheduler, app, log_dir=str(log_dir))
    desc = scheduler.wait(app_id)
    assert desc is not None and desc.state == AppState.SUCCEEDED
    assert [r.role for r in desc.roles_statuses] == ["trainer", "ps"]
    assert [len(r.replicas) for r in desc.roles_statuses] == [3, 2]
    assert all(r.exit_code == 0 for rs in desc.roles_statuses for r in rs.replicas)
    for k in range(3):
        out = (log_dir / "test" / app_id / "trainer" / str(k) / "stdout.log").read_text()
        assert out == f"{app_id} trainer {k} {k} 3 r{k}\n"
    for k in range(2):
        out = (log_dir / "test" / app_id / "ps" / str(k) / "stdout.log").read_text()
        assert out == f"{app_id} {tmp_path} ps-out\n"
    assert (log_dir / "test" / app_id / "ps" / "0" / "stderr.log").read_text() == ""
    # the AppDef comes back from disk
    assert desc.app is not None
    assert [r.name for r in desc.app.roles] == ["trainer", "ps"]
    assert desc.app.roles[1].args == [macros.app_id, macros.img_root, "ps-out"]


def test_replicas_each_run_in_their_own_process_group(scheduler: LocalScheduler) -> None:
    code = "import os; print(os.getpgid(0), os.getpid())"
    role = Role("w", image="", entrypoint=sys.executable, args=["-c", code], num_replicas=2)
    app_id = run(scheduler, AppDef("pg", [role]))
    scheduler.wait(app_id)
    for k in range(2):
        (line,) = scheduler.log_iter(app_id, "w", k, streams=Stream.STDOUT)
        pgid, pid = line.split()
        assert pgid == pid  # each replica leads its own group
        assert os.getpgid(0) != int(pgid)


def test_dryrun_has_no_side_effects_and_shows_commands(
    scheduler: LocalScheduler, tmp_path: Path
) -> None:
    info = scheduler.submit_dryrun(
        AppDef("dry", [sh("w", "echo hi")]), {"log_dir": str(tmp_path / "l")}
    )
    assert not (tmp_path / "l").exists()
    assert info.request.app_id.startswith("dry-")
    assert "w/0: cd" in str(info) and "echo hi" in str(info)
    assert scheduler.list() == []


def test_failed_app_names_role_replica_exit_code_and_stderr(scheduler: LocalScheduler) -> None:
    app = AppDef(
        "fails",
        [
            sh("ok", "sleep 30", replicas=2),
            sh("bad", 'if [ "$TORCHX_REPLICA_ID" = 1 ]; then echo boom-line >&2; exit 7; fi', 2),
        ],
    )
    app_id = run(scheduler, app, cancel_grace_seconds=2.0)
    desc = scheduler.wait(app_id)
    assert desc is not None and desc.state == AppState.FAILED
    assert "'bad'" in desc.msg and "replica 1" in desc.msg and "code 7" in desc.msg
    assert "boom-line" in desc.structured_error_msg
    bad = desc.roles_statuses[1].replicas[1]
    assert bad.state == AppState.FAILED and bad.exit_code == 7
    assert "boom-line" in bad.structured_error_msg
    # the rest were stopped rather than left running
    assert all(r.state == AppState.CANCELLED for r in desc.roles_statuses[0].replicas)
    assert "boom-line" in desc.to_status().format()


def test_exit_by_signal_is_reported(scheduler: LocalScheduler) -> None:
    app_id = run(scheduler, AppDef("sig", [sh("w", "kill -KILL $BASHPID")]))
    desc = scheduler.wait(app_id)
    assert desc is not None and desc.state == AppState.FAILED
    assert desc.roles_statuses[0].replicas[0].exit_code == -9
    assert "SIGKILL" in desc.msg


# Each replica appends a line per start; it fails the first time only if told to.
_FLAKY = textwrap.dedent(
    """
    echo start >> "$MARKS/$TORCHX_ROLE_NAME-$TORCHX_REPLICA_ID"
    if [ "$FAIL_ONCE" = "$TORCHX_ROLE_NAME-$TORCHX_REPLICA_ID" ] && [ ! -e "$MARKS/failed" ]; then
        # fail only once the others have started, so a restart counts each of them twice
        until [ -e "$MARKS/a-0" ] && [ -e "$MARKS/b-0" ]; do sleep 0.01; done
        touch "$MARKS/failed"; exit 3
    fi
    """
)


def _starts(marks: Path) -> dict[str, int]:
    return {p.name: len(p.read_text().splitlines()) for p in marks.iterdir() if p.name != "failed"}


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        (RetryPolicy.REPLICA, {"a-0": 1, "a-1": 2, "b-0": 1}),
        (RetryPolicy.ROLE, {"a-0": 2, "a-1": 2, "b-0": 1}),
        (RetryPolicy.APPLICATION, {"a-0": 2, "a-1": 2, "b-0": 2}),
    ],
)
def test_retry_policies(
    scheduler: LocalScheduler, tmp_path: Path, policy: RetryPolicy, expected: dict[str, int]
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    env = {"MARKS": str(marks), "FAIL_ONCE": "a-1"}
    # b finishes only once a-1 has started a second time, so an APPLICATION restart always
    # finds it running (a fixed sleep after a-1's failure lost that race on a busy machine)
    wait_b = (
        'echo start >> "$MARKS/b-0"; '
        'until [ "$(wc -l < "$MARKS/a-1" 2>/dev/null || echo 0)" -ge 2 ]; do sleep 0.01; done'
    )
    app = AppDef(
        "retry",
        [
            sh("a", _FLAKY, replicas=2, env=env, max_retries=1, retry_policy=policy),
            sh("b", wait_b, replicas=1, env=env),
        ],
    )
    app_id = run(scheduler, app, cancel_grace_seconds=2.0)
    desc = scheduler.wait(app_id)
    assert desc is not None
    assert desc.state == AppState.SUCCEEDED, desc.to_status().format()
    assert desc.num_restarts == 1
    assert _starts(marks) == expected


def test_retries_run_out(scheduler: LocalScheduler, tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    script = f'echo start >> {marks}/a-0; echo "attempt failed" >&2; exit 4'
    app = AppDef("out", [sh("a", script, max_retries=2, retry_policy=RetryPolicy.REPLICA)])
    app_id = run(scheduler, app)
    desc = scheduler.wait(app_id)
    assert desc is not None and desc.state == AppState.FAILED
    assert desc.num_restarts == 2
    assert _starts(marks) == {"a-0": 3}
    assert "after 2 restart(s)" in desc.msg
    assert "attempt failed" in desc.structured_error_msg


@needs_proc
@pytest.mark.parametrize("ignore_term", [False, True], ids=["polite", "ignores-sigterm"])
def test_cancel_kills_whole_process_trees(
    scheduler: LocalScheduler, tmp_path: Path, ignore_term: bool
) -> None:
    pids = tmp_path / "pids"
    trap = "trap '' TERM; " if ignore_term else ""
    # a child in the group, a child that escapes into its own session, and the replica
    script = (
        f"{trap}sleep 300 & echo $! >> {pids}; setsid sleep 300 & echo $! >> {pids}; "
        f"echo $BASHPID >> {pids}; while true; do sleep 0.05; done"
    )
    app_id = run(scheduler, AppDef("tree", [sh("w", script, replicas=2)]), cancel_grace_seconds=0.3)
    while not pids.exists() or len(pids.read_text().split()) < 6:
        time.sleep(0.01)
    started = [int(p) for p in pids.read_text().split()]
    assert all(alive(p) for p in started)
    scheduler.cancel(app_id)
    desc = scheduler.describe(app_id)
    assert desc is not None and desc.state == AppState.CANCELLED
    assert [p for p in started if alive(p)] == []
    scheduler.cancel(app_id)  # cancelling an ended app is a no-op


def test_logs_regex_tail_and_streams(scheduler: LocalScheduler, tmp_path: Path) -> None:
    go = tmp_path / "go"
    script = (
        f"echo one; echo two >&2; echo three; while [ ! -e {go} ]; do sleep 0.01; done; echo four"
    )
    app_id = run(scheduler, AppDef("logs", [sh("w", script)]))
    lines = iter(scheduler.log_iter(app_id, "w", 0, should_tail=True))
    seen = [next(lines) for _ in range(3)]  # arrives while the app still runs
    assert sorted(seen) == ["one\n", "three\n", "two\n"]
    go.touch()
    assert list(lines) == ["four\n"]  # and the tail ends with the app
    assert list(scheduler.log_iter(app_id, "w", streams=Stream.STDOUT)) == [
        "one\n",
        "three\n",
        "four\n",
    ]
    assert list(scheduler.log_iter(app_id, "w", streams=Stream.STDERR)) == ["two\n"]
    assert list(scheduler.log_iter(app_id, "w", regex="^t")) in (
        ["two\n", "three\n"],
        ["three\n", "two\n"],
    )
    with pytest.raises(SpecsError, match="regex"):
        scheduler.log_iter(app_id, "w", regex="(")


def test_logs_since_and_until(scheduler: LocalScheduler, tmp_path: Path) -> None:
    go = tmp_path / "go"
    script = f"echo early; while [ ! -e {go} ]; do sleep 0.01; done; echo late"
    app_id = run(scheduler, AppDef("since", [sh("w", script)]))
    assert next(iter(scheduler.log_iter(app_id, "w", should_tail=True))) == "early\n"
    cut = datetime.now()
    go.touch()
    scheduler.wait(app_id)
    assert list(scheduler.log_iter(app_id, "w", since=cut)) == ["late\n"]
    assert list(scheduler.log_iter(app_id, "w", until=cut)) == ["early\n"]
    assert list(scheduler.log_iter(app_id, "w")) == ["early\n", "late\n"]


def test_status_and_logs_from_another_process_after_launcher_exits(
    scheduler: LocalScheduler, tmp_path: Path, state_dir: Path
) -> None:
    go = tmp_path / "go"
    launcher = textwrap.dedent(
        f"""
        from torchx.schedulers.local_scheduler import LocalScheduler
        from torchx.specs import AppDef, Role
        s = LocalScheduler("x", state_dir={str(state_dir)!r})
        script = "echo hello $TORCHX_REPLICA_ID; while [ ! -e {go} ]; do sleep 0.01; done"
        role = Role("w", image="", entrypoint="bash", num_replicas=2, args=["-c", script])
        print(s.submit(AppDef("bg", [role])))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", launcher], capture_output=True, text=True, check=True
    )
    app_id = out.stdout.strip()
    # The launcher has exited; this process never launched anything.
    assert scheduler.exists(app_id)
    desc = scheduler.describe(app_id)
    assert desc is not None and desc.state in (AppState.PENDING, AppState.RUNNING)
    assert [a.app_id for a in scheduler.list()] == [app_id]
    go.touch()
    desc = scheduler.wait(app_id)
    assert desc is not None and desc.state == AppState.SUCCEEDED
    assert list(scheduler.log_iter(app_id, "w", 1)) == ["hello 1\n"]


def test_cancel_from_another_process(scheduler: LocalScheduler, state_dir: Path) -> None:
    app_id = run(scheduler, AppDef("cx", [sh("w", "sleep 300")]))
    code = (
        "from torchx.schedulers.local_scheduler import LocalScheduler;"
        f"LocalScheduler('y', state_dir={str(state_dir)!r}).cancel({app_id!r})"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    desc = scheduler.describe(app_id)
    assert desc is not None and desc.state == AppState.CANCELLED


def test_cancel_right_after_schedule(scheduler: LocalScheduler) -> None:
    app_id = run(scheduler, AppDef("early", [sh("w", "sleep 300", replicas=4)]))
    scheduler.cancel(app_id)
    desc = scheduler.wait(app_id)
    assert desc is not None and desc.state == AppState.CANCELLED


def test_64_replicas(scheduler: LocalScheduler) -> None:
    app_id = run(scheduler, AppDef("wide", [sh("w", "echo r$TORCHX_REPLICA_ID", replicas=64)]))
    desc = scheduler.wait(app_id)
    assert desc is not None and desc.state == AppState.SUCCEEDED
    assert len(desc.roles_statuses[0].replicas) == 64
    for k in (0, 31, 63):
        assert list(scheduler.log_iter(app_id, "w", k)) == [f"r{k}\n"]


def test_unknown_and_bad_app_ids(scheduler: LocalScheduler) -> None:
    assert scheduler.describe("nope-1234") is None
    assert not scheduler.exists("nope-1234")
    with pytest.raises(SpecsError, match="app id"):
        scheduler.describe("../etc")
    scheduler.cancel("nope-1234")  # an unknown app: nothing to stop
    with pytest.raises(SpecsError, match="no such local_cwd app"):
        scheduler.log_iter("nope-1234", "w")


def test_bad_role_and_replica_in_logs(scheduler: LocalScheduler) -> None:
    app_id = run(scheduler, AppDef("lr", [sh("worker", "true", replicas=2)]))
    with pytest.raises(SpecsError, match="did you mean 'worker'"):
        scheduler.log_iter(app_id, "wroker")
    with pytest.raises(SpecsError, match=r"replicas 0\.\.1"):
        scheduler.log_iter(app_id, "worker", 2)


def test_bad_run_options(scheduler: LocalScheduler) -> None:
    app = AppDef("opts", [sh("w", "true")])
    with pytest.raises(SpecsError, match="did you mean 'log_dir'"):
        scheduler.submit_dryrun(app, {"log_dri": "/tmp"})
    with pytest.raises(SpecsError, match="cancel_grace_seconds"):
        scheduler.submit_dryrun(app, {"cancel_grace_seconds": "soon"})
    with pytest.raises(SpecsError, match="'cwd'"):
        scheduler.submit_dryrun(app, {"cwd": "/no/such/dir"})


def test_missing_entrypoint_is_refused_before_launch(scheduler: LocalScheduler) -> None:
    app = AppDef("ep", [Role("w", image="", entrypoint="no-such-program-xyz")])
    with pytest.raises(SpecsError, match=r"no-such-program-xyz.*not found on PATH"):
        scheduler.submit_dryrun(app)


def test_log_dir_that_cannot_be_written(scheduler: LocalScheduler, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    app = AppDef("nolog", [sh("w", "true")])
    with pytest.raises(SpecsError, match="log_dir") as e:
        run(scheduler, app, log_dir=str(blocker / "logs"))
    assert str(blocker) in str(e.value)
    assert scheduler.list() == []


def test_gpu_split() -> None:
    assert split_gpus([2, 2, 0], ["4", "5", "6", "7"]) == [["4", "5"], ["6", "7"], []]
    with pytest.raises(SpecsError, match="ask for 3 GPUs in all but 2"):
        split_gpus([2, 1], ["0", "1"])


def test_cuda_visible_devices_per_replica(
    scheduler: LocalScheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3")
    role = Role("t", image="", entrypoint="true", num_replicas=2, resource=Resource(1, 2, 100))
    info = scheduler.submit_dryrun(AppDef("gpu", [role]), {"auto_set_cuda_visible_devices": True})
    assert [r.env["CUDA_VISIBLE_DEVICES"] for r in info.request.replicas] == ["0,1", "2,3"]
    off = scheduler.submit_dryrun(AppDef("gpu", [role]))
    assert all("CUDA_VISIBLE_DEVICES" not in r.env for r in off.request.replicas)


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="pidfds are Linux only")
def test_wait_for_exit_wakes_when_the_process_ends_not_before() -> None:
    long = subprocess.Popen(["sleep", "60"])
    short = subprocess.Popen(["sleep", "0.2"])
    try:
        assert wait_for_exit(long.pid, 0.05)  # the timeout passes: it still runs
        assert long.poll() is None
        assert wait_for_exit(short.pid, 60)
        assert short.wait(timeout=0) == 0  # it has exited: reaped with no waiting
    finally:
        long.kill()
        long.wait()
    assert wait_for_exit(long.pid, 60)  # no such process any more: at once


def _program(folder: Path, name: str, script: str) -> None:
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(f"#!/bin/sh\n{script}\n")
    (folder / name).chmod(0o755)


def test_a_bare_program_found_only_in_the_image_dir_ends_path_for_each_replica(
    scheduler: LocalScheduler, tmp_path: Path
) -> None:
    # The program is looked up once for all replicas alike, yet each replica's PATH gets
    # the directory; roles running other programs keep their PATH as it is.
    has, lacks = tmp_path / "has", tmp_path / "lacks"
    _program(has, "only-here.sh", "exit 0")
    lacks.mkdir()
    app = AppDef(
        "dirs",
        [
            Role("a", image=str(has), entrypoint="only-here.sh", num_replicas=3),
            Role("b", image=str(lacks), entrypoint="true", num_replicas=2),
            Role("c", image=str(has), entrypoint="true", num_replicas=2),
        ],
    )
    paths = {
        (r.role, r.id): r.env.get("PATH", "")
        for r in scheduler.submit_dryrun(app, {}).request.replicas
    }
    assert all(paths["a", k].split(os.pathsep)[-1] == str(has) for k in range(3)), paths
    assert not any(str(has) in paths[role, k] for role, k in paths if role != "a"), paths


def test_a_program_beside_this_python_ends_path_when_path_lacks_it(
    scheduler: LocalScheduler, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # torchx started as .venv/bin/torchx of an environment that was never activated:
    # its torchrun is beside its python, not on PATH
    venv_bin, on_path = tmp_path / "venv-bin", tmp_path / "on-path"
    _program(venv_bin, "launcher", "exit 0")
    monkeypatch.setattr(sys, "executable", str(venv_bin / "python"))
    monkeypatch.setenv("PATH", str(on_path))
    role = Role("r", image=str(tmp_path), entrypoint="launcher", num_replicas=2)
    replicas = scheduler.submit_dryrun(AppDef("venv", [role]), {}).request.replicas
    assert [r.env["PATH"] for r in replicas] == [os.pathsep.join([str(on_path), str(venv_bin)])] * 2
    # a program of the same name on PATH wins, and PATH stays as it is
    _program(on_path, "launcher", "exit 0")
    replicas = scheduler.submit_dryrun(AppDef("venv", [role]), {}).request.replicas
    assert all(r.env.get("PATH", str(on_path)) == str(on_path) for r in replicas)


def test_a_restarted_replica_looks_its_program_up_on_path_again(
    scheduler: LocalScheduler, tmp_path: Path
) -> None:
    # The first attempt runs first/prog, which removes itself and fails; the restart must
    # find second/prog, not start the path the first attempt was given.
    first, second = tmp_path / "first", tmp_path / "second"
    _program(first, "prog", 'rm -- "$0"; exit 3')
    _program(second, "prog", "echo second run")
    path = f"{first}{os.pathsep}{second}{os.pathsep}{os.environ['PATH']}"
    role = Role("r", image="", entrypoint="prog", env={"PATH": path}, max_retries=1)
    app_id = run(scheduler, AppDef("again", [role]))
    desc = scheduler.wait(app_id, timeout=120)
    assert desc is not None and desc.state == AppState.SUCCEEDED, desc
    assert desc.num_restarts == 1
    lines = list(scheduler.log_iter(app_id, "r", 0, streams=Stream.STDOUT))
    assert [line.strip() for line in lines] == ["second run"]
