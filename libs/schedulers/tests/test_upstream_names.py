"""The public names each scheduler module keeps from pytorch/torchx, doing what they say."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from torchx.specs import AppDef, Role, SpecsError


def _app(image: str = "", entrypoint: str = "echo", replicas: int = 1) -> AppDef:
    return AppDef("a", [Role("r", image=image, entrypoint=entrypoint, num_replicas=replicas)])


def test_local_scheduler_parameters_and_image_providers(tmp_path: Path) -> None:
    from torchx.schedulers.local_scheduler import (
        CWDImageProvider,
        ImageProvider,
        LocalDirectoryImageProvider,
        LocalScheduler,
        create_dir_scheduler,
    )

    tools = tmp_path / "tools"
    tools.mkdir()
    s = LocalScheduler(
        "s",
        image_provider_class=LocalDirectoryImageProvider,
        cache_size=2,
        extra_paths=[str(tools)],
        state_dir=tmp_path / "state",
    )
    req = s.submit_dryrun(_app(image=str(tmp_path)), {}).request
    assert req.replicas[0].cwd == str(tmp_path)
    assert req.replicas[0].env["PATH"].split(os.pathsep)[0] == str(tools)
    with pytest.raises(SpecsError, match="local_dir scheduler runs in a directory"):
        s.submit_dryrun(_app(image="busybox:1"), {})
    with pytest.raises(SpecsError, match="cache_size"):
        LocalScheduler("s", cache_size=0)
    assert issubclass(CWDImageProvider, ImageProvider)
    assert CWDImageProvider({}).fetch("not-a-dir") == os.getcwd()
    assert CWDImageProvider({}).fetch(str(tmp_path)) == str(tmp_path)
    assert create_dir_scheduler("s", state_dir=str(tmp_path)).backend == "local_dir"


def test_local_factory_takes_0_7_parameters_in_0_7_order(tmp_path: Path) -> None:
    from torchx.schedulers.local_scheduler import (
        LocalDirectoryImageProvider,
        create_dir_scheduler,
        create_scheduler,
    )

    state = str(tmp_path / "state")
    # 0.7: create_scheduler(session_name, cache_size, extra_paths, image_provider_class)
    s = create_scheduler("s", 7, [str(tmp_path)], LocalDirectoryImageProvider, state_dir=state)
    assert (s.cache_size, s.extra_paths, s.backend) == (7, [str(tmp_path)], "local_cwd")
    assert s.image_provider_class is LocalDirectoryImageProvider
    assert str(s.state_dir) == state
    with pytest.raises(SpecsError, match="local_dir scheduler runs in a directory"):
        s.submit_dryrun(_app(image="busybox:1"), {})
    d = create_dir_scheduler("s", 3, state_dir=state)
    assert (d.cache_size, d.backend) == (3, "local_dir")
    with pytest.raises(SpecsError) as e:
        create_scheduler("s", cache_dir=state)
    assert "cache_dir" in str(e.value) and "image_provider_class" in str(e.value)
    with pytest.raises(TypeError):
        create_scheduler("s", 7, None, LocalDirectoryImageProvider, state)  # type: ignore[misc]
    # checked where given, not at the first submit
    with pytest.raises(SpecsError, match=r"image_provider_class.*ImageProvider"):
        create_scheduler("s", 7, None, "/opt/images")  # type: ignore[arg-type]
    with pytest.raises(SpecsError, match=r"extra_paths.*\['/opt/bin'\]"):
        create_dir_scheduler("s", 7, "/opt/bin")  # type: ignore[arg-type]


def test_slurm_requests_options_and_mail_aliases() -> None:
    from torchx.schedulers.slurm_scheduler import (
        SlurmBatchRequest,
        SlurmOpts,
        SlurmReplicaRequest,
        SlurmScheduler,
    )

    opts: SlurmOpts = {"partition": "debug", "mail-user": "me@example.com"}  # type: ignore[typeddict-unknown-key]
    info = SlurmScheduler("s").submit_dryrun(_app(replicas=2), {**opts, "mail-type": "END,FAIL"})
    req = info.request
    assert isinstance(req, SlurmBatchRequest)
    script = req.materialize()
    assert "#SBATCH --mail-user=me@example.com" in script
    assert "#SBATCH --mail-type=END,FAIL" in script
    assert "#SBATCH --partition=debug" in script
    replica = req.replicas["r"]
    assert isinstance(replica, SlurmReplicaRequest)
    assert replica.num_replicas == 2 and "--nodes=2" in replica.materialize()
    assert replica.env["TORCHX_ROLE_NAME"] == "r"


def test_kubernetes_resources_and_options() -> None:
    from torchx.schedulers.kubernetes_scheduler import (
        KubernetesOpts,
        KubernetesScheduler,
        app_to_resource,
        role_to_pod,
    )

    app = _app(image="busybox:1")
    vjob = app_to_resource(app, {"queue": "default"}, app_id="a-1")
    assert vjob["kind"] == "Job" and vjob["metadata"]["name"] == "a-1"
    batch = app_to_resource(app, {"api": "batch"}, app_id="a-1")
    assert batch["kind"] == "List" and [i["kind"] for i in batch["items"]] == ["Service", "Job"]
    pod = role_to_pod("p", app.roles[0], app_id="a-1")
    assert pod["kind"] == "Pod" and pod["metadata"]["name"] == "p"
    env = {e["name"]: e["value"] for e in pod["spec"]["containers"][0]["env"]}
    assert env["TORCHX_REPLICA_ID"] == "0" and env["TORCHX_APP_ID"] == "a-1"
    opts = KubernetesScheduler("s").run_opts()
    assert {"quiet", "image_repo", "namespace"} <= set(opts._opts)
    assert set(KubernetesOpts.__annotations__) >= {"quiet", "image_repo", "namespace"}


def test_docker_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from torchx.schedulers.docker_scheduler import (
        DockerJob,
        DockerOpts,
        DockerScheduler,
        has_docker,
    )

    s = DockerScheduler("s", base_url=f"unix://{tmp_path}/none.sock")
    assert isinstance(s.submit_dryrun(_app(image="busybox:1"), {}).request, DockerJob)
    assert {"quiet", "image_repo"} <= set(s.run_opts()._opts)
    assert set(DockerOpts.__annotations__) >= {"network", "image_repo", "quiet"}
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/none.sock")
    assert has_docker() is False


def test_ray_names() -> None:
    import importlib.util

    from torchx.schedulers.ray_scheduler import RayOpts, has_ray

    assert has_ray() is (importlib.util.find_spec("ray") is not None)
    assert set(RayOpts.__annotations__) >= {"address", "working_dir", "placement_strategy"}
