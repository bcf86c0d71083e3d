"""pytorch/torchx 0.7 names added to the scheduler modules, each doing what it says."""

from __future__ import annotations

import io
import json
import os
import re
import string
import time
from pathlib import Path

import pytest

from torchx.schedulers.local_scheduler import LocalScheduler
from torchx.specs import AppDef, AppState, Resource, Role


def _app(name: str = "a", replicas: int = 2, **role: object) -> AppDef:
    return AppDef(
        name,
        [Role("trainer", image="img", entrypoint="echo", num_replicas=replicas, **role)],  # type: ignore[arg-type]
    )


def test_registry_names() -> None:
    import torchx.schedulers as s

    assert s.get_default_scheduler_name() == "local_cwd" == s.DEFAULT_SCHEDULER
    # Every built-in scheduler's module, and each module has the factory.
    import importlib

    for name, module in s.DEFAULT_SCHEDULER_MODULES.items():
        assert name in s.get_scheduler_factories()
        assert callable(getattr(importlib.import_module(module), "create_scheduler", None)) or (
            name == "local_dir"
        )
    assert s.load_group("torchx.no-such-group", default={"x": 1}) == {"x": 1}


def test_api_names() -> None:
    from torchx.schedulers import api
    from torchx.specs import NULL_RESOURCE, AppDryRunInfo

    assert api.NULL_RESOURCE is NULL_RESOURCE and api.AppDryRunInfo is AppDryRunInfo
    assert (api.NONE, api.DAYS_IN_2_WEEKS) == ("<NONE>", 14)


def test_ids() -> None:
    from torchx.schedulers import ids

    for n in (1, 5, 30):
        got = ids.get_len_random_id(n)
        assert len(got) == n and got[0] in ids.START_CANDIDATES
        assert set(got) <= set(ids.END_CANDIDATES)
    assert set(ids.START_CANDIDATES) == set(string.ascii_lowercase)
    values = {ids.random_uint64() for _ in range(20)}
    assert len(values) > 1 and all(0 <= v < 2**64 for v in values)


def test_devices() -> None:
    from torchx.schedulers import devices
    from torchx.specs.named_resources_aws import EFA_DEVICE, NEURON_DEVICE

    mounts = devices.get_device_mounts({EFA_DEVICE: 2, NEURON_DEVICE: 1})
    assert [(m.src_path, m.dst_path) for m in mounts] == [
        ("/dev/infiniband/uverbs0", "/dev/infiniband/uverbs0"),
        ("/dev/infiniband/uverbs1", "/dev/infiniband/uverbs1"),
        ("/dev/neuron0", "/dev/neuron0"),
    ]
    with pytest.warns(UserWarning, match="unknown named device 'nope'"):
        assert devices.get_device_mounts({"nope": 1}) == []


def test_tee_copies_files_written_by_others_into_one(tmp_path: Path) -> None:
    from torchx.schedulers.streams import Tee

    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"")
    b.write_bytes(b"")
    out_path = tmp_path / "out"
    tee = Tee(open(out_path, "wb"), str(a), str(b))  # noqa: SIM115 -- the Tee closes it
    with open(a, "ab") as fa, open(b, "ab") as fb:
        fa.write(b"from a\n")
        fa.flush()
        fb.write(b"from b\n")
        fb.flush()
    tee.write(b"direct\n")
    tee.close()
    lines = sorted(out_path.read_bytes().splitlines())
    assert lines == [b"direct", b"from a", b"from b"]
    with pytest.raises(ValueError, match="at least one source"):
        Tee(io.BytesIO())  # type: ignore[arg-type]


def test_slurm_names() -> None:
    from torchx.schedulers import slurm_scheduler as ss

    role = Role("r", image="", entrypoint="echo", resource=Resource(cpu=2, gpu=0, memMB=2048))
    with_mem = ss.SlurmReplicaRequest.from_role("r", role, {})
    without = ss.SlurmReplicaRequest.from_role("r", role, {}, nomem=True)
    assert "--mem=2048" in with_mem.materialize()
    assert [o for o in without.materialize() if o.startswith("--mem")] == []
    assert "--cpus-per-task=2" in without.materialize()
    assert ss.SLURM_STATES["COMPLETED"] == AppState.SUCCEEDED
    assert ss.SLURM_STATES["TIMEOUT"] == AppState.FAILED
    assert "partition" in ss.SBATCH_GROUP_OPTIONS and "comment" in ss.SBATCH_JOB_OPTIONS


def test_kubernetes_names_match_the_manifests() -> None:
    from torchx.schedulers import kubernetes_scheduler as ks

    app = _app(max_retries=2, retry_policy="APPLICATION")
    req = ks.build_request(app, "a-1234", {"api": "batch"})
    assert isinstance(req, ks.KubernetesJob)
    pods = [m["spec"]["template"] for m in req.manifests if m["kind"] == "Job"]
    for k, pod in enumerate(pods):
        assert pod["metadata"]["labels"] == ks.pod_labels(app, 0, app.roles[0], k, "a-1234")
    volcano = ks.build_request(app, "a-1234", {"api": "volcano"}).manifests[0]
    (task,) = volcano["spec"]["tasks"]
    assert task["policies"] == ks.RETRY_POLICIES["APPLICATION"]
    assert ks.JOB_STATE["Completed"] == AppState.SUCCEEDED
    assert ks.TASK_STATE["Failed"] == AppState.FAILED
    assert ks.LABEL_ROLE_NAME == "torchx.pytorch.org/role-name"
    assert ks.LABEL_ORGANIZATION == "app.kubernetes.io/managed-by"
    assert ks.sanitize_for_serialization({"a": [1, "b"]}) == {"a": [1, "b"]}


def test_docker_names() -> None:
    from torchx.schedulers.docker_scheduler import ensure_network
    from torchx.schedulers.ray_scheduler import NONE
    from torchx.workspace.docker_workspace import DEFAULT_DOCKERFILE, print_push_events

    assert callable(ensure_network) and NONE == "<NONE>"
    assert DEFAULT_DOCKERFILE.startswith(b"ARG IMAGE\nFROM $IMAGE")
    out = io.StringIO()
    print_push_events(
        [{"status": "Preparing", "id": "abc"}, {"status": "Pushed", "progress": "[==>]"}, {}],
        stream=out,
    )
    assert out.getvalue().splitlines() == [
        "docker push abc: Preparing",
        "docker push Pushed [==>]",
    ]
    from torchx.schedulers import SchedulerError

    with pytest.raises(SchedulerError, match="denied"):
        print_push_events([{"error": "denied"}], stream=out)


def test_ray_actor_files_round_trip(tmp_path: Path) -> None:
    from torchx.schedulers.ray.ray_common import RayActor
    from torchx.schedulers.ray.ray_driver import _config, load_actor_json
    from torchx.schedulers.ray_scheduler import serialize

    actors = [
        RayActor("trainer", ["python", "t.py"], {"A": "1"}, num_cpus=2),
        RayActor("trainer", ["python", "t.py"], num_gpus=1),
        RayActor("ps", ["ps"]),
    ]
    serialize(actors, str(tmp_path))
    assert load_actor_json(str(tmp_path / "actors.json")) == actors
    # 0.7 wrote the list as a JSON string inside JSON; that reads too.
    old = tmp_path / "old.json"
    old.write_text(json.dumps(json.dumps([{"name": "x", "command": ["true"]}])))
    assert load_actor_json(str(old)) == [RayActor("x", ["true"])]
    config = _config(actors)
    assert [(r["name"], len(r["replicas"])) for r in config["roles"]] == [("trainer", 2), ("ps", 1)]


def test_local_names_and_log_iterator(scheduler: LocalScheduler, tmp_path: Path) -> None:
    from torchx.schedulers import local_scheduler as ls

    assert (ls.STDOUT_LOG, ls.STDERR_LOG, ls.COMBINED_LOG) == (
        "stdout.log",
        "stderr.log",
        "combined.log",
    )
    assert ls.ReplicaParam is ls.LocalReplicaParams and ls.PopenRequest is ls.LocalRequest
    assert isinstance(__import__("subprocess").Popen(["true"]), ls.PopenProtocol)
    assert set(ls.LocalOpts.__annotations__) == {k for k, _ in scheduler.run_opts()}
    err = ls.SignalException("stop", 15)
    assert err.sigval == 15 and str(err) == "stop"

    script = "for i in 1 2 3; do echo line$i; sleep 0.2; done"
    app = AppDef("logs", [Role("r", image=str(tmp_path), entrypoint="sh", args=["-c", script])])
    app_id = scheduler.submit(app, {})
    log_dir = scheduler.submit_dryrun(app, {}).request.app_dir
    path = os.path.join(os.path.dirname(log_dir), app_id, "r", "0", ls.STDOUT_LOG)
    # Followed while the app runs, then to the end once it has ended.
    lines = list(ls.LogIterator(app_id, path, scheduler))
    assert lines == ["line1\n", "line2\n", "line3\n"]
    assert list(ls.LogIterator(app_id, path, scheduler, should_tail=False)) == lines
    with pytest.raises(RuntimeError, match="without writing"):
        list(ls.LogIterator(app_id, path + ".none", scheduler))
    deadline = time.monotonic() + 120
    while scheduler.describe(app_id).state != AppState.SUCCEEDED:  # type: ignore[union-attr]
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert re.match(r"^logs-", app_id)


def test_describe_app_response_defaults() -> None:
    from torchx.schedulers.api import DescribeAppResponse

    resp = DescribeAppResponse(state=AppState.RUNNING)
    assert resp.app_id == "<NOT_SET>" and resp.to_status().state == AppState.RUNNING
    # A describe() that leaves the state out reports what pytorch/torchx's did.
    assert DescribeAppResponse(app_id="a").to_status().state == AppState.UNSUBMITTED


def test_list_app_response_is_built_and_hashed_as_upstream() -> None:
    from torchx.schedulers.api import ListAppResponse

    # Positional as pytorch/torchx writes it: the third argument is the handle.
    resp = ListAppResponse("app-1", AppState.RUNNING, "local://s/app-1")
    assert (resp.app_id, resp.state, resp.app_handle) == (
        "app-1",
        AppState.RUNNING,
        "local://s/app-1",
    )
    assert resp.name == "" and resp.sweep == "" and resp.submitted_at is None
    assert ListAppResponse("app-1", AppState.RUNNING).app_handle == "<NOT_SET>"

    same = ListAppResponse(app_id="app-1", state=AppState.RUNNING, app_handle="local://s/app-1")
    assert resp == same and hash(resp) == hash(same)
    assert len({resp, same, ListAppResponse("app-1", AppState.SUCCEEDED, "local://s/app-1")}) == 2
    assert resp in [ListAppResponse("app-2", AppState.RUNNING, "h"), same]
    assert resp != ListAppResponse("app-1", AppState.RUNNING, "local://s/other")
    # What this project adds describes the app; equality, like the hash, leaves it out.
    assert resp == ListAppResponse("app-1", AppState.RUNNING, "local://s/app-1", name="n")
