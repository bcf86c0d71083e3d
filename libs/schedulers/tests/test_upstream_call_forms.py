"""0.7's call forms and request attributes that migrating code uses, beside this project's."""

from __future__ import annotations

from torchx.specs import AppDef, Role


def _app(image: str = "busybox:1", replicas: int = 1) -> AppDef:
    return AppDef("a", [Role("r", image=image, entrypoint="echo", num_replicas=replicas)])


def test_kubernetes_app_to_resource_takes_the_queue_and_service_account_as_0_7_did() -> None:
    from torchx.schedulers.kubernetes_scheduler import app_to_resource

    vjob = app_to_resource(_app(), "q1", service_account="sa", priority_class="high")
    assert vjob["kind"] == "Job" and vjob["spec"]["queue"] == "q1"
    pod_spec = vjob["spec"]["tasks"][0]["template"]["spec"]
    assert pod_spec["serviceAccountName"] == "sa" and pod_spec["priorityClassName"] == "high"
    plain = app_to_resource(_app(), "q1", service_account=None)
    assert "serviceAccountName" not in plain["spec"]["tasks"][0]["template"]["spec"]


def test_kubernetes_role_to_pod_takes_service_account_by_keyword() -> None:
    from torchx.schedulers.kubernetes_scheduler import role_to_pod

    pod = role_to_pod("p", _app().roles[0], service_account="sa")
    assert pod["kind"] == "Pod" and pod["spec"]["serviceAccountName"] == "sa"


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
