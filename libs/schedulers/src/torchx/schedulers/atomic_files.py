"""Writing a JSON file so that a reader sees the old file or the new one, never half of one.

Shared by the schedulers' app state and the runner's sweep records; ``mode`` makes a file
no one else may read (a sweep record holds the scheduler's parameters).
"""

from __future__ import annotations

from torchx.schedulers._local_state_files import write_atomic

__all__ = ["write_atomic"]
