"""The job entrypoint for apps of several replicas: one actor per replica, one command each.

It is the job's entrypoint (``python -m torchx.schedulers._ray_driver CONFIG_JSON``) and
reads what to run from its argument, or for configs too long for a command line from the
``TORCHX_RAY_DRIVER_CONFIG`` environment variable (JSON, written by ``RayScheduler``).
It reserves every replica's resources at once in a placement group, starts one actor per
bundle, finds rank 0's address and a free port there, and runs each
replica's command as a subprocess of its actor with the rank/world-size/master env set.

Everything it reports goes to its own stdout as lines ``TORCHX_EVENT <json>``; the job's
log is therefore the app's record, readable through the dashboard from anywhere:

- ``{"ev": "log", "r": role, "k": replica, "s": "o"|"e", "t": unix time, "l": text}``
- ``{"ev": "state", "state": ..., "restarts": n, "replicas": [...], "error": ...}``

The job's exit code is the failed replica's exit code, so the job's own status agrees.
This module uses only the standard library and ray: it runs on the cluster. Apps of one
replica take ``_ray_direct`` instead, which reports in the same words without Ray.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from typing import Any

from torchx.schedulers._ray_direct import (
    CONFIG_ENV,
    STDERR_TAIL_LINES,
    STOP_GRACE_S,
    config_from_command_line,
    emit,
    exit_code,
    output_pieces,
)
from torchx.schedulers._replica_env import launch_defaults, replica_env

POLL_INTERVAL_S = 0.05


class ReplicaProcess:
    """The body of a replica actor: one subprocess, its output kept until it is polled."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._lines: list[tuple[str, float, str]] = []
        self._lock = threading.Lock()
        self._readers: list[threading.Thread] = []

    def host(self) -> str:
        from ray.util import get_node_ip_address

        return str(get_node_ip_address())  # type: ignore[no-untyped-call]

    def free_port(self) -> int:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("", 0))
            return int(s.getsockname()[1])

    def start(self, argv: list[str], env: dict[str, str]) -> None:
        self.stop()
        full_env = {k: v for k, v in os.environ.items() if k != CONFIG_ENV}
        full_env.update(env)
        self._lines = []
        self._proc = subprocess.Popen(
            argv,
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # so stop() reaches the command's own children too
        )
        self._readers = [
            threading.Thread(target=self._read, args=(self._proc.stdout, "o"), daemon=True),
            threading.Thread(target=self._read, args=(self._proc.stderr, "e"), daemon=True),
        ]
        for t in self._readers:
            t.start()

    def _read(self, pipe: Any, stream: str) -> None:
        for text in output_pieces(pipe):
            with self._lock:
                self._lines.append((stream, time.time(), text))
        pipe.close()

    def poll(self) -> tuple[list[tuple[str, float, str]], int | None]:
        """New output since the last poll, and the exit code once all output is read."""
        code = self._proc.poll() if self._proc is not None else None
        if code is not None:
            for t in self._readers:
                t.join()
        with self._lock:
            lines, self._lines = self._lines, []
        return lines, code

    def stop(self) -> None:
        proc = self._proc
        if proc is None or proc.poll() is not None:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                proc.wait(timeout=STOP_GRACE_S)
                return
            except subprocess.TimeoutExpired:
                continue


class Driver:
    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.replicas: list[dict[str, Any]] = []
        for role in config["roles"]:
            for k, rep in enumerate(role["replicas"]):
                self.replicas.append({"role": role, "k": k, "argv": rep["argv"], "env": rep["env"]})
        self.states = ["PENDING"] * len(self.replicas)
        self.exits: list[int | None] = [None] * len(self.replicas)
        self.hosts = [""] * len(self.replicas)
        self.stderr_tails: list[deque[str]] = [
            deque(maxlen=STDERR_TAIL_LINES) for _ in self.replicas
        ]
        self.retries: dict[str, int] = {r["name"]: 0 for r in config["roles"]}
        self.restarts = 0
        self.stopping = False

    def report(self, state: str, error: str = "", reason: str = "") -> None:
        emit(
            {
                "ev": "state",
                "state": state,
                "restarts": self.restarts,
                "error": error,
                "reason": reason,
                "replicas": [
                    {
                        "r": rep["role"]["name"],
                        "k": rep["k"],
                        "state": self.states[i],
                        "exit": self.exits[i],
                        "host": self.hosts[i],
                    }
                    for i, rep in enumerate(self.replicas)
                ],
            }
        )

    def _on_sigterm(self, signum: int, frame: object) -> None:
        self.stopping = True

    def run(self) -> int:
        # Ray would otherwise ship the cwd of any `uv run` above the cluster's processes as a
        # second working dir (slow, and not what the app asked for); read at ray's import.
        os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
        import importlib

        ray: Any = importlib.import_module("ray")
        from ray.util.placement_group import placement_group, remove_placement_group
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        signal.signal(signal.SIGTERM, self._on_sigterm)
        ray.init(logging_level=logging.WARNING, log_to_driver=False)
        self.report("PENDING")
        bundles = [self._bundle(rep["role"]) for rep in self.replicas]
        pg = placement_group(bundles, strategy=self.config["placement_strategy"])
        ready = pg.ready()
        waited, said = 0, ""
        while not ray.wait([ready], timeout=0.2)[0]:
            if self.stopping:
                return self._cancelled([])
            waited += 1
            if waited % 5 == 0:  # about once a second, say why it still waits
                reason = _placement_reason(pg, bundles)
                if reason != said:
                    said = reason
                    self.report("PENDING", reason=reason)
        actor_cls: Any = ray.remote(ReplicaProcess)
        actors = [
            actor_cls.options(
                num_cpus=bundles[i].get("CPU", 0),
                num_gpus=bundles[i].get("GPU", 0),
                memory=bundles[i].get("memory"),
                scheduling_strategy=PlacementGroupSchedulingStrategy(pg, i),
            ).remote()
            for i in range(len(bundles))
        ]
        try:
            self.hosts = ray.get([a.host.remote() for a in actors])
            return self._supervise(ray, actors)
        finally:
            ray.get([a.stop.remote() for a in actors])
            remove_placement_group(pg)

    def _bundle(self, role: dict[str, Any]) -> dict[str, float]:
        bundle: dict[str, float] = {"CPU": float(role["num_cpus"])}
        if role["num_gpus"] > 0:
            bundle["GPU"] = float(role["num_gpus"])
        if role["memory"] > 0:
            bundle["memory"] = float(role["memory"])
        return bundle

    def _start(self, ray: Any, actors: list[Any], which: list[int]) -> None:
        port = ray.get(actors[0].free_port.remote())
        calls = []
        for i in which:
            rep = self.replicas[i]
            role = rep["role"]
            n = len(role["replicas"])
            defaults = launch_defaults(
                master_addr=self.hosts[0], master_port=port, rank=rep["k"], world_size=n
            )
            defaults["TORCHX_RAY_RESTARTS"] = str(self.restarts)
            env = replica_env(
                rep["env"],
                app_id=str(self.config.get("app_id", "")),
                role_name=role["name"],
                replica_id=str(rep["k"]),
                rank0_host=self.hosts[0],
                defaults=defaults,
            )
            self.states[i] = "RUNNING"
            self.exits[i] = None
            calls.append(actors[i].start.remote(rep["argv"], env))
        ray.get(calls)

    def _supervise(self, ray: Any, actors: list[Any]) -> int:
        self._start(ray, actors, list(range(len(actors))))
        self.report("RUNNING")
        while True:
            if self.stopping:
                return self._cancelled(actors)
            results = ray.get([a.poll.remote() for a in actors])
            failed: int | None = None
            changed = False
            for i, (lines, code) in enumerate(results):
                rep = self.replicas[i]
                for stream, t, text in lines:
                    if stream == "e":
                        self.stderr_tails[i].append(text.rstrip("\n"))
                    emit(
                        {"ev": "log", "r": rep["role"]["name"], "k": rep["k"], "s": stream}
                        | {"t": t, "l": text}
                    )
                if code is None or self.states[i] != "RUNNING":
                    continue
                changed = True
                self.exits[i] = exit_code(code)
                self.states[i] = "SUCCEEDED" if code == 0 else "FAILED"
                if code != 0 and failed is None:
                    failed = i
            if failed is not None:
                restart = self._restart_scope(failed)
                if restart is None:
                    return self._failed(actors, failed)
                self.report("RUNNING")
                for i in restart:
                    ray.get(actors[i].stop.remote())
                self.restarts += 1
                self._start(ray, actors, restart)
                self.report("RUNNING")
                continue
            if changed:
                if all(s == "SUCCEEDED" for s in self.states):
                    self.report("SUCCEEDED")
                    return 0
                self.report("RUNNING")
            time.sleep(POLL_INTERVAL_S)

    def _restart_scope(self, failed: int) -> list[int] | None:
        """The replicas to start again after ``failed`` failed, or None when out of retries."""
        role = self.replicas[failed]["role"]
        if self.retries[role["name"]] >= role["max_retries"]:
            return None
        self.retries[role["name"]] += 1
        if role["retry_policy"] == "REPLICA":
            return [failed]
        if role["retry_policy"] == "ROLE":
            return [i for i, r in enumerate(self.replicas) if r["role"] is role]
        return list(range(len(self.replicas)))

    def _failed(self, actors: list[Any], failed: int) -> int:
        import ray

        ray.get([a.stop.remote() for a in actors])
        for i, s in enumerate(self.states):
            if s == "RUNNING":
                self.states[i] = "CANCELLED"
        rep = self.replicas[failed]
        code = self.exits[failed] or 1
        tail = "\n".join(self.stderr_tails[failed])
        error = f"replica {rep['role']['name']}/{rep['k']} exited with code {code}"
        if tail:
            error += f"; last lines of its stderr:\n{tail}"
        self.report("FAILED", error)
        return code

    def _cancelled(self, actors: list[Any]) -> int:
        if actors:
            import ray

            ray.get([a.stop.remote() for a in actors])
        self.states = ["CANCELLED" if s in ("PENDING", "RUNNING") else s for s in self.states]
        self.report("CANCELLED")
        return 128 + signal.SIGTERM


def _placement_reason(pg: Any, bundles: list[dict[str, float]]) -> str:
    """Ray's own word for why the placement group waits (its scheduling state), with
    what it asks for."""
    try:
        from ray.util import placement_group_table

        table = placement_group_table(pg)
    except Exception:
        return ""
    stats = table.get("stats") or {}
    state = str(stats.get("scheduling_state") or table.get("state") or "")
    total: dict[str, float] = {}
    for b in bundles:
        for key, value in b.items():
            total[key] = total.get(key, 0.0) + value
    wanted = ", ".join(f"{k}={v:g}" for k, v in sorted(total.items()))
    return f"placement group {state} (asks for {wanted})" if state else ""


def main() -> int:
    config = config_from_command_line(__name__)
    return 2 if config is None else Driver(config).run()


if __name__ == "__main__":
    sys.exit(main())
