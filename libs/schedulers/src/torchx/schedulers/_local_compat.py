"""pytorch/torchx 0.7's names in ``local_scheduler``: its output file names, typed run
options, process protocol, and ``LogIterator`` (one replica's output file, followed)."""

from __future__ import annotations

import os
import time
import typing
from collections.abc import Iterator
from typing import Any

from torchx.schedulers._api import Scheduler
from torchx.schedulers._bounded_lines import FOLLOW_INTERVAL_S, bounded_lines
from torchx.schedulers._local_request import LocalReplicaParams, LocalRequest
from torchx.schedulers._local_state_files import STREAM_FILES
from torchx.specs import is_terminal

# Each replica's output files, in <log_dir>/<session>/<app_id>/<role>/<replica>/ as in 0.7.
STDOUT_LOG = STREAM_FILES["stdout"]
STDERR_LOG = STREAM_FILES["stderr"]
COMBINED_LOG = STREAM_FILES["combined"]
NA = "<N/A>"
NONE = "<NONE>"
ENV_CUDA_VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES"
# 0.7's names for a replica's launch parameters and the whole launch request.
ReplicaParam = LocalReplicaParams
PopenRequest = LocalRequest


class LocalOpts(typing.TypedDict, total=False):
    """The local_cwd run options, typed."""

    log_dir: str
    cwd: str
    auto_set_cuda_visible_devices: bool
    prepend_cwd: bool
    cancel_grace_seconds: float
    max_requeues: int
    workspace: str


@typing.runtime_checkable
class PopenProtocol(typing.Protocol):
    """What a started replica process offers (``subprocess.Popen`` has all of it)."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def poll(self) -> int | None: ...

    def kill(self) -> None: ...

    def terminate(self) -> None: ...


class SignalException(Exception):
    """A process was told to stop by signal ``sigval`` (a ``signal.Signals``)."""

    def __init__(self, msg: str, sigval: Any) -> None:
        super().__init__(msg)
        self.sigval = sigval


def _raise_signal_exception(signum: int, frame: object) -> None:
    import signal

    sigval = signal.Signals(signum)
    raise SignalException(f"process {os.getpid()} got {sigval.name}", sigval=sigval)


def raise_on_sigterm() -> None:
    """Make SIGTERM raise ``SignalException`` in this process, as 0.7's local scheduler did,
    so code that launched apps can clean up (``except SignalException``) before it exits.

    Only from the main thread (Python runs handlers there), and only while SIGTERM has its
    default action: a handler the program installed itself is left alone. SIGINT stays
    ``KeyboardInterrupt``.
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _raise_signal_exception)


class LogIterator:
    """The lines of ``log_file``, one replica's output file of app ``app_id``.

    With ``should_tail`` it follows the file until ``scheduler`` reports the app ended,
    then reads what is left; a file that never appears before the app ends is a
    ``RuntimeError`` naming it. Lines keep their ``\\n``; one over 1 MiB comes in
    pieces, so memory stays bounded whatever the file holds.
    """

    def __init__(
        self,
        app_id: str,
        log_file: str,
        scheduler: Scheduler[Any],
        should_tail: bool = True,
    ) -> None:
        self.app_id = app_id
        self.log_file = log_file
        self.scheduler = scheduler
        self.should_tail = should_tail

    def _ended(self) -> bool:
        if not self.should_tail:
            return True
        desc = self.scheduler.describe(self.app_id)
        return desc is None or is_terminal(desc.state)

    def __iter__(self) -> Iterator[str]:
        while not os.path.isfile(self.log_file):
            if self._ended():
                raise RuntimeError(f"app {self.app_id} ended without writing {self.log_file}")
            time.sleep(FOLLOW_INTERVAL_S)
        # bounded: a line over MAX_LINE_BYTES comes in pieces (see ``_bounded_lines``)
        with open(self.log_file, "rb") as f:
            for _, line in bounded_lines(f, ended=self._ended):
                yield line.decode("utf-8", "replace")
