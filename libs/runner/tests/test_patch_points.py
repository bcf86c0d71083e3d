"""Names 0.7's users patch (``unittest.mock.patch("torchx.runner.api.X")``) take effect."""

from __future__ import annotations

from typing import Any
from unittest import mock

from torchx.runner import api as runner_api


def test_get_runner_reads_the_patched_factories_of_the_api_module() -> None:
    scheduler = mock.MagicMock()
    factories = {"fake": lambda session, **kwargs: scheduler}
    patched = mock.patch("torchx.runner.api.get_scheduler_factories", return_value=factories)
    with patched, runner_api.get_runner() as runner:
        assert runner.scheduler_backends() == ["fake"]
        runner.scheduler_run_opts("fake")
    scheduler.close.assert_called_once()


def test_without_a_patch_get_runner_sees_the_registered_schedulers() -> None:
    with runner_api.get_runner() as runner:
        assert "local_cwd" in runner.scheduler_backends()


def test_log_lines_passes_streams_by_keyword() -> None:
    scheduler = mock.MagicMock()
    scheduler.log_iter.return_value = iter(["a"])

    def factory(session: str, **kwargs: Any) -> mock.MagicMock:
        return scheduler

    with runner_api.Runner("s", {"fake": factory}) as runner:
        assert list(runner.log_lines("fake://s/app", "trainer", 1)) == ["a"]
    args, kwargs = scheduler.log_iter.call_args
    assert args[:3] == ("app", "trainer", 1) and kwargs == {"streams": None}


def test_scheduler_factories_is_the_one_lookup_get_runner_and_the_cli_share() -> None:
    from torchx.runner import scheduler_factories

    assert "local_cwd" in scheduler_factories()
    factories = {"fake": lambda session, **kwargs: mock.MagicMock()}
    with mock.patch("torchx.runner.api.get_scheduler_factories", return_value=factories):
        assert list(scheduler_factories()) == ["fake"]


def test_the_readme_snippet_on_scheduler_factories_prints_what_it_says() -> None:
    import re
    import subprocess
    import sys
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    (code,) = [b for b in blocks if "scheduler_factories()" in b]
    promised = [line.split("# ")[1] for line in code.splitlines() if "print(" in line]
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == promised == ["['mine']", "['mine']"]
