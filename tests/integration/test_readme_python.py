"""The root README's snippets run as written: the Python one prints what its comments say,
and the shell lines of its tour do what their comments say."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -c CODE`` in ``cwd``, with torchx's state kept under it."""
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={**os.environ, "XDG_STATE_HOME": str(cwd / "state")},
        check=False,
    )


def test_the_readme_python_snippet_prints_what_its_comments_promise(tmp_path: Path) -> None:
    (code,) = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    promised = [
        m.group(1).split(":")[0].strip()
        for line in code.splitlines()
        if line.lstrip().startswith("print(") and (m := re.search(r"#\s*(.+)$", line))
    ]
    proc = _python(code, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == promised == ["SUCCEEDED", "True"]


def _tour() -> str:
    """The shell block under the README's "A short tour" heading."""
    after = README.read_text().split("## A short tour", 1)[1]
    match = re.search(r"```bash\n(.*?)```", after, re.S)
    assert match, "README's tour has no bash block"
    return match.group(1)


def _isolated_uv_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a new user of this checkout: no ``TORCHXCONFIG`` and a home
    without a ``~/.torchxconfig``, torchx's state under ``tmp_path``, and ``uv run``
    using ``uv.lock`` as it is (never re-locking) with the caller's uv cache."""
    cache = subprocess.run(["uv", "cache", "dir"], capture_output=True, text=True, check=True)
    env = {k: v for k, v in os.environ.items() if k != "TORCHXCONFIG"}
    return {
        **env,
        "HOME": str(tmp_path),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "UV_CACHE_DIR": cache.stdout.strip(),
        "UV_FROZEN": "1",
        # run from a directory without a .torchxconfig, for this checkout's project
        "UV_PROJECT": str(README.parent),
    }


@pytest.mark.skipif(shutil.which("uv") is None, reason="needs uv on PATH")
def test_the_readme_tour_runs_line_by_line_as_written(tmp_path: Path) -> None:
    lines = _tour().splitlines()
    # the tour's DDP line trains for a while; tests/integration/test_cli_ddp.py runs that
    # script for real, so here it only has to be a valid command (a dryrun)
    ddp = "uv run torchx run dist.ddp"
    assert sum(line.startswith(ddp) for line in lines) == 1
    lines = [line.replace(ddp, "uv run torchx run --dryrun dist.ddp") for line in lines]
    # the --no-wait app is cancelled however the tour ends; the tour's own cancel comes last
    (started,) = [k for k, line in enumerate(lines) if line.startswith("H=$(")]
    lines.insert(started + 1, "trap 'uv run torchx cancel \"$H\" >/dev/null 2>&1' EXIT")
    script = "\n".join([*lines, "trap - EXIT", 'echo "HANDLE=$H"'])
    tour = tmp_path / "checkout"
    tour.mkdir()
    (tour / "examples").symlink_to(README.parent / "examples")  # the paths it names
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tour,
        env=_isolated_uv_env(tmp_path),
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    handle = re.findall(r"^HANDLE=(local_cwd://torchx/sh-\w+)$", out, re.M)
    assert len(handle) == 1, out
    for promised in (
        "utils.echo           Prints a message to stdout.",  # builtins -v: each one's summary
        "usage: utils.echo [--msg MSG]",  # the component's arguments
        "#SBATCH --job-name=echo",  # the Slurm request
        "role ddp_train x1: torchrun",  # dist.ddp -j 2 --script ...
        f"cancelled {handle[0]}",  # cancel says what it did
    ):
        assert promised in out, f"{promised!r} not in:\n{out}"
    # status of the app started with --no-wait (sleep 60: not ended before the cancel)
    assert re.search(r"State: (PENDING|RUNNING)", out), out


@pytest.mark.parametrize(
    ("readme", "heading"),
    [
        ("libs/pipelines/README.md", "## Chaining stages"),
        ("libs/tracking/README.md", "### Writing another tracker"),
        ("libs/specs/README.md", ""),
        ("libs/function/README.md", ""),
    ],
)
def test_a_library_readme_python_block_runs_alone_as_written(
    readme: str, heading: str, tmp_path: Path
) -> None:
    """The block under ``heading`` (each block of the README when ``heading`` is empty)
    runs on its own, its imports included: a reader copies one block, not the blocks above
    it. The library README of layers is a tour whose blocks build on each other; its own
    tests run them in order (libs/layers/tests/test_readme.py)."""
    if readme.startswith("libs/pipelines"):
        pytest.importorskip("kfp")
    text = (README.parent / readme).read_text()
    after = text.split(heading, 1)[1] if heading else text
    blocks = re.findall(r"^```python\n(.*?)^```", after, re.M | re.S)
    assert blocks, f"no Python block under {heading!r} in {readme}"
    for code in blocks[:1] if heading else blocks:
        proc = _python(code, tmp_path)
        assert proc.returncode == 0, f"{readme}:\n{code}\n{proc.stderr}"
