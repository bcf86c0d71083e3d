"""kubernetes against a real API server (tests/fixtures/kubernetes.py), with the tests as kubelet.

Every manifest the scheduler emits goes through the server's validation and admission in a
dry run and must come back with every field it sent; a two-role batch app is submitted and
driven through its pod lifecycle; failures reach the CLI as one line.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from torchx_test_fixtures_waiting import wait_until

from torchx.schedulers.kubernetes_scheduler import (
    LABEL_APP_ID,
    LABEL_REPLICA,
    LABEL_ROLE,
    KubernetesApiError,
    KubernetesScheduler,
)
from torchx.specs import (
    AppDef,
    AppState,
    Resource,
    RetryPolicy,
    Role,
)

from .container_apps import trainer_role
from .torchx_command import torchx as _torchx

pytest.importorskip("kubernetes")

PRIORITY_CLASS = "torchx-test-high"


def _kept(sent: Any, stored: Any, path: str = "") -> list[str]:
    """Where ``stored`` lost or changed something of ``sent`` (extra server fields are fine)."""
    if isinstance(sent, dict):
        if not isinstance(stored, dict):
            return [f"{path}: {stored!r}"]
        return [p for k, v in sent.items() for p in _kept(v, stored.get(k), f"{path}.{k}")]
    if isinstance(sent, list):
        if not isinstance(stored, list) or len(stored) != len(sent):
            return [f"{path}: {stored!r}"]
        return [
            p
            for i, (a, b) in enumerate(zip(sent, stored, strict=True))
            for p in _kept(a, b, f"{path}[{i}]")
        ]
    if sent == stored or (_QUANTITY.search(path) and _same_quantity(sent, stored)):
        return []
    return [f"{path}: sent {sent!r}, stored {stored!r}"]


# Quantities come back in canonical form (4096Mi as 4Gi): compare their values.
_QUANTITY = re.compile(r"\.(limits|requests)\.[^.]+$|\.sizeLimit$")


def _same_quantity(a: Any, b: Any) -> bool:
    from kubernetes.utils import parse_quantity

    return b is not None and parse_quantity(a) == parse_quantity(b)


def _every_feature_app() -> AppDef:
    # Per-replica restarts: the Volcano Job carries the RestartPod action to the server.
    trainer = trainer_role(retry_policy=RetryPolicy.REPLICA)
    ps = Role(
        "param_server",
        image="busybox:1.36",
        entrypoint="sh",
        args=["-c", "echo ps"],
        resource=Resource(cpu=0.5, gpu=0, memMB=256),
    )
    return AppDef("Every_Feature", roles=[trainer, ps])


def _cfg(namespace: str, api: str, **extra: Any) -> dict[str, Any]:
    return {
        "namespace": namespace,
        "api": api,
        "queue": "research",
        "priority_class": PRIORITY_CLASS,
        "service_account": "trainer",
        "image_pull_secrets": ["regcred"],
        "node_selector": {"node.kubernetes.io/instance-type": "p4d.24xlarge"},
        "tolerations": ["nvidia.com/gpu:NoSchedule", "dedicated=ml:NoExecute", "spot"],
        "labels": {"team": "vision"},
        "shm_size": "8Gi",
        **extra,
    }


@pytest.fixture(scope="module")
def priority_class(kube_cluster: Any) -> str:
    from kubernetes import client

    api = client.SchedulingV1Api(kube_cluster.api)
    try:
        api.create_priority_class({"metadata": {"name": PRIORITY_CLASS}, "value": 1000})
    except client.ApiException as e:
        if e.status != 409:
            raise
    return PRIORITY_CLASS


@pytest.fixture
def sched(kube_env: Any) -> KubernetesScheduler:
    return KubernetesScheduler("test")


# -- the control plane itself ------------------------------------------------------------


def _sockets(pid: int) -> set[str]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = fd.readlink().name
        except OSError:
            continue  # closed meanwhile
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    return inodes


def _tcp_endpoints(inodes: set[str]) -> list[tuple[str, str]]:
    """(local, remote) hex addresses of the TCP sockets with these inodes."""
    out = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[9] in inodes:
                out.append((fields[1].rsplit(":", 1)[0], fields[2].rsplit(":", 1)[0]))
    return out


_LOOPBACK = {"0100007F", "00000000000000000000000001000000"}  # 127.0.0.1, ::1
_UNCONNECTED = {"00000000", "00000000000000000000000000000000"}


def test_control_plane_stays_on_loopback(kube_cluster: Any) -> None:
    assert set(kube_cluster.pids) == {
        "etcd",
        "kube-apiserver",
        "kube-controller-manager",
        "kube-scheduler",
    }
    node = kube_cluster.core().read_node(kube_cluster.node)
    assert {c.type: c.status for c in node.status.conditions} == {"Ready": "True"}
    assert not node.spec.taints
    for name, pid in kube_cluster.pids.items():
        # a controller may be between connections to the API server just after start-up
        endpoints = wait_until(
            f"{name}'s connections", lambda p=pid: _tcp_endpoints(_sockets(p)), 120
        )
        for local, remote in endpoints:
            assert local in _LOOPBACK, (name, local)
            assert remote in _LOOPBACK | _UNCONNECTED, (name, remote)


# -- every manifest passes a server-side dry run -----------------------------------------


@pytest.mark.parametrize("api", ["volcano", "batch"])
@pytest.mark.parametrize(
    "case",
    ["every_feature", "single_role_defaults", "gpu_only"],
)
def test_every_manifest_passes_a_server_dry_run_unchanged(
    sched: KubernetesScheduler,
    kube_cluster: Any,
    kube_namespace: str,
    priority_class: str,
    api: str,
    case: str,
) -> None:
    if case == "every_feature":
        app, cfg = _every_feature_app(), _cfg(kube_namespace, api)
    elif case == "single_role_defaults":
        app = AppDef("echo", roles=[Role("echo", image="busybox", entrypoint="echo", args=["hi"])])
        cfg = {"namespace": kube_namespace, "api": api}
    else:
        role = Role(
            "gpu",
            image="busybox",
            entrypoint="nvidia-smi",
            resource=Resource(cpu=8, gpu=8, memMB=64000),
        )
        app, cfg = AppDef("gpu", roles=[role]), {"namespace": kube_namespace, "api": api}
    req = sched.submit_dryrun(app, cfg).request
    kinds = [m["kind"] for m in req.manifests]
    assert kinds == (["Job"] if api == "volcano" else ["Service"] + ["Job"] * (len(kinds) - 1))
    for manifest in req.manifests:
        stored = sched._create(kube_namespace, manifest, dry_run=True)
        # Nothing was dropped: no field unknown to this server or pruned by the CRD schema.
        assert _kept(manifest, stored) == [], manifest["metadata"]["name"]
    # A dry run stores nothing.
    assert kube_cluster.batch().list_namespaced_job(kube_namespace).items == []
    assert (
        kube_cluster.custom().list_namespaced_custom_object(
            "batch.volcano.sh", "v1alpha1", kube_namespace, "jobs"
        )["items"]
        == []
    )


# -- the Volcano Job CRD -----------------------------------------------------------------


def test_volcano_job_is_accepted_listed_described_and_deleted(
    sched: KubernetesScheduler, kube_cluster: Any, kube_namespace: str, priority_class: str
) -> None:
    info = sched.submit_dryrun(_every_feature_app(), _cfg(kube_namespace, "volcano"))
    app_id = sched.schedule(info)
    name = info.request.app_id
    stored = kube_cluster.custom().get_namespaced_custom_object(
        "batch.volcano.sh", "v1alpha1", kube_namespace, "jobs", name
    )
    assert _kept(info.request.manifests[0], stored) == []
    assert app_id in [a.app_id for a in sched.list()]
    d = sched.describe(app_id)
    # No Volcano controller: the job has no status yet, but its roles and replicas are known.
    assert d is not None and d.state == AppState.UNKNOWN
    assert [(r.role, len(r.replicas)) for r in d.roles_statuses] == [
        ("trainer", 2),
        ("param-server", 1),
    ]
    sched.cancel(app_id)
    assert sched.describe(app_id) is None
    assert app_id not in [a.app_id for a in sched.list()]


def test_volcano_jobs_are_listed_page_by_page(
    sched: KubernetesScheduler, kube_namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As Jobs and pods are: no one answer holds every Volcano Job of the cluster."""
    import kubernetes

    from torchx.schedulers import _kubernetes_client

    monkeypatch.setattr(_kubernetes_client, "PAGE_SIZE", 2)
    api = kubernetes.client.CustomObjectsApi
    asked: list[tuple[int, str | None]] = []
    unpaged = api.list_cluster_custom_object

    def list_cluster_custom_object(self: Any, *args: Any, **kw: Any) -> Any:
        asked.append((kw.get("limit"), kw.get("_continue")))
        return unpaged(self, *args, **kw)

    monkeypatch.setattr(api, "list_cluster_custom_object", list_cluster_custom_object)
    role = Role("t", image="busybox", entrypoint="echo")
    cfg = {"namespace": kube_namespace, "api": "volcano"}
    ids = {sched.submit(AppDef(f"v{i}", roles=[role]), cfg) for i in range(5)}
    listed = [a for a in sched.list() if a.app_id.startswith(f"{kube_namespace}:")]
    assert sorted(a.app_id for a in listed) == sorted(ids)
    assert {a.name for a in listed} == {f"v{i}" for i in range(5)}
    # 5 jobs of this test (and any other test's) in pages of 2: at least 3 asks, each after
    # the first with the continue token of the one before
    assert len(asked) >= 3 and {limit for limit, _ in asked} == {2}
    assert asked[0][1] is None and all(token for _, token in asked[1:])
    assert len({token for _, token in asked}) == len(asked)


def test_volcano_job_schema_refuses_bad_fields(
    sched: KubernetesScheduler, kube_namespace: str
) -> None:
    app = AppDef("bad", roles=[Role("r", image="busybox", entrypoint="true")])
    (job,) = sched.submit_dryrun(app, {"namespace": kube_namespace}).request.manifests
    job["spec"]["tasks"][0]["template"]["spec"]["restartPolicy"] = "Sometimes"
    job["spec"]["tasks"][0]["replicas"] = -1
    with pytest.raises(KubernetesApiError) as e:
        sched._create(kube_namespace, job, dry_run=True)
    message = str(e.value)
    assert e.value.status == 422 and "\n" not in message
    assert "restartPolicy" in message and "Sometimes" in message
    assert "replicas" in message


# -- a two-role batch app, with the test as kubelet ---------------------------------------


def _replicas(sched: KubernetesScheduler, app_id: str) -> dict[tuple[str, int], Any]:
    d = sched.describe(app_id)
    assert d is not None
    return {(r.role, r.id): (r.state, r.exit_code) for rs in d.roles_statuses for r in rs.replicas}


def test_batch_app_lifecycle_status_list_and_cancel(
    sched: KubernetesScheduler, kube_cluster: Any, kube_namespace: str
) -> None:
    trainer = Role(
        "trainer",
        image="busybox",
        entrypoint="sh",
        args=["-c", "train"],
        num_replicas=2,
        max_retries=1,
        resource=Resource(cpu=1, gpu=1, memMB=512),
    )
    ps = Role("ps", image="busybox", entrypoint="sh", args=["-c", "serve"])
    app = AppDef("two-roles", roles=[trainer, ps])
    app_id = sched.submit(app, {"namespace": kube_namespace, "api": "batch"})
    handle = f"kubernetes://test/{app_id}"
    name = app_id.split(":")[1]
    selector = f"{LABEL_APP_ID}={name}"

    # The job controller made one pod per replica and the scheduler bound them to the node.
    pods = kube_cluster.wait_for_pods(kube_namespace, selector, 3)
    by_replica = {
        (p.metadata.labels[LABEL_ROLE], int(p.metadata.labels[LABEL_REPLICA])): p for p in pods
    }
    assert sorted(by_replica) == [("ps", 0), ("trainer", 0), ("trainer", 1)]
    assert by_replica[("trainer", 1)].spec.hostname == f"{name}-trainer-1"
    assert by_replica[("trainer", 1)].spec.subdomain == name
    # Each Job counts its created-but-not-started pod "active": list still says PENDING,
    # as describe does.
    wait_until(
        "every Job to count its pod active",
        lambda: all(
            j.status.active
            for j in kube_cluster.batch()
            .list_namespaced_job(kube_namespace, label_selector=selector)
            .items
        ),
    )
    describe = sched.describe(app_id)
    assert describe is not None and describe.state == AppState.PENDING
    assert {a.app_id: a.state for a in sched.list()}[app_id] == AppState.PENDING

    for p in pods:
        kube_cluster.run_pod(kube_namespace, p.metadata.name)
    assert set(_replicas(sched, app_id).values()) == {(AppState.RUNNING, None)}
    assert {a.app_id: a.state for a in sched.list()}[app_id] == AppState.RUNNING

    kube_cluster.end_pod(kube_namespace, by_replica[("ps", 0)].metadata.name, 0)
    kube_cluster.end_pod(kube_namespace, by_replica[("trainer", 1)].metadata.name, 0)
    kube_cluster.end_pod(kube_namespace, by_replica[("trainer", 0)].metadata.name, 3)
    # trainer-0 has one retry left: its Job makes a new pod (after the controller's backoff).
    trainer0 = f"{selector},{LABEL_ROLE}=trainer,{LABEL_REPLICA}=0"

    def retried() -> list[Any]:
        return [
            p
            for p in kube_cluster.pods(kube_namespace, trainer0)
            if p.status.phase == "Pending" and p.spec.node_name
        ]

    (retry,) = wait_until("the retry of trainer-0", retried, 90)
    # Pod times have whole seconds: a kubelet starts the retry at least a second after the
    # first attempt, which is what lets describe tell the two attempts apart.
    time.sleep(1.1)
    kube_cluster.run_pod(kube_namespace, retry.metadata.name)
    assert _replicas(sched, app_id) == {
        ("trainer", 0): (AppState.RUNNING, None),
        ("trainer", 1): (AppState.SUCCEEDED, 0),
        ("ps", 0): (AppState.SUCCEEDED, 0),
    }

    kube_cluster.end_pod(kube_namespace, retry.metadata.name, 137, "OOMKilled")

    def failed() -> dict[str, Any] | None:
        d = sched.describe(app_id)
        return {"ok": d} if d is not None and d.state == AppState.FAILED else None

    wait_until("the app to fail", failed, 60)
    # A new process reads it all back from the cluster.
    proc = _torchx("status", handle)
    assert proc.returncode == 0, proc.stderr
    lines = [ln.strip() for ln in proc.stdout.splitlines()]
    assert "State: FAILED" in lines and "Num Restarts: 1" in lines
    # pytorch/torchx's status layout: a line per replica, its error message below it
    assert f"*trainer[0]:FAILED (exitcode: 137) host={name}-trainer-0" in lines
    assert any("OOMKilled" in ln for ln in lines), lines
    assert f"trainer[1]:SUCCEEDED (exitcode: 0) host={name}-trainer-1" in lines
    assert f"*ps[0]:SUCCEEDED (exitcode: 0) host={name}-ps-0" in lines

    # The log needs a kubelet: without one the error is one clean line.
    proc = _torchx("log", f"{handle}/trainer/1")
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "log" in proc.stderr and kube_namespace in proc.stderr

    sched.cancel(app_id)

    def gone() -> bool:
        core, batch = kube_cluster.core(), kube_cluster.batch()
        return not (
            batch.list_namespaced_job(kube_namespace, label_selector=selector).items
            or core.list_namespaced_service(kube_namespace, label_selector=selector).items
            or core.list_namespaced_pod(kube_namespace, label_selector=selector).items
        )

    wait_until("every object of the app to be deleted", gone, 60)
    assert sched.describe(app_id) is None


def _one_pod_batch_app(
    sched: KubernetesScheduler, kube_cluster: Any, namespace: str, command: str
) -> tuple[str, str, Any]:
    """A batch app of one replica of role "t" running ``command``, submitted: its app id,
    pod selector and its bound pod."""
    entrypoint, *args = command.split()
    role = Role("t", image="busybox", entrypoint=entrypoint, args=args)
    app_id = sched.submit(
        AppDef(entrypoint, roles=[role]), {"namespace": namespace, "api": "batch"}
    )
    selector = f"{LABEL_APP_ID}={app_id.split(':')[1]}"
    (pod,) = kube_cluster.wait_for_pods(namespace, selector, 1)
    return app_id, selector, pod


def test_cancel_deletes_running_pods(
    sched: KubernetesScheduler, kube_cluster: Any, kube_namespace: str
) -> None:
    app_id, selector, pod = _one_pod_batch_app(sched, kube_cluster, kube_namespace, "sleep 1d")
    kube_cluster.run_pod(kube_namespace, pod.metadata.name)
    sched.cancel(app_id)
    wait_until(
        "the running pod to be deleted",
        lambda: not kube_cluster.pods(kube_namespace, selector),
        60,
    )
    # Cancelling again finds nothing to delete and says nothing.
    sched.cancel(app_id)


def test_failed_replica_leaves_app_running_and_cancel_deletes_the_ended_app(
    sched: KubernetesScheduler, kube_cluster: Any, kube_namespace: str
) -> None:
    role = Role("sh", image="busybox", entrypoint="sleep", args=["1d"], num_replicas=2)
    app_id = sched.submit(AppDef("sh", roles=[role]), {"namespace": kube_namespace, "api": "batch"})
    selector = f"{LABEL_APP_ID}={app_id.split(':')[1]}"
    pods = {
        int(p.metadata.labels[LABEL_REPLICA]): p.metadata.name
        for p in kube_cluster.wait_for_pods(kube_namespace, selector, 2)
    }
    for name in pods.values():
        kube_cluster.run_pod(kube_namespace, name)
    kube_cluster.end_pod(kube_namespace, pods[1], 1)
    # Replica 0 still holds its node: the app has not ended (as a Volcano Job would say).
    wait_until(
        "replica 1 to read FAILED",
        lambda: _replicas(sched, app_id)[("sh", 1)][0] == AppState.FAILED,
        60,
    )
    desc = sched.describe(app_id)
    assert desc is not None and desc.state == AppState.RUNNING
    # ... but says which replica failed, and how to stop the others
    assert desc.msg == (
        "replica sh/1 FAILED (exit 1); the app ends when its other replicas do, and "
        f"`torchx cancel kubernetes://test/{app_id}` stops them"
    )
    kube_cluster.end_pod(kube_namespace, pods[0], 0)

    def ended() -> bool:
        d = sched.describe(app_id)
        return d is not None and d.state == AppState.FAILED

    wait_until("the app to read FAILED", ended, 60)
    # Its Jobs, Service and pods remain; `torchx cancel` of the ended app deletes them.
    assert kube_cluster.pods(kube_namespace, selector)
    proc = _torchx("cancel", f"kubernetes://test/{app_id}")
    assert proc.returncode == 0, proc.stderr
    assert "already ended as FAILED" in proc.stdout and "deleted" in proc.stdout
    batch = kube_cluster.batch()
    wait_until(
        "the ended app's Jobs and pods to be deleted",
        lambda: (
            not (
                batch.list_namespaced_job(kube_namespace, label_selector=selector).items
                or kube_cluster.pods(kube_namespace, selector)
            )
        ),
        60,
    )


def _follow_until_waiting(
    sched: KubernetesScheduler, app_id: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[threading.Thread, list[str]]:
    """A thread following the app's log, returned once it has seen the pod not started and
    waits for it to start (so the test reaches that path, whatever the thread timing)."""
    got: list[str] = []
    waiting = threading.Event()
    wait_started = sched._wait_started

    def first_poll(core: Any, pod: Any) -> bool:
        waiting.set()
        return wait_started(core, pod)

    monkeypatch.setattr(sched, "_wait_started", first_poll)
    follower = threading.Thread(
        target=lambda: got.extend(sched.log_iter(app_id, "t", 0, should_tail=True)),
        daemon=True,
    )
    follower.start()
    assert waiting.wait(60), "the follower did not wait for the pod to start"
    return follower, got


@pytest.mark.parametrize("deleted", [False, True], ids=["started", "deleted"])
def test_log_of_a_pod_not_started_is_empty_and_follow_waits_for_it(
    sched: KubernetesScheduler,
    kube_cluster: Any,
    kube_namespace: str,
    monkeypatch: pytest.MonkeyPatch,
    deleted: bool,
) -> None:
    app_id, _, pod = _one_pod_batch_app(sched, kube_cluster, kube_namespace, "echo hi")
    name = pod.metadata.name
    # Scheduled, not started: nothing written yet, and no node asked.
    assert list(sched.log_iter(app_id, "t", 0)) == []

    stamp = "2026-01-01T00:00:00.000000000Z"
    with kube_cluster.kubelet_logs({name: f"{stamp} hi\n"}) as asked:
        follower, got = _follow_until_waiting(sched, app_id, monkeypatch)
        assert asked == []  # still waiting for the pod to start
        if deleted:  # before it starts: the follow ends with an empty log
            kube_cluster.core().delete_namespaced_pod(name, kube_namespace, grace_period_seconds=0)
        else:
            kube_cluster.run_pod(kube_namespace, name)
        follower.join(timeout=60)
        assert not follower.is_alive(), "the followed log did not end"
    if deleted:
        assert got == [] and asked == []
    else:
        assert [line.strip() for line in got] == ["hi"]
        assert len(asked) == 1 and "follow=true" in asked[0]


STAMP = "2026-01-01T00:00:00.000000000Z"


def _held_log(released: threading.Event, waited: list[bool]) -> Any:
    """A kubelet log that sends 256 lines (far more than the buffers between kubelet, API
    server and client hold), then waits for ``released`` (noting in ``waited`` whether it
    came in time), then a line of twice ``MAX_LINE_BYTES`` and a last line without newline."""
    from torchx.schedulers._bounded_lines import MAX_LINE_BYTES

    def body() -> Iterator[bytes]:
        yield "".join(f"{STAMP} line {i} {'x' * 1000}\n" for i in range(256)).encode()
        waited.append(released.wait(60))
        yield f"{STAMP} ".encode() + b"y" * (2 * MAX_LINE_BYTES + 10) + b"\n"
        yield f"{STAMP} last".encode()

    return body


@pytest.mark.parametrize("follow", [False, True], ids=["read", "followed"])
def test_a_log_is_given_as_it_comes_in_lines_of_bounded_size(
    sched: KubernetesScheduler, kube_cluster: Any, kube_namespace: str, follow: bool
) -> None:
    """Neither a read nor a followed log is held whole: its first line is given while the
    node still holds back the rest, and a line over the cap comes in pieces."""
    from torchx.schedulers._bounded_lines import MAX_LINE_BYTES

    app_id, _, pod = _one_pod_batch_app(sched, kube_cluster, kube_namespace, "echo hi")
    kube_cluster.run_pod(kube_namespace, pod.metadata.name)
    released, waited = threading.Event(), []
    with kube_cluster.kubelet_logs({pod.metadata.name: _held_log(released, waited)}) as asked:
        lines = iter(sched.log_iter(app_id, "t", 0, should_tail=follow))
        first = next(lines)
        released.set()
        rest = list(lines)
    assert waited == [True], "the first line came only once the whole log was sent"
    assert ("follow=true" in asked[0]) == follow
    assert first == f"line 0 {'x' * 1000}\n"
    assert [line.split()[1] for line in rest[:255]] == [str(i) for i in range(1, 256)]
    pieces = rest[255:-1]
    assert len(pieces) == 3 and max(len(p.encode()) for p in pieces) <= MAX_LINE_BYTES
    assert "".join(pieces) == "y" * (2 * MAX_LINE_BYTES + 10) + "\n"
    # the last line, without its newline: a read log ends it with one, as it always has
    assert rest[-1] == ("last" if follow else "last\n")


def test_a_log_the_server_stops_sending_is_one_line_after_the_read_timeout(
    sched: KubernetesScheduler,
    kube_cluster: Any,
    kube_namespace: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from torchx.schedulers import _kubernetes_client

    # The same limit also covers the wait for the answer's headers and first chunk, which
    # pass through the API server and the TLS kubelet stand-in: 5 s leaves room for a
    # loaded machine while keeping the test short.
    monkeypatch.setattr(_kubernetes_client, "READ_TIMEOUT_S", 5.0)
    app_id, _, pod = _one_pod_batch_app(sched, kube_cluster, kube_namespace, "echo hi")
    kube_cluster.run_pod(kube_namespace, pod.metadata.name)
    released, waited = threading.Event(), []
    with kube_cluster.kubelet_logs({pod.metadata.name: _held_log(released, waited)}):
        lines = iter(sched.log_iter(app_id, "t", 0))
        assert next(lines).startswith("line 0 ")
        with pytest.raises(KubernetesApiError) as e:
            list(lines)
        released.set()
    text = str(e.value)
    assert "\n" not in text and pod.metadata.name in text and "timed out" in text, text


def test_pods_the_job_controller_may_not_create_say_why(
    sched: KubernetesScheduler, kube_namespace: str
) -> None:
    role = Role("t", image="busybox", entrypoint="true", num_replicas=2)
    cfg = {"namespace": kube_namespace, "api": "batch", "service_account": "ghost"}
    app_id = sched.submit(AppDef("ghostly", roles=[role]), cfg)

    def said() -> str | None:
        desc = sched.describe(app_id)
        assert desc is not None and desc.state == AppState.PENDING
        return desc.msg or None

    # The Job controller records each Job's refusal on its own: wait for both.
    msg = wait_until(
        "describe to say why no pod exists, for both Jobs",
        lambda: (m := said()) and m.endswith("(and 1 more Job)") and m,
        60,
    )
    assert "\n" not in msg
    assert msg.startswith("Kubernetes cannot create the pod of Job ")
    assert 'serviceaccount "ghost" not found' in msg


def test_a_pod_the_scheduler_cannot_place_says_why(
    sched: KubernetesScheduler, kube_cluster: Any, kube_namespace: str
) -> None:
    # The node has 8 GPUs; kube-scheduler marks the pod Unschedulable with its reason.
    role = Role(
        "big", image="busybox", entrypoint="true", resource=Resource(cpu=1, gpu=16, memMB=64)
    )
    app_id = sched.submit(
        AppDef("too-big", roles=[role]), {"namespace": kube_namespace, "api": "batch"}
    )

    def explained() -> str:
        d = sched.describe(app_id)
        assert d is not None and d.state == AppState.PENDING
        return d.msg

    msg = wait_until("the scheduler's reason", explained, 60)
    assert msg.startswith("waiting for Kubernetes to schedule it: Unschedulable:"), msg
    assert "Insufficient nvidia.com/gpu" in msg
    sched.cancel(app_id)
    assert sched.describe(app_id) is None


# -- refusals reach the CLI as one line ---------------------------------------------------


def _refused_echo(cfg: str) -> str:
    """The one line ``torchx run -s kubernetes -cfg CFG utils.echo`` fails with (exit 2, no
    traceback)."""
    proc = _torchx("run", "-s", "kubernetes", "-cfg", cfg, "--workspace", "", "utils.echo")
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


def test_account_without_create_rights_gets_the_missing_permission(
    kube_cluster: Any, kube_namespace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kubernetes import client

    core = kube_cluster.core()
    core.create_namespaced_service_account(kube_namespace, {"metadata": {"name": "reader"}})
    rbac = client.RbacAuthorizationV1Api(kube_cluster.api)
    rbac.create_namespaced_role(
        kube_namespace,
        {
            "metadata": {"name": "reader"},
            "rules": [
                {
                    "apiGroups": ["", "batch", "batch.volcano.sh"],
                    "resources": ["pods", "services", "jobs"],
                    "verbs": ["get", "list", "watch"],
                }
            ],
        },
    )
    rbac.create_namespaced_role_binding(
        kube_namespace,
        {
            "metadata": {"name": "reader"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": kube_namespace}],
        },
    )
    token = kube_cluster.service_account_token(kube_namespace, "reader")
    monkeypatch.setenv(
        "KUBECONFIG", str(kube_cluster.kubeconfig_for(tmp_path / "reader", token, kube_namespace))
    )
    line = _refused_echo(f"namespace={kube_namespace},api=batch")
    assert "forbidden" in line and "cannot create" in line, line
    assert f'"{kube_namespace}"' in line or f"'{kube_namespace}'" in line
    assert 'resource "services"' in line
    # The account may read: describe of an unknown app is "no such app", not an error.
    s = KubernetesScheduler("reader")
    assert s.describe(f"{kube_namespace}:nothing-here") is None


def test_unknown_namespace_is_one_line(kube_env: Any) -> None:
    line = _refused_echo("namespace=no-such-ns,api=batch")
    assert "no-such-ns" in line and "not found" in line, line
    assert "create the namespace" in line


def test_name_the_server_rejects_is_one_line_and_leaves_nothing(
    kube_cluster: Any, kube_env: Any, kube_namespace: str
) -> None:
    line = _refused_echo(f"namespace={kube_namespace},api=batch,service_account=Not_A_Name")
    assert "Not_A_Name" in line and "serviceAccountName" in line, line
    # The Service made before the refused Job was removed again.
    assert kube_cluster.core().list_namespaced_service(kube_namespace).items == []
