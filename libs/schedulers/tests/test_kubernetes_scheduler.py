"""kubernetes: manifests checked field by field and against the client's official models."""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import Any

import pytest
import yaml

from torchx.schedulers import SchedulerError, get_scheduler
from torchx.schedulers._kubernetes_status import (
    describe_batch,
    describe_volcano,
    jobs_without_pods,
    why_no_pods,
)
from torchx.schedulers.kubernetes_scheduler import (
    LABEL_APP_ID,
    LABEL_REPLICA,
    LABEL_ROLE,
    KubernetesApiError,
    KubernetesScheduler,
    build_request,
    parse_toleration,
)
from torchx.specs import (
    AppDef,
    AppState,
    Resource,
    RetryPolicy,
    Role,
    SpecsError,
    VolumeMount,
)

from .container_apps import trainer_role

kubernetes = pytest.importorskip("kubernetes")


def _app(**role_kw: Any) -> AppDef:
    return AppDef("My_App", roles=[trainer_role(**role_kw)])


CFG: dict[str, Any] = {
    "namespace": "ml",
    "api": "volcano",
    "queue": "gpu",
    "service_account": "trainer-sa",
    "priority_class": "high",
    "image_pull_secrets": ["regcred"],
    "node_selector": {"node.kubernetes.io/instance-type": "p4d"},
    "labels": {"team": "vision"},
    "shm_size": "8Gi",
}


def _deserialize(obj: dict[str, Any], model: str) -> Any:
    """Load ``obj`` into an official model, the way the client reads API responses."""

    class Response:
        data = json.dumps(obj)

    client = kubernetes.client.ApiClient()
    return client, client.deserialize(Response(), model)


def _roundtrip(obj: dict[str, Any], model: str) -> None:
    # Unknown or misspelt fields are dropped by the models, so equality after the round
    # trip shows that every field exists in the official schema with the right shape.
    client, typed = _deserialize(obj, model)
    assert client.sanitize_for_serialization(typed) == obj


def test_volcano_job_field_by_field() -> None:
    req = build_request(_app(), "my-app-1234", CFG)
    assert req.namespace == "ml" and req.api == "volcano"
    (job,) = req.manifests
    assert job["apiVersion"] == "batch.volcano.sh/v1alpha1"
    assert job["kind"] == "Job"
    assert job["metadata"] == {
        "name": "my-app-1234",
        "namespace": "ml",
        "labels": {
            "app.kubernetes.io/managed-by": "torchx",
            LABEL_APP_ID: "my-app-1234",
            "torchx.pytorch.org/app-name": "my-app",
            "team": "vision",
        },
    }
    spec = job["spec"]
    assert spec["schedulerName"] == "volcano"
    assert spec["queue"] == "gpu"
    assert spec["minAvailable"] == 2
    assert spec["maxRetry"] == 3
    assert spec["plugins"] == {"svc": [], "env": []}
    (task,) = spec["tasks"]
    assert task["name"] == "trainer"
    assert task["replicas"] == 2
    assert task["minAvailable"] == 2
    assert task["maxRetry"] == 3
    assert task["policies"] == [
        {"event": "PodEvicted", "action": "RestartTask"},
        {"event": "PodFailed", "action": "RestartTask"},
    ]
    pod = task["template"]
    assert pod["metadata"]["labels"][LABEL_ROLE] == "trainer"
    ps = pod["spec"]
    assert ps["restartPolicy"] == "Never"
    assert ps["serviceAccountName"] == "trainer-sa"
    assert ps["priorityClassName"] == "high"
    assert ps["imagePullSecrets"] == [{"name": "regcred"}]
    assert ps["nodeSelector"] == {"node.kubernetes.io/instance-type": "p4d"}
    assert ps["volumes"] == [
        {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}},
        {"name": "mount-0", "hostPath": {"path": "/data"}},
        {"name": "mount-1", "persistentVolumeClaim": {"claimName": "ckpt-pvc"}},
        {"name": "mount-2", "hostPath": {"path": "/dev/fuse", "type": "CharDevice"}},
    ]
    (c,) = ps["containers"]
    assert c["name"] == "trainer"
    assert c["image"] == "registry.example.com/org/train:1.0"
    assert c["command"] == ["python"]
    assert c["args"] == ["-m", "train", "--rank", "$(VC_TASK_INDEX)", "--id", "my-app-1234"]
    env = {e["name"]: e["value"] for e in c["env"]}
    assert env["TORCHX_RANK0_HOST"] == "my-app-1234-trainer-0.my-app-1234"
    assert env["MASTER_ADDR"] == env["TORCHX_RANK0_HOST"]
    assert env["MASTER_PORT"] == "29500"
    assert env["FOO"] == "bar"
    amounts = {
        "cpu": "2500m",
        "memory": "4096Mi",
        "nvidia.com/gpu": "1",
        "vpc.amazonaws.com/efa": "2",
    }
    assert c["resources"] == {"requests": amounts, "limits": amounts}
    assert c["volumeMounts"] == [
        {"name": "dshm", "mountPath": "/dev/shm"},
        {"name": "mount-0", "mountPath": "/mnt/data", "readOnly": True},
        {"name": "mount-1", "mountPath": "/ckpt"},
        {"name": "mount-2", "mountPath": "/dev/fuse"},
    ]
    assert c["securityContext"] == {"privileged": True}
    assert c["ports"] == [{"name": "tcp", "containerPort": 29500}]
    _roundtrip(pod, "V1PodTemplateSpec")
    _, typed = _deserialize(pod, "V1PodTemplateSpec")
    assert typed.spec.containers[0].resources.limits["nvidia.com/gpu"] == "1"
    assert typed.spec.volumes[0].empty_dir.medium == "Memory"


def test_batch_jobs_and_headless_service_validate_against_official_models() -> None:
    app = _app(retry_policy=RetryPolicy.REPLICA)
    app.roles.append(Role("ps", image="busybox", entrypoint="sh", args=["-c", "true"]))
    req = build_request(app, "my-app-1234", {**CFG, "api": "batch"})
    svc, worker, worker1, ps = req.manifests
    assert svc["kind"] == "Service"
    assert svc["spec"] == {
        "clusterIP": "None",
        "selector": {LABEL_APP_ID: "my-app-1234"},
        "publishNotReadyAddresses": True,
    }
    _roundtrip(svc, "V1Service")
    # One Job per replica, named (and its pod host-named) <app>-<role>-<k>.
    assert [m["metadata"]["name"] for m in (worker, worker1, ps)] == [
        "my-app-1234-trainer-0",
        "my-app-1234-trainer-1",
        "my-app-1234-ps-0",
    ]
    assert worker["spec"]["completions"] == worker["spec"]["parallelism"] == 1
    assert worker["spec"]["backoffLimit"] == 3
    tmpl = worker1["spec"]["template"]
    assert tmpl["spec"]["subdomain"] == "my-app-1234"
    assert tmpl["spec"]["hostname"] == "my-app-1234-trainer-1"
    assert tmpl["spec"]["restartPolicy"] == "Never"
    assert tmpl["spec"]["containers"][0]["args"][3] == "1"
    assert tmpl["metadata"]["labels"][LABEL_APP_ID] == "my-app-1234"
    assert tmpl["metadata"]["labels"][LABEL_REPLICA] == "1"
    env = {e["name"]: e["value"] for e in tmpl["spec"]["containers"][0]["env"]}
    assert env["TORCHX_RANK0_HOST"] == "my-app-1234-trainer-0.my-app-1234"
    assert ps["spec"]["backoffLimit"] == 0
    assert ps["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    assert "resources" not in ps["spec"]["template"]["spec"]["containers"][0]
    for job in (worker, worker1, ps):
        _roundtrip(job, "V1Job")
    _, typed = _deserialize(worker, "V1Job")
    assert typed.spec.template.spec.volumes[2].persistent_volume_claim.claim_name == "ckpt-pvc"


def test_retry_policies_map_to_volcano_actions_and_no_retries_to_none() -> None:
    for policy, action in [
        (RetryPolicy.APPLICATION, "RestartJob"),
        (RetryPolicy.REPLICA, "RestartPod"),
    ]:
        (job,) = build_request(_app(retry_policy=policy), "a-1", CFG).manifests
        assert job["spec"]["tasks"][0]["policies"][0]["action"] == action
    (job,) = build_request(_app(max_retries=0), "a-1", CFG).manifests
    assert "policies" not in job["spec"]["tasks"][0]
    assert job["spec"]["maxRetry"] == 0


def test_dryrun_prints_yaml_of_the_exact_manifests() -> None:
    s = get_scheduler("kubernetes")
    assert isinstance(s, KubernetesScheduler)
    info = s.submit_dryrun(_app(), CFG)
    docs = list(yaml.safe_load_all(str(info)))
    assert docs == info.request.manifests
    assert info.request.app_id.startswith("my-app-")
    assert docs[0]["metadata"]["name"] == info.request.app_id


def test_dryrun_without_pyyaml_prints_the_manifests_as_json(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `pip install torchx` has no PyYAML: a dryrun (which needs no cluster) must still print.
    monkeypatch.setitem(sys.modules, "yaml", None)
    info = get_scheduler("kubernetes").submit_dryrun(_app(), CFG)
    text = str(info)
    docs = [json.loads(part) for part in text.split("\n---\n")]
    assert docs == info.request.manifests


@pytest.mark.parametrize(
    ("change", "cfg", "field", "rule"),
    [
        ({"image": "Bad/Image:1"}, {}, "role 'trainer' image", "lowercase path components"),
        ({"image": "repo:-tag"}, {}, "role 'trainer' image", "tag"),
        ({"resource": Resource(cpu=0, gpu=0, memMB=10)}, {}, "resource.cpu", "> 0"),
        ({"resource": Resource(cpu=1, gpu=0, memMB=0)}, {}, "resource.memMB", "> 0"),
        ({"resource": Resource(cpu=1, gpu=-3, memMB=1)}, {}, "resource.gpu", "negative"),
        (
            {"resource": Resource(cpu=1, gpu=0, memMB=1, devices={"x/y": 0})},
            {},
            "resource.devices",
            "> 0",
        ),
        ({"mounts": [VolumeMount("Bad_PVC!", "/x")]}, {}, "PVC", "63 characters"),
        ({}, {"labels": {"team": "a b"}}, "run option 'labels'['team']", "63 characters"),
        ({}, {"node_selector": {"-bad": "x"}}, "node_selector' key", "name part"),
        ({}, {"namespace": "My_NS"}, "namespace", "DNS label"),
        ({}, {"api": "argo"}, "run option 'api'", "volcano or batch"),
        ({}, {"shm_size": "lots"}, "run option 'shm_size'", "8Gi"),
        ({}, {"shm_size": "1Gi\nx: y"}, "run option 'shm_size'", "quantity"),
    ],
)
def test_bad_input_is_refused_before_submission(
    change: dict[str, Any], cfg: dict[str, Any], field: str, rule: str
) -> None:
    # No API client is configured: reaching the API would fail differently.
    s = KubernetesScheduler("t", client=object())
    with pytest.raises(SpecsError) as e:
        s.submit_dryrun(_app(**change), {**CFG, **cfg})
    assert field in str(e.value)
    assert rule in str(e.value)


def test_states_read_from_volcano_and_batch_status() -> None:
    (vjob,) = build_request(_app(), "a-1", CFG).manifests
    assert describe_volcano("ml:a-1", vjob).state == AppState.UNKNOWN
    vjob["status"] = {"state": {"phase": "Running"}, "retryCount": 1}
    d = describe_volcano("ml:a-1", vjob)
    assert d.state == AppState.RUNNING and d.num_restarts == 1
    assert [len(r.replicas) for r in d.roles_statuses] == [2]
    vjob["status"]["state"]["phase"] = "Aborted"
    assert describe_volcano("ml:a-1", vjob).state == AppState.CANCELLED
    _, job, _ = build_request(_app(), "a-1", {**CFG, "api": "batch"}).manifests
    job["status"] = {"conditions": [{"type": "Complete", "status": "True"}]}
    assert describe_batch("ml:a-1", [job], session="s").state == AppState.SUCCEEDED
    job["status"] = {"conditions": [{"type": "Failed", "status": "True"}], "failed": 4}
    d = describe_batch("ml:a-1", [job], session="s")
    # four failed pods, the last of which ended the Job: three retries
    assert d.state == AppState.FAILED and d.num_restarts == 3
    job["metadata"]["annotations"] = {"torchx.pytorch.org/cancelled": "true"}
    assert describe_batch("ml:a-1", [job], session="s").state == AppState.CANCELLED


def test_bad_app_id_names_the_expected_form() -> None:
    with pytest.raises(SpecsError, match="NAMESPACE:NAME"):
        KubernetesScheduler("t", client=object()).describe("no-namespace")


def _pod(name: str, role: str, phase: str, created: str, **extra: Any) -> dict[str, Any]:
    """A pod as the API returns it (sanitized), reduced to what describe reads."""
    pod: dict[str, Any] = {
        "metadata": {
            "name": name,
            "creationTimestamp": created,
            "labels": {LABEL_APP_ID: "a-1", LABEL_ROLE: role},
            "annotations": extra.pop("annotations", {}),
        },
        "spec": {"hostname": extra.pop("hostname", name)},
        "status": {"phase": phase, **extra},
    }
    return pod


def _terminated(code: int) -> list[dict[str, Any]]:
    return [{"name": "trainer", "state": {"terminated": {"exitCode": code}}}]


def test_volcano_replica_states_come_from_the_pods() -> None:
    (vjob,) = build_request(_app(), "a-1", CFG).manifests
    vjob["status"] = {"state": {"phase": "Running"}}
    pods = [
        # Volcano names pod k of task t "<job>-<t>-<k>" and notes k as the task index.
        _pod(
            "a-1-trainer-0",
            "trainer",
            "Succeeded",
            "2024-05-01T10:00:00Z",
            containerStatuses=_terminated(0),
            annotations={"volcano.sh/task-index": "0"},
        ),
        _pod("a-1-trainer-1", "trainer", "Failed", "2024-05-01T10:00:00Z"),
        # RestartPod recreated replica 1: the newer pod wins over the failed one.
        _pod("a-1-trainer-1", "trainer", "Running", "2024-05-01T10:05:00Z"),
        _pod("other-app-x", "trainer", "Running", "2024-05-01T10:05:00Z"),  # no index
    ]
    d = describe_volcano("ml:a-1", vjob, pods)
    (role,) = d.roles_statuses
    assert role.role == "trainer"
    got = [(r.id, r.state, r.hostname, r.exit_code) for r in role.replicas]
    assert got == [
        (0, AppState.SUCCEEDED, "a-1-trainer-0", 0),
        (1, AppState.RUNNING, "a-1-trainer-1", None),
    ]
    assert d.state == AppState.RUNNING  # the app's state stays the job's phase


def test_a_retry_made_in_the_same_second_as_its_failed_pod_speaks_for_the_replica() -> None:
    (vjob,) = build_request(_app(num_replicas=1), "a-1", CFG).manifests
    vjob["status"] = {"state": {"phase": "Running"}}
    index = {"annotations": {"volcano.sh/task-index": "0"}}
    failed = _pod("a-1-trainer-0-x", "trainer", "Failed", "2024-05-01T10:00:00Z", **index)
    retry = _pod("a-1-trainer-0-y", "trainer", "Running", "2024-05-01T10:00:00Z", **index)
    failed["status"]["containerStatuses"] = _terminated(3)
    # the API lists pods by name, which says nothing of their age: both orders
    for pods in ([failed, retry], [retry, failed]):
        d = describe_volcano("ml:a-1", vjob, [dict(p) for p in pods])
        (replica,) = d.roles_statuses[0].replicas
        assert (replica.state, replica.exit_code) == (AppState.RUNNING, None)
    # once both have ended, the attempt that started later speaks for the replica
    failed["status"]["startTime"] = "2024-05-01T10:00:00Z"
    retry["status"] = {
        "phase": "Failed",
        "startTime": "2024-05-01T10:00:01Z",
        "containerStatuses": _terminated(137),
    }
    for pods in ([failed, retry], [retry, failed]):
        d = describe_volcano("ml:a-1", vjob, [dict(p) for p in pods])
        (replica,) = d.roles_statuses[0].replicas
        assert replica.exit_code == 137


def test_batch_replica_states_come_from_the_jobs_and_their_pods() -> None:
    _, j0, j1, j2 = build_request(_app(num_replicas=3), "a-1", {**CFG, "api": "batch"}).manifests
    j0["status"] = {"active": 1, "failed": 1}
    j1["status"] = {"active": 1}
    j2["status"] = {"conditions": [{"type": "Complete", "status": "True"}], "succeeded": 1}
    pods = [
        _pod(
            "a-1-trainer-0-x1",
            "trainer",
            "Failed",
            "2024-05-01T10:00:00Z",
            hostname="a-1-trainer-0",
            containerStatuses=_terminated(137),
        ),
        # the retry of replica 0, newer than its failed pod
        _pod(
            "a-1-trainer-0-x2",
            "trainer",
            "Running",
            "2024-05-01T10:01:00Z",
            hostname="a-1-trainer-0",
        ),
        _pod(
            "a-1-trainer-1-y2",
            "trainer",
            "Pending",
            "2024-05-01T10:00:00Z",
            hostname="a-1-trainer-1",
        ),
        # replica 2's pod was already deleted; its Job says it succeeded
    ]
    for p, k in zip(pods, (0, 0, 1), strict=True):
        p["metadata"]["labels"][LABEL_REPLICA] = str(k)
    d = describe_batch("ml:a-1", [j0, j1, j2], pods, session="s")
    got = [(r.id, r.state, r.hostname, r.exit_code) for r in d.roles_statuses[0].replicas]
    assert got == [
        (0, AppState.RUNNING, "a-1-trainer-0", None),
        (1, AppState.PENDING, "a-1-trainer-1", None),
        (2, AppState.SUCCEEDED, "", None),
    ]
    assert d.state == AppState.RUNNING and d.num_restarts == 1
    assert d.msg == ""  # a failed pod its Job retries is no failed replica


def test_tolerations_take_the_kubectl_taint_form() -> None:
    assert parse_toleration("nvidia.com/gpu:NoSchedule") == {
        "key": "nvidia.com/gpu",
        "operator": "Exists",
        "effect": "NoSchedule",
    }
    assert parse_toleration("dedicated=ml") == {
        "key": "dedicated",
        "operator": "Equal",
        "value": "ml",
    }
    with pytest.raises(SpecsError, match="NoSchedule, PreferNoSchedule, NoExecute"):
        parse_toleration("dedicated=ml:Never")
    with pytest.raises(SpecsError, match="KEY"):
        parse_toleration("=x")


def test_long_names_are_cut_so_every_pod_hostname_is_a_dns_label() -> None:
    s = KubernetesScheduler("t", client=object())
    role = Role(
        "a-rather-long-role-name-indeed", image="busybox", entrypoint="true", num_replicas=100
    )
    info = s.submit_dryrun(AppDef("x" * 63, roles=[role]), {"api": "batch"})
    names = [m["metadata"]["name"] for m in info.request.manifests[1:]]
    assert len(names) == 100 and max(len(n) for n in names) <= 63
    with pytest.raises(SpecsError, match="num_replicas"):
        s.submit_dryrun(AppDef("x", roles=[dataclasses.replace(role, num_replicas=10**12)]), {})


def test_workspace_image_is_pushed_to_image_repo_and_named_in_the_manifest() -> None:
    app = _app(image="torchx-workspace:0123abcd")
    cfg = {**CFG, "image_repo": "registry.local:5000/me/ws"}
    req = build_request(app, "a-1", cfg)
    assert req.push == {"torchx-workspace:0123abcd": "registry.local:5000/me/ws:0123abcd"}
    (container,) = req.manifests[0]["spec"]["tasks"][0]["template"]["spec"]["containers"]
    assert container["image"] == "registry.local:5000/me/ws:0123abcd"
    text = str(KubernetesScheduler("t", client=object()).submit_dryrun(app, cfg))
    assert text.startswith(
        "# push: torchx-workspace:0123abcd -> registry.local:5000/me/ws:0123abcd\n"
    )
    assert yaml.safe_load(text)["kind"] == "Job"  # the comment keeps it valid YAML
    _, job, *_ = build_request(app, "a-1", {**cfg, "api": "batch"}).manifests
    assert job["spec"]["template"]["spec"]["containers"][0]["image"].endswith("/me/ws:0123abcd")


def test_workspace_image_without_image_repo_is_refused() -> None:
    s = KubernetesScheduler("t", client=object())
    with pytest.raises(SpecsError, match=r"run option 'image_repo'.*cannot pull"):
        s.submit_dryrun(_app(image="torchx-workspace:0123abcd"), CFG)
    with pytest.raises(SpecsError, match=r"run option 'image_repo'.*-cfg image_repo="):
        s.with_workspace(_app(), CFG, ".")
    with pytest.raises(SpecsError, match=r"image_repo.*without a tag"):
        s.submit_dryrun(_app(), {**CFG, "image_repo": "me/ws:1"})


def test_workspace_is_built_by_the_engine_and_a_failed_push_creates_nothing(
    docker_engine: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("docker")
    import socket

    import docker

    monkeypatch.setenv("DOCKER_HOST", docker_engine.base_url)
    (tmp_path / "main.sh").write_text("echo from-workspace\n")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]  # nothing listens there once the socket closes
    created: list[Any] = []

    class RecordingScheduler(KubernetesScheduler):
        def _create(self, namespace: str, manifest: dict[str, Any]) -> None:
            created.append(manifest)

    s = RecordingScheduler("t", client=object())
    cfg = {**CFG, "image_repo": f"127.0.0.1:{closed}/me/ws"}
    app, cfg = s.with_workspace(_app(image=docker_engine.image), cfg, str(tmp_path))
    local = app.roles[0].image
    assert local.startswith("torchx-workspace:")
    engine = docker.DockerClient(base_url=docker_engine.base_url)
    try:
        # The workspace is in the image the engine built.
        out = engine.containers.run(local, ["sh", "main.sh"], remove=True, network_mode="none")
        assert out == b"from-workspace\n"
    finally:
        engine.close()
    info = s.submit_dryrun(app, cfg)
    assert info.request.push == {local: f"127.0.0.1:{closed}/me/ws:{local.partition(':')[2]}"}
    with pytest.raises(SchedulerError, match=f"image_repo='127.0.0.1:{closed}/me/ws'"):
        s.schedule(info)
    assert created == []


def test_workspace_is_pushed_with_the_login_then_the_manifests_use_it(
    docker_engine: Any, docker_registry: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("docker")  # the workspace image is built through the SDK
    import json

    monkeypatch.setenv("DOCKER_HOST", docker_engine.base_url)
    docker_registry.write_login(tmp_path)
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path))
    (tmp_path / "main.sh").write_text("echo from-workspace\n")
    created: list[Any] = []

    class RecordingScheduler(KubernetesScheduler):
        def _create(self, namespace: str, manifest: dict[str, Any]) -> None:
            created.append(manifest)

    s = RecordingScheduler("t", client=object())
    repo = f"{docker_registry.host}/team/ws"
    app, cfg = s.with_workspace(
        _app(image=docker_engine.image), {**CFG, "image_repo": repo}, str(tmp_path)
    )
    tag = app.roles[0].image.partition(":")[2]
    s.schedule(s.submit_dryrun(app, cfg))
    # Pushed before any object exists; the cluster pulls what was pushed.
    assert docker_registry.tags("team/ws") == [tag]
    (job,) = created
    assert f"{repo}:{tag}" in json.dumps(job)


def test_api_refusals_become_one_line_with_the_servers_reason() -> None:
    e = kubernetes.client.ApiException(status=403, reason="Forbidden")
    e.body = json.dumps(
        {
            "kind": "Status",
            "message": 'jobs.batch is forbidden: User "u" cannot create resource "jobs"\n'
            'in API group "batch" in the namespace "ml"',
        }
    )
    err = KubernetesApiError.from_api(e, "create Job 'a-1'", "ml")
    assert err.status == 403 and "\n" not in str(err)
    assert str(err).startswith("kubernetes: could not create Job 'a-1' in namespace 'ml': jobs")
    assert str(err).endswith("(a Role bound to your account)")
    bare = KubernetesApiError.from_api(
        kubernetes.client.ApiException(status=500), "list Jobs", None
    )
    assert str(bare) == "kubernetes: could not list Jobs: HTTP 500"


def test_a_pending_app_says_why_from_the_unschedulable_condition() -> None:
    from torchx.schedulers._kubernetes_status import describe_batch, why_pending

    job = {
        "metadata": {"name": "a-1-r", "labels": {"torchx.pytorch.org/role-name": "r"}},
        "spec": {"completions": 1},
        "status": {},
    }
    # what the API server returns for a pod the scheduler could not place
    pod = {
        "metadata": {
            "name": "a-1-r-0",
            "labels": {"torchx.pytorch.org/role-name": "r"},
            "annotations": {"batch.kubernetes.io/job-completion-index": "0"},
        },
        "status": {
            "phase": "Pending",
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.",
                }
            ],
        },
    }
    desc = why_pending(describe_batch("ns:a-1", [job], [pod], session="s"), [pod])
    assert desc.state == AppState.PENDING
    assert desc.msg == (
        "waiting for Kubernetes to schedule it: Unschedulable: "
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."
    )
    pod["status"] = {"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"}]}
    job["status"] = {"active": 1}
    assert why_pending(describe_batch("ns:a-1", [job], [pod], session="s"), [pod]).msg == ""


@pytest.mark.parametrize(
    ("refused", "tail"),
    [(["a"], "found"), (["a", "b"], "(and 1 more Job)"), (["a", "b", "c"], "(and 2 more Jobs)")],
)
def test_why_no_pods_counts_the_other_refused_jobs(refused: list[str], tail: str) -> None:
    from types import SimpleNamespace

    from torchx.schedulers.api import DescribeAppResponse

    bare = jobs_without_pods([{"metadata": {"name": n}} for n in refused], [])
    events = [
        SimpleNamespace(
            involved_object=SimpleNamespace(name=n),
            message='Error creating: serviceaccount "ghost" not found',
        )
        for n in refused
    ]
    pending = DescribeAppResponse(app_id="ns:x", state=AppState.PENDING)
    msg = why_no_pods(pending, bare, events).msg
    assert msg.startswith("Kubernetes cannot create the pod of Job a: Error creating")
    assert msg.endswith(tail), msg
