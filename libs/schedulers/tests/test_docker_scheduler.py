"""local_docker: exact container requests, checks before submission, and a real engine."""

from __future__ import annotations

import socket
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from torchx_test_fixtures_ports import free_loopback_port

from torchx.schedulers import SchedulerError, get_scheduler
from torchx.schedulers.docker_scheduler import (
    LABEL_APP_ID,
    DockerScheduler,
    build_request,
)
from torchx.specs import (
    AppDef,
    AppState,
    BindMount,
    Resource,
    Role,
    SpecsError,
)
from torchx.workspace.api import IMAGE_IGNORE_FILES, read_ignore_patterns

from .container_apps import trainer_role


def _app(**kw: Any) -> AppDef:
    # No named devices: those become host device files, which the mount test does not expect.
    kw.setdefault("resource", Resource(cpu=1.5, gpu=2, memMB=2048))
    return AppDef("trainer", roles=[trainer_role(**kw)])


def test_container_requests_field_by_field() -> None:
    req = build_request(_app(), "trainer-1", {"network": "torchx", "shm_size": "2g"})
    assert req.app_id == "trainer-1" and req.network == "torchx" and req.push == {}
    assert [(c.role, c.replica_id) for c in req.containers] == [("trainer", 0), ("trainer", 1)]
    assert req.containers[1].name == "trainer-1-trainer-1"
    # The exact JSON body of the Engine API's POST /containers/create.
    assert req.containers[1].config == {
        "Hostname": "trainer-1-trainer-1",
        "Image": "registry.example.com/org/train:1.0",
        "Entrypoint": ["python"],
        "Cmd": ["-m", "train", "--rank", "1", "--id", "trainer-1"],
        # The scheduler's defaults, then the role's env, then torchx's own variables.
        "Env": [
            "PYTHONUNBUFFERED=1",
            "MASTER_ADDR=trainer-1-trainer-0",
            "MASTER_PORT=29500",
            "RANK=1",
            "WORLD_SIZE=2",
            "GROUP_RANK=1",
            "ROLE_RANK=1",
            "ROLE_WORLD_SIZE=2",
            "LOCAL_RANK=0",
            "LOCAL_WORLD_SIZE=1",
            "FOO=bar",
            "TORCHX_APP_ID=trainer-1",
            "TORCHX_ROLE_NAME=trainer",
            "TORCHX_REPLICA_ID=1",
            "TORCHX_RANK0_HOST=trainer-1-trainer-0",
            # a requeue writes the next attempt there: the environment is fixed
            "TORCHX_ATTEMPT_FILE=/.torchx-attempt",
        ],
        "Labels": {
            LABEL_APP_ID: "trainer-1",
            "torchx.pytorch.org/app-name": "trainer",
            "torchx.pytorch.org/role-name": "trainer",
            "torchx.pytorch.org/replica-id": "1",
            "torchx.pytorch.org/version": "1",
        },
        "HostConfig": {
            "NetworkMode": "torchx",
            "ShmSize": 2 * 1024**3,
            "NanoCpus": 1_500_000_000,
            "Memory": 2048 * 1024**2,
            "DeviceRequests": [{"Driver": "nvidia", "Count": 2, "Capabilities": [["gpu"]]}],
            "Mounts": [
                {"Type": "bind", "Source": "/data", "Target": "/mnt/data", "ReadOnly": True},
                {"Type": "volume", "Source": "ckpt-pvc", "Target": "/ckpt", "ReadOnly": False},
            ],
            "Devices": [
                {
                    "PathOnHost": "/dev/fuse",
                    "PathInContainer": "/dev/fuse",
                    "CgroupPermissions": "rw",
                }
            ],
            "RestartPolicy": {"Name": "on-failure", "MaximumRetryCount": 3},
        },
        # the warning a torchx.runtime.preemption app checkpoints on, and its grace
        "StopSignal": "SIGTERM",
        "StopTimeout": 10,
    }


@pytest.mark.parametrize(
    ("text", "size"), [("64m", 64 * 1024**2), ("1024k", 1024**2), ("2G", 2 * 1024**3), ("512", 512)]
)
def test_shm_size_is_sent_in_bytes(text: str, size: int) -> None:
    req = build_request(_app(), "a-1", {"shm_size": text})
    assert req.containers[0].config["HostConfig"]["ShmSize"] == size


def test_host_network_has_no_hostname_and_rank0_is_loopback() -> None:
    app = _app(resource=Resource(cpu=-1, gpu=-1, memMB=-1), mounts=[], max_retries=0)
    c = build_request(app, "a-1", {"network": "host", "shm_size": "64m"}).containers[0].config
    assert "Hostname" not in c
    assert "TORCHX_RANK0_HOST=127.0.0.1" in c["Env"]
    assert c["HostConfig"] == {"NetworkMode": "host", "ShmSize": 64 * 1024**2}


def test_dryrun_through_the_registry_prints_the_requests() -> None:
    s = get_scheduler("local_docker")
    assert isinstance(s, DockerScheduler)
    info = s.submit_dryrun(_app(), {"image_repo": "registry.local:5000/me/ws"})
    text = str(info)
    assert text.startswith(f"app_id: {info.request.app_id}\nnetwork: torchx")
    assert f"POST /containers/create?name={info.request.app_id}-trainer-0 " in text
    assert '"ShmSize": 2147483648' in text


def test_workspace_images_are_pushed_to_image_repo() -> None:
    app = _app(image="torchx-workspace:abc123")
    req = build_request(app, "a-1", {"image_repo": "registry.local:5000/me/ws", "shm_size": "1g"})
    assert req.push == {"torchx-workspace:abc123": "registry.local:5000/me/ws:abc123"}
    assert req.containers[0].config["Image"] == "registry.local:5000/me/ws:abc123"


@pytest.mark.parametrize(
    ("change", "cfg", "field", "rule"),
    [
        ({"image": "Ubuntu:22.04"}, {}, "role 'trainer' image", "lowercase"),
        ({"image": "ubuntu:bad tag"}, {}, "image", "tag"),
        ({"resource": Resource(cpu=-2, gpu=0, memMB=10)}, {}, "resource.cpu", "negative"),
        ({"resource": Resource(cpu=1, gpu=0, memMB=4)}, {}, "resource.memMB", "6 MiB"),
        ({"resource": Resource(cpu=1, gpu=1.5, memMB=100)}, {}, "resource.gpu", "whole"),  # type: ignore[arg-type]
        ({"entrypoint": ""}, {}, "entrypoint", "program"),
        ({}, {"shm_size": "lots"}, "shm_size", "64m"),
        ({}, {"image_repo": "Me/Repo"}, "image_repo", "lowercase"),
        ({}, {"image_repo": "me/repo:tag"}, "image_repo", "without a tag"),
    ],
)
def test_bad_input_is_refused_before_submission(
    change: dict[str, Any], cfg: dict[str, Any], field: str, rule: str
) -> None:
    with pytest.raises(SpecsError) as e:
        DockerScheduler("t", base_url="unix:///nonexistent").submit_dryrun(_app(**change), cfg)
    assert field in str(e.value) and rule in str(e.value)


def test_ignore_patterns_read_from_torchxignore(tmp_path: Path) -> None:
    (tmp_path / ".torchxignore").write_text("# comment\n*.log\n!keep.log\n\n")
    assert read_ignore_patterns(str(tmp_path)) == [
        ".torchxignore",
        ".dockerignore",
        "*.log",
        "!keep.log",
    ]


def test_ignore_lines_drop_inline_comments_and_dot_lines_as_0_7_did(tmp_path: Path) -> None:
    from torchx.workspace.api import walk_workspace

    for name in ("secret.env", "notes.log", "keep.log", "train.py"):
        (tmp_path / name).write_text("x\n")
    (tmp_path / ".dockerignore").write_text("secret.env  # never ship\n.\n")
    (tmp_path / ".torchxignore").write_text("*.log # build logs\n!keep.log\t# but this one\n")
    assert read_ignore_patterns(str(tmp_path), IMAGE_IGNORE_FILES)[2:] == [
        "secret.env",
        "*.log",
        "!keep.log",
    ]
    assert list(walk_workspace(str(tmp_path), IMAGE_IGNORE_FILES)) == ["keep.log", "train.py"]
    # a copied workspace reads .torchxignore the same way
    assert list(walk_workspace(str(tmp_path))) == ["keep.log", "secret.env", "train.py"]


def test_an_image_build_leaves_out_what_dockerignore_lists_as_0_7_did(tmp_path: Path) -> None:
    import tarfile

    from torchx.workspace.dir_workspace import copy_workspace
    from torchx.workspace.docker_workspace import build_context
    from torchx.workspace.size import large_workspace_warning

    ws = tmp_path / "ws"
    (ws / "data").mkdir(parents=True)
    (ws / "data" / "big.bin").write_bytes(b"x" * 4096)
    (ws / "train.py").write_text("print('hi')\n")
    (ws / "secret.env").write_text("TOKEN=1\n")
    (ws / "notes.log").write_text("kept by .torchxignore\n")
    (ws / ".dockerignore").write_text("# 0.7 read this file for images\ndata\n*.env\n*.log\n")
    (ws / ".torchxignore").write_text("!notes.log\n")
    with tarfile.open(fileobj=build_context(str(ws), "FROM scratch\n")) as tar:
        names = set(tar.getnames())
    assert {"train.py", "notes.log"} <= names
    assert not names & {"secret.env", "data/big.bin", ".dockerignore", ".torchxignore"}
    # A copied directory (Slurm, Ray, local) follows .torchxignore only, as in 0.7.
    copied = tmp_path / "copy"
    copy_workspace(str(ws), str(copied))
    assert (copied / "secret.env").exists() and (copied / "data" / "big.bin").exists()
    # The size warning measures what each kind of workspace ships.
    assert large_workspace_warning(str(ws), 1024) is not None
    assert large_workspace_warning(str(ws), 1024, IMAGE_IGNORE_FILES) is None


class _RecordingEngine:
    """Stands in for a docker.DockerClient's build calls only: records each build's
    arguments and context files, and answers with an image id as the engine does."""

    def __init__(self) -> None:
        self.api, self.images = self, self
        self.builds: list[tuple[dict[str, Any], dict[str, bytes]]] = []

    def build(self, **kwargs: Any) -> Any:
        import tarfile

        with tarfile.open(fileobj=kwargs["fileobj"]) as tar:
            files = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}  # type: ignore[union-attr]
        self.builds.append((kwargs, files))
        return iter([{"aux": {"ID": "sha256:0123"}}])

    def get(self, image_id: str) -> Any:
        return self

    def tag(self, repo: str, tag: str) -> None:
        pass


def test_a_workspace_dockerfile_torchx_is_built_with_image_and_workspace_args(
    tmp_path: Path,
) -> None:
    """As in 0.7: the workspace's own Dockerfile.torchx is the one built (no ignore file
    leaves it out), and the build gets IMAGE and WORKSPACE."""
    pytest.importorskip("docker", reason="the build goes through the docker package")
    from torchx.workspace.docker_workspace import DEFAULT_DOCKERFILE, DockerWorkspaceMixin

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "train.py").write_text("print('hi')\n")
    own = b"ARG IMAGE\nFROM $IMAGE\nARG WORKSPACE\nCOPY . .\nRUN pip install -r req.txt\n"
    (ws / "Dockerfile.torchx").write_bytes(own)
    (ws / ".dockerignore").write_text("Dockerfile.torchx\n")
    engine = _RecordingEngine()
    builder = DockerWorkspaceMixin(docker_client=engine)
    assert builder.build_workspace_image("base:1", str(ws)).startswith("torchx-workspace:")
    ((kwargs, files),) = engine.builds
    assert kwargs["dockerfile"] == "Dockerfile.torchx"
    assert kwargs["buildargs"] == {"IMAGE": "base:1", "WORKSPACE": str(ws)}
    assert files == {"Dockerfile.torchx": own, "train.py": b"print('hi')\n"}
    # without one, the default is built, with the same arguments
    (ws / "Dockerfile.torchx").unlink()
    builder.build_workspace_image("base:1", str(ws))
    kwargs, files = engine.builds[1]
    assert kwargs["buildargs"] == {"IMAGE": "base:1", "WORKSPACE": str(ws)}
    assert files == {"Dockerfile.torchx": DEFAULT_DOCKERFILE, "train.py": b"print('hi')\n"}


def test_list_times_of_a_running_container_west_of_utc(monkeypatch: pytest.MonkeyPatch) -> None:
    """A running container's FinishedAt is the engine's zero time (year 1): `torchx list`
    shows no end, rather than failing where local time is behind UTC."""
    from torchx.schedulers._docker_status import run_times

    running = {
        "Created": "2026-11-26T16:00:00.123456789Z",
        "State": {
            "Status": "running",
            "StartedAt": "2026-11-26T16:00:01.5Z",
            "FinishedAt": "0001-01-01T00:00:00Z",
        },
    }
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        times = run_times([running], running, AppState.RUNNING)
    finally:
        monkeypatch.undo()
        time.tzset()
    # 16:00 UTC is 11:00 in New York in November (EST, UTC-5)
    assert times == {
        "submitted_at": datetime(2026, 11, 26, 11, 0, 0, 123456),
        "started_at": datetime(2026, 11, 26, 11, 0, 1, 500000),
        "ended_at": None,
    }


class _StartRefusingApi:
    """Stands in for the engine's low-level API during a submission: creates containers,
    refuses to start them as an engine without the NVIDIA runtime refuses a GPU role, and
    records what is removed."""

    def __init__(self) -> None:
        self.created: list[str] = []
        self.removed: list[str] = []

    def create_container_from_config(self, config: dict[str, Any], name: str) -> dict[str, str]:
        self.created.append(name)
        return {"Id": f"id-{name}"}

    def start(self, cid: str) -> None:
        import docker
        import requests

        answer = requests.Response()
        answer.status_code, answer.reason = 500, "Internal Server Error"
        raise docker.errors.APIError(
            f"500 Server Error for http+docker://localhost/v1.43/containers/{cid}/start",
            response=answer,
            explanation='could not select device driver "" with capabilities: [[gpu]]',
        )

    def remove_container(self, cid: str, **kwargs: Any) -> None:
        self.removed.append(cid)


def test_a_container_the_engine_refuses_to_start_is_one_line_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("docker", reason="the refusal is the docker package's APIError")
    api = _StartRefusingApi()
    sched = DockerScheduler("t")
    monkeypatch.setattr(sched, "_api", lambda: api)
    monkeypatch.setattr(sched, "_ensure_images", lambda req: None)
    info = sched.submit_dryrun(_app(), {"network": "host", "shm_size": "64m"})
    with pytest.raises(SchedulerError) as e:
        sched.schedule(info)
    first = f"{info.request.app_id}-trainer-0"
    message = str(e.value)
    assert message.startswith(f"local_docker: the Docker engine refused container {first}: ")
    assert "could not select device driver" in message
    assert "http" not in message and "\n" not in message
    # both created containers are removed: a refused submission leaves nothing behind
    assert api.removed == [f"id-{n}" for n in api.created] and len(api.created) == 2


# -- against a real engine -------------------------------------------------------------


@pytest.fixture
def docker_sched(docker_engine: Any) -> Any:
    s = DockerScheduler("test", base_url=docker_engine.base_url)
    yield s
    s.close()


def _role(image: str, *args: str, entrypoint: str = "sh", **kw: Any) -> Role:
    return Role("r", image=image, entrypoint=entrypoint, args=list(args), **kw)


HOST = {"network": "host", "shm_size": "64m"}


def test_echo_runs_and_logs(docker_sched: DockerScheduler, docker_engine: Any) -> None:
    app = AppDef(
        "echo", roles=[_role(docker_engine.image, "hello", "$TORCHX_REPLICA_ID", entrypoint="echo")]
    )
    app_id = docker_sched.submit(app, {"network": "none", "shm_size": "64m"})
    desc = docker_sched.wait(app_id, timeout=60)
    assert desc is not None and desc.state == AppState.SUCCEEDED
    assert desc.roles_statuses[0].replicas[0].exit_code == 0
    # echo prints its args unexpanded: Docker runs no shell for a list command.
    assert list(docker_sched.log_iter(app_id, "r", 0)) == ["hello $TORCHX_REPLICA_ID\n"]
    (listed,) = [a for a in docker_sched.list() if a.app_id == app_id]
    assert listed.state == AppState.SUCCEEDED
    # the engine's UTC creation time, as local time like every scheduler's list
    assert listed.submitted_at is not None and listed.submitted_at.tzinfo is None
    assert abs(listed.submitted_at - datetime.now()) < timedelta(minutes=10)
    # an ended app's run: `torchx list` shows STARTED and ENDED from the containers
    assert listed.started_at is not None and listed.ended_at is not None
    assert listed.submitted_at <= listed.started_at <= listed.ended_at


def test_failing_replica_fails_the_app_and_streams_split(
    docker_sched: DockerScheduler, docker_engine: Any
) -> None:
    script = 'echo out; echo err >&2; [ "$TORCHX_REPLICA_ID" = 0 ] || exit 3'
    app = AppDef("fail", roles=[_role(docker_engine.image, "-c", script, num_replicas=2)])
    app_id = docker_sched.submit(app, HOST)
    desc = docker_sched.wait(app_id, timeout=60)
    assert desc is not None and desc.state == AppState.FAILED
    codes = {r.id: r.exit_code for r in desc.roles_statuses[0].replicas}
    assert codes == {0: 0, 1: 3}
    assert "r/1 exited with 3" in desc.msg
    from torchx.schedulers import Stream

    assert list(docker_sched.log_iter(app_id, "r", 1, streams=Stream.STDERR)) == ["err\n"]
    assert list(docker_sched.log_iter(app_id, "r", 1, streams=Stream.STDOUT)) == ["out\n"]
    assert list(docker_sched.log_iter(app_id, "r", 1, regex="^e")) == ["err\n"]


def test_two_replicas_talk_over_host_network(
    docker_sched: DockerScheduler, docker_engine: Any
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # Replica 0 listens; replica 1 retries until it connects, then sends a line. Busybox's
    # listener quits as soon as its stdin ends, sometimes before reading what arrived, so
    # it gets a stdin that stays open and replica 0 prints the line once the file has it.
    script = (
        f'if [ "$TORCHX_REPLICA_ID" = 0 ]; then sleep 60 | nc -l -p {port} > /tmp/got & '
        "for i in $(seq 600); do [ -s /tmp/got ] && cat /tmp/got && exit 0; sleep 0.1; done; "
        "exit 1; else "
        # up to a minute: on a busy machine replica 0's container can start seconds late
        f'for i in $(seq 600); do echo ping-from-1 | nc "$TORCHX_RANK0_HOST" {port} && exit 0; '
        "sleep 0.1; done; exit 1; fi"
    )
    app = AppDef("net", roles=[_role(docker_engine.image, "-c", script, num_replicas=2)])
    app_id = docker_sched.submit(app, HOST)
    desc = docker_sched.wait(app_id, timeout=120)
    assert desc is not None and desc.state == AppState.SUCCEEDED, desc
    assert list(docker_sched.log_iter(app_id, "r", 0)) == ["ping-from-1\n"]


def test_cancel_stops_a_running_app(docker_sched: DockerScheduler, docker_engine: Any) -> None:
    app = AppDef("sleepy", roles=[_role(docker_engine.image, "-c", "echo up; sleep 600")])
    app_id = docker_sched.submit(app, HOST)
    lines = iter(docker_sched.log_iter(app_id, "r", 0, should_tail=True))
    assert next(lines) == "up\n"
    # wait blocks on the engine, but returns the live state once its timeout passes.
    running = docker_sched.wait(app_id, timeout=0.3)
    assert running is not None and running.state == AppState.RUNNING
    docker_sched.cancel(app_id)
    desc = docker_sched.describe(app_id)
    assert desc is not None and desc.state == AppState.CANCELLED
    assert list(lines) == []  # the followed log ends with the container
    assert [r.id for r in desc.roles_statuses[0].replicas] == [0]
    # the replica the cancel stopped reads as cancelled, as on local_cwd and ray, not as a
    # failure with the kill's exit code
    assert desc.roles_statuses[0].replicas[0].state == AppState.CANCELLED
    assert desc.msg == "cancelled"
    docker_sched.cancel(app_id)  # a no-op once ended


def test_workspace_build_changes_what_runs(
    docker_sched: DockerScheduler, docker_engine: Any, tmp_path: Path
) -> None:
    (tmp_path / "main.sh").write_text("echo from-workspace\ncat secret.txt 2>/dev/null || true\n")
    (tmp_path / "secret.txt").write_text("must-not-ship\n")
    (tmp_path / ".torchxignore").write_text("secret.txt\n")
    app = AppDef("ws", roles=[_role(docker_engine.image, "main.sh")])
    new_app, cfg = docker_sched.with_workspace(app, HOST, str(tmp_path))
    assert new_app.roles[0].image.startswith("torchx-workspace:")
    assert app.roles[0].image == docker_engine.image  # the original is left alone
    app_id = docker_sched.submit(new_app, cfg)
    desc = docker_sched.wait(app_id, timeout=60)
    assert desc is not None and desc.state == AppState.SUCCEEDED
    assert list(docker_sched.log_iter(app_id, "r", 0)) == ["from-workspace\n"]


def test_a_workspace_on_an_image_the_engine_cannot_get_names_the_image_and_the_fix(
    docker_sched: DockerScheduler, tmp_path: Path
) -> None:
    # `torchx run -s local_docker utils.echo` offline: the builtin's default image cannot be
    # pulled for the workspace build. A registry on a closed loopback port stands in for it.
    missing = f"127.0.0.1:{free_loopback_port()}/torchx-missing:1"
    (tmp_path / "main.sh").write_text("echo hi\n")
    with pytest.raises(SchedulerError) as e:
        docker_sched.build_workspace_image(missing, str(tmp_path))
    message = str(e.value)
    assert f"the role's image {missing} is not on the Docker engine" in message
    assert "builtins take --image" in message and "\n" not in message


def test_refused_submission_leaves_no_container(
    docker_sched: DockerScheduler, docker_engine: Any
) -> None:
    good = _role(docker_engine.image, "-c", "true")
    missing = Role("b", image="no-such-image:1", entrypoint="true")
    info = docker_sched.submit_dryrun(AppDef("half", roles=[good, missing]), HOST)
    with pytest.raises(SpecsError) as e:
        docker_sched.schedule(info)
    assert "role 'b' image" in str(e.value) and "no-such-image:1" in str(e.value)
    assert "pulling failed" in str(e.value)
    assert docker_sched.describe(info.request.app_id) is None


# The engine refuses a bind mount whose source it lacks when the container is created, a
# device the host lacks when it is started.
@pytest.mark.parametrize("kind", ["bind", "device"])
def test_a_container_the_engine_refuses_is_one_line_naming_it(
    docker_sched: DockerScheduler, docker_engine: Any, tmp_path: Path, kind: str
) -> None:
    from torchx.specs import DeviceMount

    gone = tmp_path / "no-such-dir" if kind == "bind" else Path("/dev/torchx-no-such-device")
    mount = BindMount(str(gone), "/data") if kind == "bind" else DeviceMount(str(gone), "/dev/x")
    role = _role(docker_engine.image, "-c", "true", mounts=[mount])
    info = docker_sched.submit_dryrun(AppDef("refused", roles=[role]), HOST)
    with pytest.raises(SchedulerError) as e:
        docker_sched.schedule(info)
    message = str(e.value)
    # the engine's reason and the container it refused, not the SDK's HTTP error and URL
    assert message.startswith(
        f"local_docker: the Docker engine refused container {info.request.app_id}-r-0: "
    )
    assert str(gone) in message and "http" not in message and "\n" not in message
    assert "fix the role's mounts, devices or resources" in message
    assert docker_sched.describe(info.request.app_id) is None  # nothing left behind


def test_an_entrypoint_the_image_lacks_is_named_with_the_fix(
    docker_sched: DockerScheduler, docker_engine: Any
) -> None:
    role = _role(docker_engine.image, entrypoint="torchx-no-such-program")
    info = docker_sched.submit_dryrun(AppDef("noexec", roles=[role]), HOST)
    with pytest.raises(SchedulerError) as e:
        docker_sched.schedule(info)
    message = str(e.value)
    assert "the image has no 'torchx-no-such-program'" in message, message
    assert "mounts, devices" not in message and "\n" not in message
    assert docker_sched.describe(info.request.app_id) is None


def test_since_until_bound_the_log(docker_sched: DockerScheduler, docker_engine: Any) -> None:
    from datetime import datetime, timedelta, timezone

    app = AppDef("t", roles=[_role(docker_engine.image, "-c", "echo a")])
    app_id = docker_sched.submit(app, HOST)
    docker_sched.wait(app_id, timeout=60)
    future = datetime.now(timezone.utc) + timedelta(hours=1)
    past = datetime.now(timezone.utc) - timedelta(hours=1)
    assert list(docker_sched.log_iter(app_id, "r", 0, since=future)) == []
    assert list(docker_sched.log_iter(app_id, "r", 0, until=past)) == []
    assert list(docker_sched.log_iter(app_id, "r", 0, since=past)) == ["a\n"]


def test_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import sys

    from torchx.schedulers import MissingDependencyError

    monkeypatch.setitem(sys.modules, "docker", None)
    with pytest.raises(MissingDependencyError, match=r"torchx-schedulers\[docker\]"):
        DockerScheduler("t", base_url="unix:///nonexistent").build_workspace_image(
            "busybox", str(tmp_path)
        )


def test_unreachable_engine_names_the_address_and_the_fix() -> None:

    s = DockerScheduler("t", base_url="unix:///nonexistent/docker.sock")
    with pytest.raises(SchedulerError) as e:  # the backend failed; the input was fine
        s.describe("x-1")
    text = str(e.value)
    assert "unix:///nonexistent/docker.sock (from base_url)" in text and "start dockerd" in text


# -- a Python app whose replicas rendezvous the way dist.ddp apps do ----------------------

# Rank 0 listens on MASTER_ADDR:PORT and gathers every peer's rank; each peer retries until
# rank 0 is up, sends its rank and prints rank 0's answer. Only the stdlib of
# python3.11-minimal is used (no json there).
RENDEZVOUS = """
import os, socket, sys, time
rank, world = int(os.environ["TORCHX_REPLICA_ID"]), int(sys.argv[1])
addr, port = os.environ["MASTER_ADDR"], int(sys.argv[2])
if rank == 0:
    srv = socket.create_server(("0.0.0.0", port))
    ranks = [0]
    for _ in range(world - 1):
        conn, _peer = srv.accept()
        with conn:
            ranks.append(int(conn.recv(16)))
            conn.sendall(b"welcome")
    print("gathered", sorted(ranks), flush=True)
else:
    deadline = time.monotonic() + 60
    while True:
        try:
            conn = socket.create_connection((addr, port), timeout=5)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    with conn:
        conn.sendall(str(rank).encode())
        print(rank, conn.recv(16).decode(), flush=True)
"""


def _rendezvous_app(image: str, world: int, port: int) -> AppDef:
    role = Role(
        "trainer",
        image=image,
        entrypoint="python3",
        args=["-c", RENDEZVOUS, str(world), str(port)],
        num_replicas=world,
    )
    return AppDef("rdzv", roles=[role])


def _check_rendezvous(sched: DockerScheduler, app_id: str, world: int) -> None:
    desc = sched.wait(app_id, timeout=90)
    assert desc is not None and desc.state == AppState.SUCCEEDED, desc
    assert list(sched.log_iter(app_id, "trainer", 0)) == [f"gathered {list(range(world))}\n"]
    for k in range(1, world):
        assert list(sched.log_iter(app_id, "trainer", k)) == [f"{k} welcome\n"]


def test_python_replicas_rendezvous_over_host_network(
    docker_sched: DockerScheduler, docker_python_image: str
) -> None:
    app = _rendezvous_app(docker_python_image, 3, free_loopback_port())
    app_id = docker_sched.submit(app, HOST)
    _check_rendezvous(docker_sched, app_id, 3)


def test_python_replicas_rendezvous_by_hostname_on_the_torchx_bridge(
    docker_sched: DockerScheduler, docker_engine: Any, docker_python_image: str
) -> None:
    import docker

    api = docker.APIClient(base_url=docker_engine.base_url)
    try:
        made = api.create_network("torchx-probe")
        api.remove_network(made["Id"])
    except docker.errors.APIError as e:
        pytest.skip(f"this engine cannot create bridge networks: {e}")
    finally:
        api.close()
    app = _rendezvous_app(docker_python_image, 2, 29500)
    # The default network: replicas resolve each other by hostname through the engine's DNS.
    info = docker_sched.submit_dryrun(app, {})
    assert info.request.network == "torchx"
    env = info.request.containers[1].config["Env"]
    assert f"MASTER_ADDR={info.request.app_id}-trainer-0" in env
    _check_rendezvous(docker_sched, docker_sched.schedule(info), 2)


# -- preemption: an app told to stop and restart resumes ------------------------------------

PREEMPTION_SRC = Path(__file__).resolve().parents[2] / "preemption" / "src"
# Counts to 60, a step every 50 ms, its progress in /state; on the warning it saves the step
# it reached (on_preempt) and exits asking to run again; the next attempt starts from there.
COUNTER = """
import os, sys, time
import torchx.runtime.preemption as preemption
attempt = preemption.attempt()
saved = "/state/saved"
start = int(open(saved).read()) if attempt > 0 else 0
print("attempt", attempt, "starts at", start, flush=True)
step = start
preemption.on_preempt(lambda: open(saved, "w").write(str(step)))
while step < 60:
    if preemption.preempted():
        print("warned at", step, flush=True)
        preemption.requeue()
    step += 1
    open("/state/progress", "w").write(str(step))
    time.sleep(0.05)
print("done at", step, flush=True)
"""


def test_an_app_told_to_stop_and_restart_resumes_under_the_same_handle(
    docker_sched: DockerScheduler, docker_python_image: str, tmp_path: Path
) -> None:
    role = Role(
        "counter",
        image=docker_python_image,
        entrypoint="python3",
        args=["-c", COUNTER],
        env={"PYTHONPATH": "/opt/preemption"},
        mounts=[
            BindMount(str(PREEMPTION_SRC), "/opt/preemption", read_only=True),
            BindMount(str(tmp_path), "/state"),
        ],
    )
    app_id = docker_sched.submit(AppDef("counter", [role]), {**HOST, "stop_grace_seconds": 30})
    progress = tmp_path / "progress"
    deadline = time.monotonic() + 90
    while not (progress.exists() and int(progress.read_text() or 0) >= 5):
        assert time.monotonic() < deadline, docker_sched.describe(app_id)
        time.sleep(0.1)
    before = docker_sched.describe(app_id)
    assert before is not None and before.num_preemptions == 0

    requeued = docker_sched.requeue(app_id)
    assert requeued is not None and requeued.num_preemptions == 1, requeued
    desc = docker_sched.wait(app_id, timeout=90)
    assert desc is not None and desc.state == AppState.SUCCEEDED, desc
    assert desc.num_preemptions == 1 and desc.num_restarts == 0, desc
    lines = list(docker_sched.log_iter(app_id, "counter", 0))
    stopped = int((tmp_path / "saved").read_text())
    # one container, both attempts in its log; the second resumed where the first stopped
    assert lines == [
        "attempt 0 starts at 0\n",
        f"warned at {stopped}\n",
        f"attempt 1 starts at {stopped}\n",
        "done at 60\n",
    ], lines
    assert 0 < stopped < 60
    with pytest.raises(SchedulerError, match="already ended"):
        docker_sched.requeue(app_id)


# -- pytorch/torchx 0.7's names and run options ---------------------------------------------


def test_copy_env_copies_matching_variables_and_the_role_env_wins(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TXTEST_A", "1")
    monkeypatch.setenv("TXTEST_B", "2")
    monkeypatch.setenv("FOO", "from-the-shell")
    monkeypatch.setenv("OTHER", "x")
    cfg = {"shm_size": "64m", "copy_env": ["TXTEST_*", "FOO"]}
    env = build_request(_app(), "a-1", cfg).containers[0].config["Env"]
    assert "TXTEST_A=1" in env and "TXTEST_B=2" in env
    assert "FOO=bar" in env and "FOO=from-the-shell" not in env  # the role's env wins
    assert not any(e.startswith("OTHER=") for e in env)
    # torchx's own variables win over the role's env: a replica can trust who it is told it is.
    role_env = {"FOO": "bar", "TORCHX_REPLICA_ID": "7", "MASTER_PORT": "1234"}
    env = build_request(_app(env=role_env), "a-1", cfg).containers[1].config["Env"]
    assert "TORCHX_REPLICA_ID=1" in env and "TORCHX_REPLICA_ID=7" not in env
    assert "MASTER_PORT=1234" in env and "MASTER_PORT=29500" not in env
    with pytest.raises(SpecsError) as e:
        DockerScheduler("t").submit_dryrun(_app(), {"copy_env": [""]})
    assert "copy_env" in str(e.value) and "glob" in str(e.value)


def test_the_names_pytorch_torchx_0_7_exported() -> None:
    from torchx.schedulers import docker_scheduler as ds

    assert ds.NETWORK == "torchx"
    assert ds.LABEL_ROLE_NAME == "torchx.pytorch.org/role-name"
    assert ds.LABEL_REPLICA_ID == "torchx.pytorch.org/replica-id"
    assert ds.DockerJob is ds.DockerRequest
    assert ds.CONTAINER_STATE["running"] == AppState.RUNNING


def test_has_docker_asks_the_engine(
    docker_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from torchx.schedulers.docker_scheduler import has_docker

    monkeypatch.setenv("DOCKER_HOST", docker_engine.base_url)
    assert has_docker()
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/none.sock")
    assert not has_docker()
