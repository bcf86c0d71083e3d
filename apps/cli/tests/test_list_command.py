"""``torchx list``: times, filters, the newest few by default, and ``--prune`` with the
retention of ``.torchxconfig`` (the installed ``torchx`` command, real local apps)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from .cli_process import torchx

TIME = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"


def run(*component: str) -> str:
    proc = torchx("run", "--no-log", *component)
    return proc.stdout.strip()


def test_list_shows_when_each_app_started_and_ended() -> None:
    done = run("utils.echo", "--msg", "x")
    running = torchx("run", "--no-wait", "utils.sh", "sleep 60").stdout.strip()
    try:
        proc = torchx("list")
        assert proc.returncode == 0, proc.stderr
        header, *rows = proc.stdout.splitlines()
        assert header.split() == ["APP", "HANDLE", "STATE", "NAME", "STARTED", "ENDED"]
        assert re.fullmatch(rf"{re.escape(done)}\s+SUCCEEDED\s+echo\s+{TIME}\s+{TIME}", rows[0])
        assert re.fullmatch(rf"{re.escape(running)}\s+RUNNING\s+sh\s+{TIME}\s+-", rows[1])
        data = json.loads(torchx("list", "--json").stdout)
        assert [a["app_handle"] for a in data] == [done, running]
        assert data[0]["ended_at"] and data[1]["ended_at"] is None
    finally:
        torchx("cancel", running)


def test_list_filters_by_state_name_scheduler_and_age() -> None:
    ok = run("utils.echo", "--msg", "x")
    bad = run("utils.sh", "exit 1")

    def handles(*args: str) -> list[str]:
        proc = torchx("list", "--json", *args)
        assert proc.returncode == 0, proc.stderr
        return [a["app_handle"] for a in json.loads(proc.stdout)]

    assert handles() == [ok, bad]
    assert handles("--state", "failed") == [bad]
    assert handles("--state", "SUCCEEDED,FAILED") == [ok, bad]
    assert handles("--name", "ech") == [ok]
    assert handles("--name", "s?") == [bad]
    assert handles("--since", "1h") == [ok, bad]
    assert handles("--since", "2999-01-01") == []
    assert handles("-s", "local_cwd", "--state", "RUNNING") == []
    bad_state = torchx("list", "--state", "DONE")
    assert bad_state.returncode == 2
    assert bad_state.stderr.startswith("torchx: error: --state: got 'DONE'; expected one or")


def test_list_shows_the_newest_apps_and_says_when_there_are_more(isolated: Path) -> None:
    handles = [run("utils.echo", "--msg", str(i)) for i in range(4)]
    proc = torchx("list", "--limit", "2")
    assert [ln.split()[0] for ln in proc.stdout.splitlines()[1:]] == handles[2:]
    assert proc.stderr == "torchx: the 2 newest apps shown; --limit N or --all for more\n"
    assert len(torchx("list", "--all").stdout.splitlines()) == 5
    (isolated / ".torchxconfig").write_text("[cli:list]\nlimit = 3\n")
    assert len(torchx("list").stdout.splitlines()) == 4


def test_prune_removes_old_ended_apps_and_their_logs_but_never_a_running_one(
    isolated: Path,
) -> None:
    ended = run("utils.echo", "--msg", "old")
    running = torchx("run", "--no-wait", "utils.sh", "sleep 60").stdout.strip()
    try:
        app_dirs = list((isolated / "state" / "torchx" / "local_cwd" / "logs" / "torchx").iterdir())
        assert len(app_dirs) == 2
        # the default retention keeps what just ran
        proc = torchx("list", "--prune")
        assert proc.returncode == 0 and proc.stdout == ""
        assert "removed 0 app(s) that ended more than 14d ago" in proc.stderr
        proc = torchx("list", "--prune", "--older-than", "0s")
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == f"{ended}\n"
        assert "running apps are kept" in proc.stderr
        assert [a["app_handle"] for a in json.loads(torchx("list", "--json").stdout)] == [running]
        left = list((isolated / "state" / "torchx" / "local_cwd" / "logs" / "torchx").iterdir())
        assert len(left) == 1 and running.endswith(left[0].name)
        assert torchx("status", ended).returncode == 2
        assert torchx("status", running).returncode == 0
    finally:
        torchx("cancel", running)


def test_prune_reads_the_retention_from_torchxconfig(isolated: Path) -> None:
    ended = run("utils.echo", "--msg", "old")
    (isolated / ".torchxconfig").write_text("[cli:list]\nretention = 0s\n")
    proc = torchx("list", "--prune")
    assert proc.stdout == f"{ended}\n"
    (isolated / ".torchxconfig").write_text("[cli:list]\nretention = soon\n")
    bad = torchx("list", "--prune")
    assert bad.returncode == 2
    assert bad.stderr.startswith("torchx: error: [cli:list] retention: got 'soon'; expected")


def test_prune_refuses_a_scheduler_without_local_records() -> None:
    proc = torchx("list", "--prune", "-s", "slurm")
    assert proc.returncode == 2
    assert "only local schedulers do" in proc.stderr and proc.stderr.count("\n") == 1


def test_list_takes_run_options_and_checks_them() -> None:
    proc = torchx("list", "-cfg", "no_such_option=1")
    assert proc.returncode == 2
    assert proc.stderr.startswith("torchx: error: ") and proc.stderr.count("\n") == 1
    assert torchx("list", "-cfg", "log_dir=/tmp").returncode == 0
