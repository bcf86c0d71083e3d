"""local_cwd's ``--workspace`` copy is made on submit inside the app's own directory, so
copies never pile up: a dryrun makes none, and pruning an app's record removes its copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from .cli_process import torchx

MARKER = "only-in-the-workspace.txt"


def _copies(root: Path) -> list[Path]:
    return sorted(root.rglob(MARKER))


def _workspace(isolated: Path) -> Path:
    ws = isolated / "ws"
    ws.mkdir()
    (ws / MARKER).write_text("kept")
    (ws / "show.py").write_text(f"print(open({MARKER!r}).read())\n")
    return ws


def test_a_dryrun_copies_nothing(isolated: Path) -> None:
    ws = _workspace(isolated)
    proc = torchx("run", "--dryrun", "--workspace", str(ws), "utils.python", "--script", "show.py")
    assert proc.returncode == 0, proc.stderr
    assert _copies(isolated / "state") == []
    assert f"workspace: {ws}, copied into " in proc.stdout


def test_each_copy_lives_in_its_app_and_goes_with_its_record(isolated: Path) -> None:
    ws = _workspace(isolated)
    handles = []
    for _ in range(2):
        proc = torchx("run", "--workspace", str(ws), "utils.python", "--script", "show.py")
        assert proc.returncode == 0 and "/0 kept" in proc.stderr, proc.stderr
        handles.append(proc.stdout.strip())
    copies = _copies(isolated / "state")
    assert len(copies) == 2
    # inside an app's directory, one per app
    assert all(copy.parent.name == ".workspace" for copy in copies)
    assert {c.parent.parent.name for c in copies} == {h.rpartition("/")[2] for h in handles}
    proc = torchx("list", "--prune", "--older-than", "0s")
    assert proc.returncode == 0, proc.stderr
    assert _copies(isolated / "state") == []
    # nothing else of them is left behind either
    assert not (isolated / "state" / "torchx" / "local_cwd" / "workspaces").exists()


@pytest.mark.parametrize("state", ["XDG_STATE_HOME", "HOME"])
def test_a_workspace_holding_the_state_folder_does_not_copy_earlier_copies(
    isolated: Path, monkeypatch: pytest.MonkeyPatch, state: str
) -> None:
    # the state folder inside the workspace: $XDG_STATE_HOME there (the fixture's), or the
    # default ~/.local/state with the workspace as $HOME
    if state == "HOME":
        monkeypatch.delenv("XDG_STATE_HOME")
        monkeypatch.setenv("HOME", str(isolated))
    (isolated / MARKER).write_text("kept")
    (isolated / "show.py").write_text(f"print(open({MARKER!r}).read())\n")
    for runs in range(1, 4):
        proc = torchx("run", "--workspace", ".", "utils.python", "--script", "show.py")
        assert proc.returncode == 0 and "/0 kept" in proc.stderr, proc.stderr
        # the workspace's own file, and one copy per run: none of an earlier copy
        assert len(_copies(isolated)) == 1 + runs
    assert not [p for p in isolated.rglob("state") if ".workspace" in p.parts]


def test_a_sweep_shares_one_copy_among_its_trials(isolated: Path) -> None:
    ws = _workspace(isolated)
    trials = 4
    proc = torchx(
        "run",
        "--wait",
        "--workspace",
        str(ws),
        "--sweep",
        "max_retries=" + ",".join(map(str, range(trials))),
        "utils.sh",
        f"cat {MARKER}",  # each trial finds the file in its own working directory
    )
    assert proc.returncode == 0, proc.stderr
    copies = _copies(isolated / "state")
    # every trial has the file in its own app's directory, and its bytes are there once
    assert len({c.parent.parent for c in copies}) == trials
    assert len({(c.stat().st_dev, c.stat().st_ino) for c in copies}) == 1
    assert copies[0].stat().st_nlink == trials
    # the copy goes with the apps holding it
    proc = torchx("list", "--prune", "--older-than", "0s")
    assert proc.returncode == 0, proc.stderr
    assert _copies(isolated / "state") == []
