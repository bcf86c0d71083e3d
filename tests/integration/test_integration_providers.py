"""``torchx.components.integration_tests``: its providers run against local_cwd, as 0.7's
users ran them against their schedulers."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import pytest

from torchx.components.integration_tests import component_provider as cp
from torchx.components.integration_tests.integ_tests import IntegComponentTest
from torchx.specs import AppDef, Role


@pytest.fixture(autouse=True)
def local_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    # The components run torchrun and python from this environment.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir(tmp_path)


@pytest.mark.slow
def test_every_builtin_provider_succeeds_on_local_cwd(capsys: pytest.CaptureFixture[str]) -> None:
    IntegComponentTest().run_components(cp, image="unused", scheduler="local_cwd", cfg={})
    out = capsys.readouterr().out
    for what in ("world size 2", "booth(1.0, 2.0) = 5.0", "sh/0 test", "copied 1 file"):
        assert what in out
    assert out.count("=== BEGIN LOG") == 6 and "(SUCCEEDED)" in out


def test_a_failing_provider_fails_the_run(capsys: pytest.CaptureFixture[str]) -> None:
    class Failing(cp.ComponentProvider):
        def get_app_def(self) -> AppDef:
            return AppDef("fails", [Role("r", image="", entrypoint="sh", args=["-c", "exit 3"])])

    module = types.ModuleType("providers")
    module.Failing = Failing  # type: ignore[attr-defined]
    module.Sh = cp.ShComponentProvider  # type: ignore[attr-defined]
    module.Base = cp.ComponentProvider  # type: ignore[attr-defined] # abstract: not run
    with pytest.raises(AssertionError, match="1/2 test apps did not succeed: local_cwd://"):
        IntegComponentTest().run_components(module, image="unused", scheduler="local_cwd", cfg={})
    assert "(FAILED)" in capsys.readouterr().out
    # A dry run submits nothing.
    IntegComponentTest().run_components(module, "unused", "local_cwd", {}, dryrun=True)
    assert "BEGIN LOG" not in capsys.readouterr().out
