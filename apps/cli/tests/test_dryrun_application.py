"""``torchx run --dryrun``'s APPLICATION block shows what 0.7's printed and users check:
each role's resource (and the named resource it came from), mounts, retries and ports, and
the image that will run once the workspace is built into it."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from typer.testing import CliRunner

from torchx.cli._app import app
from torchx.schedulers import DescribeAppResponse, Scheduler, get_scheduler_factories
from torchx.specs import AppDef, AppDryRunInfo, CfgVal, Role, named_resources
from torchx.workspace import WorkspaceMixin

cli = CliRunner()

# local_cwd checks at dry-run that dist.ddp's program, torchrun, is on PATH: it is where
# torch is installed (a plain install of the CLI has no torch).
needs_torchrun = pytest.mark.skipif(
    shutil.which("torchrun") is None, reason="torchrun is not on PATH (torch is not installed)"
)


def application(*args: str) -> list[str]:
    """The lines of the APPLICATION block of ``torchx run --dryrun ARGS``."""
    result = cli.invoke(app, ["run", "--dryrun", *args])
    assert result.exit_code == 0, result.stderr
    block = result.stdout.split("=== APPLICATION ===\n", 1)[1]
    return block.split("=== SCHEDULER REQUEST ===", 1)[0].splitlines()


@needs_torchrun
def test_a_roles_resource_mounts_retries_and_ports_are_shown(isolated: Path) -> None:
    (isolated / "t.py").write_text("print(1)\n")
    lines = application(
        *("dist.ddp", "-h", "gpu.small", "-j", "1x2", "--max_retries", "3"),
        *("--mounts", "type=bind,src=/data,dst=/data,readonly", "--script", "t.py"),
    )
    small = named_resources["gpu.small"]
    size = f"cpu={small.cpu:g} gpu={small.gpu} memMB={small.memMB}"
    assert f"    resource: {size} (gpu.small, from -h)" in lines
    assert "    mounts: bind /data:/data:ro" in lines
    assert "    retries: max_retries=3 retry_policy=APPLICATION" in lines
    assert "    ports: c10d=29500" in lines


@needs_torchrun
def test_a_named_resource_from_a_config_file_shows_its_capabilities(isolated: Path) -> None:
    (isolated / "t.py").write_text("print(1)\n")
    (isolated / ".torchxconfig").write_text("[component:dist.ddp]\nh = aws_p3.2xlarge\n")
    (resource,) = (ln for ln in application("dist.ddp", "--script", "t.py") if "resource:" in ln)
    p3 = named_resources["aws_p3.2xlarge"]
    assert f"memMB={p3.memMB} capabilities={p3.capabilities}" in resource
    assert resource.endswith(
        f"(aws_p3.2xlarge, from {isolated / '.torchxconfig'} [component:dist.ddp])"
    )


def test_an_unsized_role_without_retries_or_ports_says_so_in_one_line(isolated: Path) -> None:
    lines = application("utils.echo")
    assert "    resource: the scheduler's default (unsized)" in lines
    assert not [ln for ln in lines if ln.lstrip().startswith(("mounts:", "retries:", "ports:"))]


class Building(WorkspaceMixin[None], Scheduler[dict[str, Any]]):
    """A 0.7-style plug-in whose workspace build names a new image after the workspace."""

    def __init__(self, session_name: str, **params: Any) -> None:
        super().__init__("building", session_name)

    def build_workspace_and_update_role(
        self, role: Role, workspace: str, cfg: Mapping[str, CfgVal]
    ) -> None:
        role.image = f"built/{Path(workspace).name}"

    def _submit_dryrun(self, app: AppDef, cfg: dict[str, CfgVal]) -> AppDryRunInfo[Any]:
        return AppDryRunInfo({"images": [r.image for r in app.roles]}, repr)

    def schedule(self, dryrun_info: AppDryRunInfo[dict[str, Any]]) -> str:
        raise AssertionError("a dry run submits nothing")

    def describe(self, app_id: str) -> DescribeAppResponse | None:
        return None

    def _cancel_existing(self, app_id: str) -> None:
        pass


def test_the_image_shown_is_the_one_the_workspace_build_made(isolated: Path) -> None:
    import torchx.runner.api as runner_api

    (isolated / "proj").mkdir()
    patched = {**get_scheduler_factories(), "building": Building}
    with mock.patch.object(runner_api, "get_scheduler_factories", return_value=patched):
        lines = application("-s", "building", "--workspace", "proj", "utils.echo")
    (image,) = (ln for ln in lines if "image:" in ln)
    assert image.startswith("    image: built/proj (the workspace built on ghcr.io/")
    assert image.endswith("from the default of utils.echo; --image to change it)")
