"""Small contradictions refused in one line instead of being ignored or misnamed."""

from __future__ import annotations

from pathlib import Path

from .cli_process import torchx


def test_no_wait_with_log_is_refused_before_anything_runs(isolated: Path) -> None:
    proc = torchx("run", "--no-wait", "--log", "utils.echo", "--msg", "hi")
    assert proc.returncode == 2 and proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert line.startswith("torchx: error: --log: given with --no-wait") and "log -f" in line
    assert torchx("list", "--all").stdout.count("local_cwd://") == 0  # nothing submitted


def test_torchxconfig_naming_a_directory_says_so(isolated: Path) -> None:
    proc = torchx("run", "--dryrun", "utils.echo", env={"TORCHXCONFIG": str(isolated)})
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"torchx: error: TORCHXCONFIG: got '{isolated}'; a directory; point it at a "
        ".torchxconfig file"
    )
