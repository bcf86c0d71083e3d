"""``Tee``: copy what is written to several files (or pipes) into one writer."""

from __future__ import annotations

import os
import threading
import time
from typing import BinaryIO

_CHUNK = 64 * 1024
_IDLE_S = 0.05


class Tee:
    """Copies everything written to each of ``sources`` (paths of files or FIFOs that
    others write, e.g. a subprocess's stdout file) into ``out``, on a background thread.

    ``write`` also writes to ``out`` directly. Writes from different sources are not
    ordered against each other. ``close()`` copies what is left, then closes the sources
    and ``out``; a Tee must be closed.
    """

    def __init__(self, out: BinaryIO, *sources: str) -> None:
        if not sources:
            raise ValueError("Tee: give at least one source path")
        self.out = out
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self.streams: list[BinaryIO] = []
        for path in sources:
            f = open(path, "rb", buffering=0)  # noqa: SIM115 -- closed by close()
            os.set_blocking(f.fileno(), False)
            self.streams.append(f)
        self._thread = threading.Thread(target=self._copy, name="torchx-tee", daemon=True)
        self._thread.start()

    def _copy(self) -> None:
        while True:
            # Read the closing flag before draining, so a write made before close() is copied.
            closing = self._closing.is_set()
            copied = False
            for f in self.streams:
                data = f.read(_CHUNK)
                if data:
                    copied = True
                    self.write(data)
            if not copied:
                if closing:
                    return
                time.sleep(_IDLE_S)

    def write(self, s: bytes) -> int:
        with self._lock:
            return self.out.write(s)

    def close(self) -> None:
        if self._closing.is_set():
            return
        self._closing.set()
        self._thread.join()
        with self._lock:
            for f in self.streams:
                f.close()
            self.out.close()


__all__ = ["Tee"]
