"""The job entrypoint for a one-replica app: the replica's command as a plain subprocess.

``python -m torchx.schedulers._ray_direct CONFIG_JSON`` (or the config in
``TORCHX_RAY_DRIVER_CONFIG``) takes the same config as ``_ray_driver`` but with exactly one
role of one replica. Ray already reserved that replica's resources for this process
(``submit_job``'s ``entrypoint_num_cpus`` / ``entrypoint_num_gpus`` / ``entrypoint_memory``),
so there is nothing to place: no ``import ray``, no ``ray.init``, no placement group, no
actor. What it prints is what ``_ray_driver`` prints (``TORCHX_EVENT`` lines), so the
scheduler reads both kinds of job the same way.

It imports the standard library only, and only the cheap parts of it: this module's start-up
is on the path of every one-replica app.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque

from torchx.schedulers._replica_env import launch_defaults, replica_env

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs more to import than the rest of this module together
    from collections.abc import Iterator
    from typing import IO, Any

CONFIG_ENV = "TORCHX_RAY_DRIVER_CONFIG"
EVENT_PREFIX = "TORCHX_EVENT "
STDERR_TAIL_LINES = 10
# Ray kills a stopped job's processes after a few seconds; the replica gets less than that.
STOP_GRACE_S = 1.0
# A replica's output is relayed in pieces of at most this many bytes: a line without an end
# (a progress bar redrawn with \r, binary output) must not grow the driver's memory, nor
# one log event, with its length.
LINE_PIECE_BYTES = 64 * 1024
# Ray sets it, for the job's entrypoint, to the cluster's GCS address (HOST:PORT).
GCS_ADDRESS_ENV = "RAY_ADDRESS"

_print_lock = threading.Lock()


def emit(event: dict[str, object]) -> None:
    """Print ``event`` as one structured line. Every event's first key is ``ev`` (its
    kind): a reader picks the kind it wants from the line's start."""
    if next(iter(event), None) != "ev":
        raise ValueError(f"an event's first key must be 'ev', not in {sorted(event)}")
    line = EVENT_PREFIX + json.dumps(event, separators=(",", ":")) + "\n"
    with _print_lock:  # the two output readers and the main thread share stdout
        sys.stdout.write(line)
        sys.stdout.flush()


def exit_code(code: int) -> int:
    """A shell-style exit code: death by signal N reads as 128+N."""
    return 128 - code if code < 0 else code


def output_pieces(pipe: IO[bytes]) -> Iterator[str]:
    """The pipe's output as text, line by line, a line longer than ``LINE_PIECE_BYTES`` in
    pieces; a character cut between two pieces is decoded whole, in the later one."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    for raw in iter(lambda: pipe.readline(LINE_PIECE_BYTES), b""):
        text = decoder.decode(raw)
        if text:
            yield text
    rest = decoder.decode(b"", final=True)
    if rest:
        yield rest


def node_address() -> str:
    """This node's address as the cluster sees it, found without asking Ray.

    The interface a datagram to the GCS would leave from is the one the other nodes reach
    this node on (no packet is sent).
    """
    gcs = os.environ.get(GCS_ADDRESS_ENV, "")
    host = gcs.rsplit(":", 1)[0] if ":" in gcs and "://" not in gcs else ""
    if host:
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.connect((host, 1))
                return str(s.getsockname()[0])
        except OSError:
            pass
    return "127.0.0.1"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("", 0))
        return int(s.getsockname()[1])


class DirectDriver:
    """Runs one replica's command, restarting it up to ``max_retries`` times."""

    def __init__(
        self, role: str, argv: list[str], env: dict[str, str], max_retries: int, app_id: str = ""
    ) -> None:
        self.app_id = app_id
        self.role = role
        self.argv = argv
        self.env = env
        self.max_retries = max_retries
        self.host = node_address()
        self.state = "PENDING"
        self.exit: int | None = None
        self.restarts = 0
        self.stderr_tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self.stopping = False
        self.proc: subprocess.Popen[bytes] | None = None

    def report(self, state: str, error: str = "") -> None:
        emit(
            {
                "ev": "state",
                "state": state,
                "restarts": self.restarts,
                "error": error,
                "replicas": [
                    {
                        "r": self.role,
                        "k": 0,
                        "state": self.state,
                        "exit": self.exit,
                        "host": self.host,
                    }
                ],
            }
        )

    def _on_stop(self, signum: int, frame: object) -> None:
        self.stopping = True
        self._signal_replica(signal.SIGTERM)
        # The command may ignore SIGTERM; Ray's own SIGKILL would then come before our report.
        timer = threading.Timer(STOP_GRACE_S, self._signal_replica, (signal.SIGKILL,))
        timer.daemon = True
        timer.start()

    def _signal_replica(self, sig: int) -> None:
        proc = self.proc
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, sig)

    def run(self) -> int:
        signal.signal(signal.SIGTERM, self._on_stop)
        signal.signal(signal.SIGINT, self._on_stop)  # RAY_JOB_STOP_SIGNAL=SIGINT
        while True:
            code = self._run_once()
            if self.stopping:
                self.state = "CANCELLED"
                self.report("CANCELLED")
                return 128 + signal.SIGTERM
            self.exit = code
            self.state = "SUCCEEDED" if code == 0 else "FAILED"
            if code == 0:
                self.report("SUCCEEDED")
                return 0
            if self.restarts >= self.max_retries:
                return self._failed(code)
            # Any retry policy restarts this replica: with one replica they all agree.
            self.report("RUNNING")
            self.restarts += 1

    def _run_once(self) -> int:
        env = {k: v for k, v in os.environ.items() if k != CONFIG_ENV}
        defaults = launch_defaults(
            master_addr=self.host, master_port=free_port(), rank=0, world_size=1
        )
        defaults["TORCHX_RAY_RESTARTS"] = str(self.restarts)
        env.update(
            replica_env(
                self.env,
                app_id=self.app_id,
                role_name=self.role,
                replica_id="0",
                rank0_host=self.host,
                defaults=defaults,
            )
        )
        self.stderr_tail.clear()
        self.proc = proc = subprocess.Popen(
            self.argv,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # so a stop reaches the command's own children too
        )
        if self.stopping:  # stopped while it was starting
            self._signal_replica(signal.SIGKILL)
        self.state, self.exit = "RUNNING", None
        self.report("RUNNING")
        readers = [
            threading.Thread(target=self._relay, args=(proc.stdout, "o"), daemon=True),
            threading.Thread(target=self._relay, args=(proc.stderr, "e"), daemon=True),
        ]
        for t in readers:
            t.start()
        code = proc.wait()
        for t in readers:
            t.join()
        return exit_code(code)

    def _relay(self, pipe: IO[bytes], stream: str) -> None:
        for text in output_pieces(pipe):
            if stream == "e":
                self.stderr_tail.append(text.rstrip("\n"))
            emit({"ev": "log", "r": self.role, "k": 0, "s": stream, "t": time.time(), "l": text})
        pipe.close()

    def _failed(self, code: int) -> int:
        error = f"replica {self.role}/0 exited with code {code}"
        if self.stderr_tail:
            error += "; last lines of its stderr:\n" + "\n".join(self.stderr_tail)
        self.report("FAILED", error)
        return code


def driver_from_config(config: dict[str, Any]) -> DirectDriver:
    roles = config["roles"]
    if len(roles) != 1 or len(roles[0]["replicas"]) != 1:
        raise ValueError("the direct driver runs apps of one role with one replica")
    (role,) = roles
    (replica,) = role["replicas"]
    return DirectDriver(
        str(role["name"]),
        [str(a) for a in replica["argv"]],
        {str(k): str(v) for k, v in replica["env"].items()},
        int(role["max_retries"]),
        app_id=str(config.get("app_id", "")),
    )


def config_from_command_line(module: str) -> dict[str, Any] | None:
    """The job's config, given as the first argument or, when too long for one, in
    ``CONFIG_ENV``; None, after printing how ``module`` is run, when it is in neither."""
    raw = sys.argv[1] if len(sys.argv) > 1 else os.environ.get(CONFIG_ENV)
    if not raw:
        print(f"usage: {module} CONFIG_JSON (or set {CONFIG_ENV}); the ray scheduler runs it")
        return None
    config: dict[str, Any] = json.loads(raw)
    return config


def main() -> int:
    config = config_from_command_line(__name__)
    return 2 if config is None else driver_from_config(config).run()


if __name__ == "__main__":
    sys.exit(main())
