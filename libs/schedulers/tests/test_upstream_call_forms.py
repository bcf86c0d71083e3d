"""0.7's call forms and request attributes that migrating code uses, beside this project's."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from torchx.specs import AppDef, BindMount, DeviceMount, Resource, Role, SpecsError
from torchx.specs.named_resources_aws import EFA_DEVICE


def _app(image: str = "busybox:1", replicas: int = 1) -> AppDef:
    return AppDef("a", [Role("r", image=image, entrypoint="echo", num_replicas=replicas)])


def test_0_7_keyword_names_of_log_helpers(tmp_path: Path) -> None:
    from torchx.schedulers.api import filter_regex
    from torchx.schedulers.streams import Tee

    assert list(filter_regex(regex="^b", data=["a\n", "b\n"])) == ["b\n"]
    source = tmp_path / "src"
    source.write_bytes(b"")
    tee = Tee(open(tmp_path / "out", "wb"), str(source))  # noqa: SIM115 -- the Tee closes it
    try:
        assert tee.write(s=b"hi") == 2
    finally:
        tee.close()
    assert (tmp_path / "out").read_bytes() == b"hi"


def test_kubernetes_app_to_resource_takes_the_queue_and_service_account_as_0_7_did() -> None:
    from torchx.schedulers.kubernetes_scheduler import app_to_resource

    vjob = app_to_resource(_app(), "q1", service_account="sa", priority_class="high")
    assert vjob["kind"] == "Job" and vjob["spec"]["queue"] == "q1"
    pod_spec = vjob["spec"]["tasks"][0]["template"]["spec"]
    assert pod_spec["serviceAccountName"] == "sa" and pod_spec["priorityClassName"] == "high"
    plain = app_to_resource(_app(), "q1", service_account=None)
    assert "serviceAccountName" not in plain["spec"]["tasks"][0]["template"]["spec"]


def test_kubernetes_app_to_resource_takes_0_7s_positional_service_account() -> None:
    from torchx.schedulers.kubernetes_scheduler import app_to_resource

    vjob = app_to_resource(_app(), "q1", "sa")  # 0.7: (app, queue, service_account)
    pod_spec = vjob["spec"]["tasks"][0]["template"]["spec"]
    assert vjob["spec"]["queue"] == "q1" and pod_spec["serviceAccountName"] == "sa"
    assert vjob["metadata"]["name"].startswith("a-")  # a generated id, as in 0.7
    full = app_to_resource(_app(), "q1", "sa", "high")  # and 0.7's priority_class after it
    full_spec = full["spec"]["tasks"][0]["template"]["spec"]
    assert full_spec["serviceAccountName"] == "sa" and full_spec["priorityClassName"] == "high"
    # an app id named with a queue is the app id, not a service account
    named = app_to_resource(_app(), "q1", app_id="a-2")
    assert named["metadata"]["name"] == "a-2"
    assert "serviceAccountName" not in named["spec"]["tasks"][0]["template"]["spec"]
    for call, field in (
        (lambda: app_to_resource(_app(), "q1", "sa", service_account="other"), "service_account"),
        (lambda: app_to_resource(_app(), {}, "a-1", app_id="a-2"), "app_id"),
        (lambda: app_to_resource(_app(), {}, "a-1", "extra"), "arguments"),
    ):
        with pytest.raises(SpecsError) as e:
            call()
        assert field in e.value.field and "\n" not in str(e.value)
    # the documented forms are unchanged
    vjob = app_to_resource(_app(), {"queue": "q1"}, "a-1")
    assert vjob["spec"]["queue"] == "q1" and vjob["metadata"]["name"] == "a-1"
    none = app_to_resource(_app(), "q1", None)
    assert none["spec"]["queue"] == "q1"
    assert "serviceAccountName" not in none["spec"]["tasks"][0]["template"]["spec"]


def test_kubernetes_app_to_resource_takes_0_7s_queue_by_name() -> None:
    from torchx.schedulers.kubernetes_scheduler import app_to_resource

    vjob = app_to_resource(_app(), queue="q1", service_account=None)  # 0.7's keyword form
    pod_spec = vjob["spec"]["tasks"][0]["template"]["spec"]
    assert vjob["spec"]["queue"] == "q1" and "serviceAccountName" not in pod_spec
    assert vjob["metadata"]["name"].startswith("a-")
    full = app_to_resource(_app(), queue="q1", service_account="sa", priority_class="high")
    full_spec = full["spec"]["tasks"][0]["template"]["spec"]
    assert full["spec"]["queue"] == "q1"
    assert full_spec["serviceAccountName"] == "sa" and full_spec["priorityClassName"] == "high"
    for call in (
        lambda: app_to_resource(_app(), "q0", queue="q1"),
        lambda: app_to_resource(_app(), {"queue": "q0"}, queue="q1"),
    ):
        with pytest.raises(SpecsError) as e:
            call()
        assert e.value.field == "app_to_resource's queue" and "\n" not in str(e.value)


def test_kubernetes_app_to_resource_refuses_an_empty_app_id() -> None:
    # None (or nothing) is a generated id; "" would silently become one, so it is refused
    from torchx.schedulers.kubernetes_scheduler import app_to_resource

    for call in (
        lambda: app_to_resource(_app(), {}, ""),
        lambda: app_to_resource(_app(), {"queue": "q"}, app_id=""),
        lambda: app_to_resource(_app(), "q1", app_id=""),
    ):
        with pytest.raises(SpecsError) as e:
            call()
        assert e.value.field == "app_to_resource's app_id" and "\n" not in str(e.value)
    assert app_to_resource(_app(), {}, None)["metadata"]["name"].startswith("a-")


@pytest.mark.skipif(sys.version_info < (3, 11), reason="typing.get_overloads is 3.11's")
def test_kubernetes_app_to_resource_declares_both_call_forms_to_type_checkers() -> None:
    # the documented (app, cfg, app_id) and 0.7's (app, queue, service_account,
    # priority_class), so a checker sees app_id's position rather than *args
    import inspect
    import typing

    from torchx.schedulers.kubernetes_scheduler import app_to_resource

    forms = [list(inspect.signature(f).parameters) for f in typing.get_overloads(app_to_resource)]
    assert [form[:4] for form in forms] == [
        ["app", "cfg", "app_id", "service_account"],
        ["app", "queue", "service_account", "priority_class"],
        ["app", "queue", "service_account", "priority_class"],  # queue= by name
    ]


def test_kubernetes_role_to_pod_takes_service_account_by_keyword() -> None:
    from torchx.schedulers.kubernetes_scheduler import role_to_pod

    pod = role_to_pod("p", _app().roles[0], service_account="sa")
    assert pod["kind"] == "Pod" and pod["spec"]["serviceAccountName"] == "sa"


def test_kubernetes_role_to_pod_reads_its_third_argument_as_0_7_did() -> None:
    # 0.7's role_to_pod(name, role, service_account): the string is the service account,
    # never the app id; the app id and run options go by name
    from torchx.schedulers.kubernetes_scheduler import LABEL_APP_ID, role_to_pod

    pod = role_to_pod("p", _app().roles[0], "sa")
    assert pod["spec"]["serviceAccountName"] == "sa"
    env = {e["name"]: e["value"] for e in pod["spec"]["containers"][0]["env"]}
    assert env["TORCHX_APP_ID"] == "p" and pod["metadata"]["labels"][LABEL_APP_ID] == "p"
    pod = role_to_pod("p", _app().roles[0], None, app_id="a-1", cfg={"service_account": "x"})
    env = {e["name"]: e["value"] for e in pod["spec"]["containers"][0]["env"]}
    assert env["TORCHX_APP_ID"] == "a-1" and pod["spec"]["serviceAccountName"] == "x"
    with pytest.raises(SpecsError) as e:
        role_to_pod("p", _app().roles[0], {"namespace": "n"})  # type: ignore[arg-type]
    assert e.value.field == "role_to_pod's service_account" and "\n" not in str(e.value)


def test_kubernetes_request_resource_and_images_to_push() -> None:
    from torchx.schedulers.kubernetes_scheduler import KubernetesScheduler

    sched = KubernetesScheduler("s")
    req = sched.submit_dryrun(_app(), {"queue": "q"}).request
    assert req.resource is req.manifests[0] and req.resource["kind"] == "Job"
    assert req.images_to_push == {}
    batch = sched.submit_dryrun(_app(), {"api": "batch"}).request
    assert batch.resource["kind"] == "List" and batch.resource["items"] == batch.manifests
    req.push = {"sha256:abc": "registry:5000/team/img:abc", "sha256:def": "img"}
    assert req.images_to_push == {
        "sha256:abc": ("registry:5000/team/img", "abc"),
        "sha256:def": ("img", "latest"),
    }


def test_docker_container_exposes_0_7s_image_command_and_run_keywords(tmp_path: Path) -> None:
    from torchx.schedulers.docker_scheduler import DockerScheduler

    role = Role(
        "trainer",
        image="busybox:1",
        entrypoint="main",
        args=["--lr", "0.1"],
        env={"FOO": "bar"},
        max_retries=3,
        resource=Resource(cpu=2, gpu=1, memMB=300, devices={EFA_DEVICE: 2}),
        mounts=[BindMount("/tmp", "/data", read_only=True), DeviceMount("/dev/fuse", "/dev/f")],
    )
    sched = DockerScheduler("s", base_url=f"unix://{tmp_path}/none.sock")
    (c,) = sched.submit_dryrun(AppDef("app", [role]), {"privileged": True}).request.containers
    assert c.image == "busybox:1" and c.command == ["main", "--lr", "0.1"]
    kw = c.kwargs
    assert kw["name"] == c.name == kw["hostname"] and kw["network"] == "torchx"
    assert kw["environment"]["FOO"] == "bar" and kw["environment"]["TORCHX_RANK0_HOST"] == c.name
    assert kw["privileged"] is True and kw["nano_cpus"] == 2_000_000_000
    assert kw["mem_limit"] == 300 * 2**20 and kw["restart_policy"]["MaximumRetryCount"] == 3
    assert kw["mounts"] == [{"Type": "bind", "Source": "/tmp", "Target": "/data", "ReadOnly": True}]
    assert kw["devices"] == [
        "/dev/fuse:/dev/f:rwm",
        "/dev/infiniband/uverbs0:/dev/infiniband/uverbs0:rwm",
        "/dev/infiniband/uverbs1:/dev/infiniband/uverbs1:rwm",
    ]
    assert kw["device_requests"][0]["Count"] == 1
    with pytest.raises(TypeError):
        kw["privileged"] = False  # type: ignore[index]


SIGTERM_PROGRAM = """
import os, signal, sys
from torchx.schedulers.local_scheduler import LocalScheduler, SignalException
if sys.argv[1] == "own":
    signal.signal(signal.SIGTERM, lambda *a: print("own handler", flush=True))
LocalScheduler("s", state_dir=sys.argv[2])
try:
    os.kill(os.getpid(), signal.SIGTERM)
    signal.sigtimedwait([], 0)  # let the handler run
except SignalException as e:
    print("SignalException", e.sigval.name)
else:
    print("no exception")
"""


@pytest.mark.parametrize(
    ("mode", "printed"), [("default", "SignalException SIGTERM"), ("own", "own handler")]
)
def test_a_local_scheduler_turns_sigterm_into_signal_exception(
    tmp_path: Path, mode: str, printed: str
) -> None:
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", SIGTERM_PROGRAM, mode, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == printed


def test_a_workspace_may_be_a_file_url_as_0_7_wrote_it(tmp_path: Path) -> None:
    from torchx.specs import SpecsError
    from torchx.workspace import TmpDirWorkspaceMixin
    from torchx.workspace.api import workspace_dir
    from torchx.workspace.docker_workspace import build_context

    project = tmp_path / "my project"
    project.mkdir()
    (project / "train.py").write_text("print('hi')\n")
    url = "file://" + str(project).replace(" ", "%20")
    assert workspace_dir(url) == str(project) == workspace_dir(str(project))
    assert workspace_dir("file://localhost" + str(project)) == str(project)
    role = Role("r", image="unused")
    TmpDirWorkspaceMixin().build_workspace_and_update_role(role, url, {})
    assert (Path(role.image) / "train.py").read_text() == "print('hi')\n"
    import shutil
    import tarfile

    shutil.rmtree(role.image)
    with tarfile.open(fileobj=build_context(url, "FROM x\n")) as tar:
        assert "train.py" in tar.getnames()
    for remote in ("s3://bucket/proj", "memory://proj", "file://otherhost/proj"):
        with pytest.raises(SpecsError, match="a local directory or a file:// URL"):
            workspace_dir(remote)


def test_local_app_directory_gets_0_7s_success_marker_when_the_app_ends(tmp_path: Path) -> None:
    import json
    import time

    from torchx.schedulers.local_scheduler import LocalScheduler
    from torchx.specs import AppState, is_terminal

    sched = LocalScheduler("sess", state_dir=tmp_path / "state")
    role = Role("echo", image=str(tmp_path), entrypoint="sh", args=["-c", "echo hi"])
    role.num_replicas = 2
    log_dir = tmp_path / "logs"
    app_id = sched.submit(AppDef("marker", [role]), {"log_dir": str(log_dir)})
    deadline = time.monotonic() + 120
    desc = sched.describe(app_id)
    while desc is not None and not is_terminal(desc.state) and time.monotonic() < deadline:
        time.sleep(0.05)
        desc = sched.describe(app_id)
    assert desc is not None and desc.state == AppState.SUCCEEDED
    marker = json.loads((log_dir / "sess" / app_id / "SUCCESS").read_text())
    assert marker["app_id"] == app_id and marker["final_state"] == "SUCCEEDED"
    assert marker["log_dir"] == str(log_dir / "sess" / app_id)
    replicas = marker["roles"]["echo"]
    assert [r["replica_id"] for r in replicas] == [0, 1]
    for r in replicas:
        assert r["exitcode"] == 0 and Path(r["stdout"]).read_text() == "hi\n"
        replica_dir = log_dir / "sess" / app_id / "echo" / str(r["replica_id"])
        assert r["stdout"] == str(replica_dir / "stdout.log")
        assert r["stderr"] == str(replica_dir / "stderr.log")


def test_ray_request_lists_0_7s_actors_one_per_replica(tmp_path: Path) -> None:
    from torchx.schedulers.ray.ray_common import RayActor
    from torchx.schedulers.ray_scheduler import RayScheduler

    role = Role(
        "trainer",
        image=str(tmp_path),
        entrypoint="python",
        args=["train.py"],
        num_replicas=2,
        resource=Resource(cpu=2, gpu=1, memMB=512),
    )
    req = RayScheduler("s").submit_dryrun(AppDef("app", [role]), {}).request
    actors = req.actors
    assert [type(a) for a in actors] == [RayActor, RayActor]
    assert [a.env["TORCHX_REPLICA_ID"] for a in actors] == ["0", "1"]
    assert all(a.name == "trainer" and a.command == ["python", "train.py"] for a in actors)
    assert (actors[0].num_cpus, actors[0].num_gpus) == (2, 1)
    # 0.7's working directory: the role's image, a local directory here
    assert req.working_dir == str(tmp_path)


def test_kubernetes_scheduler_takes_0_7s_docker_client_for_workspace_images() -> None:
    from unittest import mock

    from torchx.schedulers.kubernetes_scheduler import KubernetesScheduler, create_scheduler
    from torchx.specs import SpecsError

    docker = mock.MagicMock()
    sched = create_scheduler("s", client=mock.MagicMock(), docker_client=docker)
    assert isinstance(sched, KubernetesScheduler)
    sched.push_images({})  # nothing to push: the client is not asked
    sched.close()
    docker.close.assert_called_once()
    with pytest.raises(SpecsError, match="docker_client"):
        create_scheduler("s", docker_clinet=docker)


def test_image_providers_give_0_7s_replica_param(tmp_path: Path) -> None:
    from torchx.schedulers.local_scheduler import (
        CWDImageProvider,
        LocalDirectoryImageProvider,
        ReplicaParam,
    )
    from torchx.specs import SpecsError

    role = Role("r", image=str(tmp_path), entrypoint="a", args=["b", "c"], env={"K": "v"})
    local_dir = LocalDirectoryImageProvider({})
    rp = local_dir.get_replica_param(local_dir.fetch(role.image), role)
    assert isinstance(rp, ReplicaParam)
    assert rp.args == ["a", "b", "c"] and rp.env == {"K": "v"} and rp.cwd == str(tmp_path)
    cwd = CWDImageProvider({})
    other = Role("r", image="not/a/dir", entrypoint="a", args=["b"])
    assert cwd.get_replica_param(cwd.fetch(other.image), other).cwd == cwd.fetch(other.image)
    with pytest.raises(SpecsError, match="log_dir"):
        local_dir.get_replica_param(str(tmp_path), role, stdout="/tmp/out")
