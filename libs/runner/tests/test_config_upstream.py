"""A ``.torchxconfig`` written for pytorch/torchx 0.7 works as written."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from torchx.runner import ConfigError, get_runner
from torchx.specs import AppDef, Role

APP = AppDef("cfg", [Role("r", image="", entrypoint="true")])

# What 0.7's `torchx configure --all` writes, built from the run options 0.7 documents for
# each scheduler it shipped (defaults filled in, ``None`` where there is none, a ``#FIXME``
# placeholder for a required option).
UPSTREAM_CONFIGURE_ALL = """\
[local_docker]
copy_env = None
env = None
privileged = False
image_repo = None
quiet = False

[local_cwd]
log_dir = None
prepend_cwd = False
auto_set_cuda_visible_devices = False

[slurm]
partition = None
time = None
comment = None
constraint = None
mail-user = None
mail-type = None
job_dir = None

[kubernetes]
namespace = default
queue = #FIXME:(str) Volcano queue to schedule job in
service_account = None
priority_class = None
image_repo = None
quiet = False

[kubernetes_mcad]
namespace = default
image_repo = None
service_account = None
priority = None
priority_class_name = None
network = None
quiet = False

[aws_batch]
queue = #FIXME:(str) queue to schedule the job in
user = None
privileged = False
share_id = None
priority = 0
image_repo = None
quiet = False

[aws_sagemaker]
role = #FIXME:(str) an IAM role name or full ARN that Amazon Sag
instance_count = None
instance_type = None

[gcp_batch]
project = None
location = us-central1

[ray]
cluster_config_file = None
cluster_name = None
dashboard_address = 127.0.0.1:8265
requirements = None

[lsf]
lsf_queue = None
jobdir = None
container_workdir = None
host_network = False
shm_size = 64m
"""


def test_a_configure_all_file_of_0_7_loads_and_every_scheduler_dry_runs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    Path(".torchxconfig").write_text(UPSTREAM_CONFIGURE_ALL)
    with caplog.at_level(logging.WARNING), get_runner() as runner:
        assert runner.dryrun(APP, "local_cwd").request is not None
        image = AppDef("cfg", [Role("r", image="ghcr.io/pytorch/torchx:0.7.0", entrypoint="true")])
        for scheduler in ("local_docker", "slurm", "kubernetes", "ray"):
            assert runner.dryrun(image, scheduler).request is not None, scheduler
        ray_cfg = runner.config.scheduler_cfg("ray", runner.scheduler_run_opts("ray"))
    # the sections of schedulers that are not installed are named, once, and skipped
    (warning,) = [r.getMessage() for r in caplog.records if "skipping" in r.getMessage()]
    for name in ("kubernetes_mcad", "aws_batch", "aws_sagemaker", "gcp_batch", "lsf"):
        assert f"[{name}]" in warning
    # values are read as 0.7 reads them: None and #FIXME are unset
    assert ray_cfg == {"dashboard_address": "127.0.0.1:8265"}


def test_a_mast_section_is_skipped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    Path(".torchxconfig").write_text("[mast]\nhpcClusterUuid = x\n\n[local_cwd]\nlog_dir = logs\n")
    with caplog.at_level(logging.WARNING), get_runner() as runner:
        info = runner.dryrun(APP, "local_cwd")
    assert "[mast]" in caplog.text and "no such scheduler is installed" in caplog.text
    assert os.path.join("logs", "") in str(info.request.app_dir) + os.sep


def test_prepend_cwd_puts_the_working_directory_first_on_path(isolated: Path) -> None:
    Path(".torchxconfig").write_text("[local_cwd]\nprepend_cwd = True\n")
    with get_runner() as runner:
        (replica,) = runner.dryrun(APP, "local_cwd").request.replicas
    assert replica.env["PATH"].split(os.pathsep)[0] == replica.cwd


def test_a_typo_in_a_known_schedulers_option_is_still_refused() -> None:
    Path(".torchxconfig").write_text("[local_cwd]\nprepend_cdw = True\n")
    with get_runner() as runner, pytest.raises(ConfigError, match="did you mean 'prepend_cwd'"):
        runner.dryrun(APP, "local_cwd")
    Path(".torchxconfig").write_text("[lcoal_cwd]\nlog_dir = /x\n")
    with pytest.raises(ConfigError, match=r"\[lcoal_cwd\].*did you mean 'local_cwd'"):
        get_runner()


def test_a_file_with_a_utf8_byte_order_mark_loads() -> None:
    Path(".torchxconfig").write_bytes("\ufeff[cli:run]\nscheduler = local_cwd\n".encode())
    with get_runner() as runner:
        assert runner.config.cli_defaults("run") == {"scheduler": "local_cwd"}


def test_cli_run_component_default(isolated: Path) -> None:
    from torchx.runner import load_config

    Path(".torchxconfig").write_text("[cli:run]\ncomponent = utils.echo\n")
    assert load_config().cli_defaults("run")["component"] == "utils.echo"


def test_local_docker_env_and_privileged_as_0_7_documents_them() -> None:
    Path(".torchxconfig").write_text(
        "[local_docker]\nenv = A:1;B:2\nprivileged = True\ncopy_env = None\n"
    )
    app = AppDef("d", [Role("r", image="ghcr.io/pytorch/torchx:0.7.0", entrypoint="true")])
    with get_runner() as runner:
        (container,) = runner.dryrun(app, "local_docker").request.containers
    assert {"A=1", "B=2"} <= set(container.config["Env"])
    assert container.config["HostConfig"]["Privileged"] is True
