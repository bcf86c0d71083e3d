"""What the container and Ray backends' requests carry for a warned app (the signal and
its grace), and what their dry runs say about requeues."""

from __future__ import annotations

import pytest

from torchx.schedulers.docker_scheduler import DockerScheduler
from torchx.schedulers.kubernetes_scheduler import KubernetesScheduler
from torchx.schedulers.ray_scheduler import RayScheduler
from torchx.specs import AppDef, CfgVal, Role, SpecsError


def _app(image: str = "img:1") -> AppDef:
    return AppDef("train", [Role("trainer", image=image, entrypoint="python", args=["t.py"])])


def test_docker_containers_stop_with_sigterm_and_the_grace_asked_for() -> None:
    info = DockerScheduler("t").submit_dryrun(_app(), {"stop_grace_seconds": 45})
    (container,) = info.request.containers
    assert container.config["StopSignal"] == "SIGTERM"
    assert container.config["StopTimeout"] == 45
    assert "`torchx requeue` stops every container so, then starts the same" in str(info)
    # the file a requeue writes the next attempt into, as the environment is fixed
    assert "TORCHX_ATTEMPT_FILE=/.torchx-attempt" in container.config["Env"]


def test_kubernetes_pods_carry_the_termination_grace() -> None:
    s = KubernetesScheduler("t")
    info = s.submit_dryrun(_app(), {"termination_grace_seconds": 120})
    (job,) = info.request.manifests
    (task,) = job["spec"]["tasks"]
    assert task["template"]["spec"]["terminationGracePeriodSeconds"] == 120
    default = s.submit_dryrun(_app(), {}).request.manifests[0]
    assert default["spec"]["tasks"][0]["template"]["spec"]["terminationGracePeriodSeconds"] == 30


def test_ray_dryrun_says_how_it_requeues() -> None:
    info = RayScheduler("t").submit_dryrun(_app(image="/tmp"), {})
    assert "submits it again under the same submission id" in str(info)
    assert "with TORCHX_ATTEMPT one more" in str(info)


@pytest.mark.parametrize(
    ("scheduler", "option"),
    [(DockerScheduler, "stop_grace_seconds"), (KubernetesScheduler, "termination_grace_seconds")],
)
def test_a_negative_grace_is_one_line_naming_the_option(scheduler: type, option: str) -> None:
    cfg: dict[str, CfgVal] = {option: -1}
    with pytest.raises(SpecsError, match=f"run option '{option}'") as info:
        scheduler("t").submit_dryrun(_app(), cfg)
    assert "0 or more" in str(info.value) and "\n" not in str(info.value)
