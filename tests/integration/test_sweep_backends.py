"""Sweeps on schedulers without job arrays: one app per trial under one sweep handle, at
most --parallel running (Docker engine, Kubernetes API server and Ray cluster of the
fixtures)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

TORCHX = Path(sys.executable).with_name("torchx")


def _torchx(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    if not TORCHX.exists():
        pytest.skip(f"the torchx command is not installed next to {sys.executable}")
    return subprocess.run(
        [str(TORCHX), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=180
    )


def _until(what: str, check: Any, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := check()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)
    return value


def test_docker_sweep_runs_every_trial(docker_engine: Any, tmp_path: Path) -> None:
    env = {**os.environ, "DOCKER_HOST": docker_engine.base_url}
    run = _torchx(
        env, tmp_path,
        "run", "-s", "local_docker", "-cfg", "network=host", "--workspace", "",
        "--sweep", "msg=alpha,beta,gamma",
        "--parallel", "2", "utils.echo", "--image", docker_engine.image,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    handle = run.stdout.strip()
    assert handle.startswith("local_docker://torchx/sweep-"), run.stdout
    data = json.loads(_torchx(env, tmp_path, "status", "--json", handle).stdout)
    assert [(t["args"], t["state"], t["exit_code"]) for t in data["trials"]] == [
        ({"msg": m}, "SUCCEEDED", 0) for m in ("alpha", "beta", "gamma")
    ]
    log = _torchx(env, tmp_path, "log", f"{handle}/1")
    assert log.stdout == "echo/0 beta\n", log.stderr
    # the list answer says which trial each app is, from its containers' environment
    sweep_id = handle.rsplit("/", 1)[1]
    trials = {t["handle"]: f"{sweep_id}/{t['index']}" for t in data["trials"]}
    listed = _torchx(env, tmp_path, "list", "-s", "local_docker", "--all", "--json")
    got = {a["app_handle"]: a["sweep"] for a in json.loads(listed.stdout)}
    assert {h: got.get(h) for h in trials} == trials, listed.stdout


# A trial that prints a file of the project it was launched from.
READS_THE_PROJECT = '''
import torchx.specs as specs


def trial(x: int, image: str) -> specs.AppDef:
    """Prints marker.txt from its working directory.

    Args:
        x: the swept value
        image: the image the project is built into
    """
    script = 'echo "$(cat marker.txt) x=$0"'
    role = specs.Role("t", image=image, entrypoint="sh", args=["-c", script, str(x)])
    return specs.AppDef("reads", roles=[role])
'''


def test_docker_sweep_builds_the_current_directory_for_every_trial(
    docker_engine: Any, tmp_path: Path
) -> None:
    (tmp_path / "comp.py").write_text(READS_THE_PROJECT)
    (tmp_path / "marker.txt").write_text("from the project\n")
    env = {**os.environ, "DOCKER_HOST": docker_engine.base_url}
    sweep = ["--sweep", "x=1,2", "comp.py:trial", "--image", docker_engine.image]
    cfg = ["-cfg", "network=host,quiet=True"]
    run = _torchx(env, tmp_path, "run", "-s", "local_docker", *cfg, *sweep)
    assert run.returncode == 0, run.stderr
    assert run.stderr.splitlines()[0] == (
        f"torchx: building the current directory ({tmp_path}) into the image of role t; "
        '--workspace "" to skip'
    )
    handle = run.stdout.strip()
    data = json.loads(_torchx(env, tmp_path, "status", "--json", handle).stdout)
    assert [t["state"] for t in data["trials"]] == ["SUCCEEDED", "SUCCEEDED"], data
    for i in (0, 1):
        log = _torchx(env, tmp_path, "log", f"{handle}/{i}")
        assert log.stdout == f"t/0 from the project x={i + 1}\n", log.stderr


def test_kubernetes_sweep_jobs_are_accepted_at_most_k_at_once(
    kube_env: Any, kube_namespace: str, tmp_path: Path
) -> None:
    pytest.importorskip("kubernetes")
    env = dict(os.environ)
    dry = _torchx(
        env, tmp_path,
        "run", "-s", "kubernetes", "--dryrun", "-cfg", f"namespace={kube_namespace},api=batch",
        "--workspace", "", "--sweep", "msg=a,b,c", "--parallel", "2", "utils.echo",
        "--image", "busybox",
    )  # fmt: skip
    assert dry.returncode == 0, dry.stderr
    # The fixture's API server predates per-index retries (1.29): one Job per trial, and why.
    assert "one Job per trial, not one Indexed Job, because the API server is v1." in dry.stdout
    assert "need v1.29+; at most 2 running at once" in dry.stdout

    run = _torchx(
        env, tmp_path,
        "run", "-s", "kubernetes", "-cfg", f"namespace={kube_namespace},api=batch",
        "--workspace", "", "--sweep", "msg=a,b,c", "--parallel", "2", "utils.echo",
        "--image", "busybox",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    handle = run.stdout.strip()

    def trial_handles() -> list[str | None]:
        out = _torchx(env, tmp_path, "status", "--json", handle)
        assert out.returncode == 0, out.stderr
        return [t["handle"] for t in json.loads(out.stdout)["trials"]]

    first = _until("two trials submitted", lambda: (h := trial_handles())[1] and h)
    assert first[2] is None  # the third waits for a free slot
    # Each submitted trial is a Job the API server accepted, with its pod bound.
    pods = kube_env.wait_for_pods(kube_namespace, "", 2)
    time.sleep(3)
    assert trial_handles()[2] is None
    # Playing the kubelet: the first trial's pod ends well, so the third is submitted.
    first_name = str(first[0]).rsplit(":", 1)[1]
    pod = next(p for p in pods if p.metadata.name.startswith(first_name))
    kube_env.run_pod(kube_namespace, pod.metadata.name)
    kube_env.end_pod(kube_namespace, pod.metadata.name, 0)
    third = _until("the third trial submitted", lambda: trial_handles()[2], timeout=90)
    assert third.startswith(f"kubernetes://torchx/{kube_namespace}:")

    cancel = _torchx(env, tmp_path, "cancel", handle)
    assert cancel.returncode == 0, cancel.stderr
    data = json.loads(_torchx(env, tmp_path, "status", "--json", handle).stdout)
    assert data["state"] == "CANCELLED", data
    assert [t["state"] for t in data["trials"]] == ["SUCCEEDED", "CANCELLED", "CANCELLED"]


# Records when it started, waits for the test's gate file (at most 240 s), records when it
# ended: a Ray trial's replica, on this host.
GATED_TRIAL = '''
import torchx.specs as specs


def trial(x: int, out: str) -> specs.AppDef:
    """A trial that holds its slot until the test opens the gate.

    Args:
        x: the swept value
        out: folder for the records
    """
    code = (
        "import os, pathlib, sys, time\\n"
        "out, i = pathlib.Path(sys.argv[1]), os.environ['TORCHX_SWEEP_INDEX']\\n"
        "(out / f'{i}.start').write_text(repr(time.time()))\\n"
        "(out / f'{i}.args').write_text(os.environ['TORCHX_SWEEP_ARGS'])\\n"
        "deadline = time.monotonic() + 240\\n"
        "while not (out / 'gate').exists() and time.monotonic() < deadline:\\n"
        "    time.sleep(0.1)\\n"
        "(out / f'{i}.end').write_text(repr(time.time()))\\n"
        "print(f'trial {i} x={sys.argv[2]}')\\n"
    )
    role = specs.Role("t", image="", entrypoint="python", args=["-c", code, out, str(x)])
    return specs.AppDef("trial", roles=[role])
'''


@pytest.mark.slow
def test_ray_sweep_is_one_job_per_trial_at_most_two_running(
    ray_cluster: Any, tmp_path: Path
) -> None:
    # The first two trials hold their slots until the gate opens, so whatever the timing,
    # the driver may not have submitted the third while the test looks.
    (tmp_path / "comp.py").write_text(GATED_TRIAL)
    out = tmp_path / "out"
    out.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_", "TORCHX_"))}
    cfg = f"address={ray_cluster.address}"
    sweep_args = ["--workspace", "", "--sweep", "x=10,20,30", "--parallel", "2", "comp.py:trial"]
    sweep_args += ["--out", str(out)]

    dry = _torchx(env, tmp_path, "run", "-s", "ray", "-cfg", cfg, "--dryrun", *sweep_args)
    assert dry.returncode == 0, dry.stderr
    assert "one app per trial, at most 2 running at once" in dry.stdout
    assert "JobSubmissionClient(" in dry.stdout and "submit_job" in dry.stdout

    run = _torchx(env, tmp_path, "run", "-s", "ray", "-cfg", cfg, *sweep_args)
    assert run.returncode == 0, run.stderr
    handle = run.stdout.strip()
    assert handle.startswith("ray://torchx/sweep-"), run.stdout

    def status() -> Any:
        done = _torchx(env, tmp_path, "status", "--json", handle)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    started = [out / f"{i}.start" for i in range(3)]
    _until("two trials started", lambda: started[0].exists() and started[1].exists(), 240)
    waiting = status()
    assert [t["handle"] is not None for t in waiting["trials"]] == [True, True, False], waiting
    assert not started[2].exists()
    (out / "gate").touch()

    final = _until("the sweep ended", lambda: (s := status())["state"] != "RUNNING" and s, 240)
    assert final["state"] == "SUCCEEDED", final
    trials = sorted(final["trials"], key=lambda t: t["index"])
    assert [(t["args"], t["state"], t["exit_code"]) for t in trials] == [
        ({"x": x}, "SUCCEEDED", 0) for x in ("10", "20", "30")
    ]
    # One Ray job per trial, each with its own handle that works as an app handle.
    handles = [t["handle"] for t in trials]
    assert len(set(handles)) == 3 and all(h.startswith("ray://torchx/") for h in handles)
    # the list answer says which trial each job is, from the job's metadata
    listed = _torchx(env, tmp_path, "list", "-s", "ray", "-cfg", cfg, "--all", "--json")
    got = {a["app_handle"]: a["sweep"] for a in json.loads(listed.stdout)}
    sweep_id = handle.rsplit("/", 1)[1]
    assert [got.get(h) for h in handles] == [f"{sweep_id}/{i}" for i in range(3)], listed
    for i, x in enumerate(("10", "20", "30")):
        assert json.loads((out / f"{i}.args").read_text()) == {"x": x}
    # The third trial started only once one of the first two had ended.
    ended = [float((out / f"{i}.end").read_text()) for i in range(2)]
    assert float(started[2].read_text()) >= min(ended)
    log = _torchx(env, tmp_path, "log", f"{handle}/2")
    assert "trial 2 x=30" in log.stdout, log.stderr


def test_kubernetes_indexed_sweep_through_the_runner(
    kube_env: Any, kube_namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner's side of an Indexed Job sweep: one Job submitted, trial handles by
    completion index, status by one pod list call, cancel deletes the Job. The fixture's
    server predates Indexed Jobs, so its version is stated as 1.30 here; the server then
    stores the Job without completionMode and its pods carry no completion index, so every
    trial reads PENDING until the cancel."""
    pytest.importorskip("kubernetes")
    from torchx.runner import Sweep, get_runner
    from torchx.schedulers.kubernetes_indexed import LABEL_SWEEP
    from torchx.schedulers.kubernetes_scheduler import KubernetesScheduler

    monkeypatch.setattr(KubernetesScheduler, "server_version", lambda self: (1, 30))
    sweep = Sweep.grid("utils.echo", {"msg": ["a", "b", "c"]}, ["--image", "busybox"], 2)
    cfg = {"namespace": kube_namespace, "api": "batch"}
    with get_runner() as runner:
        handle = runner.run_sweep(sweep, "kubernetes", cfg)
        sweep_id = handle.rsplit("/", 1)[1]
        (job,) = kube_env.batch().list_namespaced_job(kube_namespace).items
        assert job.metadata.name == sweep_id
        assert job.metadata.labels[LABEL_SWEEP] == sweep_id
        assert (job.spec.completions, job.spec.parallelism) == (3, 2)
        st = runner.sweep_status(handle)
        assert st.mode == "indexed"
        assert [t.handle for t in st.trials] == [
            f"kubernetes://torchx/{kube_namespace}:{sweep_id}-{i}" for i in range(3)
        ]
        assert {t.state.name for t in st.trials} == {"PENDING"}
        runner.cancel_sweep(handle)
        assert not kube_env.batch().list_namespaced_job(kube_namespace).items
        st = runner.sweep_status(handle)
        assert st.state.name == "CANCELLED"
        assert [t.state.name for t in st.trials] == ["CANCELLED"] * 3
