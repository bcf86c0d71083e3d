"""What the local scheduler tests ask the OS about processes (Linux ``/proc``)."""

from __future__ import annotations


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live (not zombie) process, asked of the OS."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return False
    return data[data.rindex(b")") + 2 :].split()[0] not in (b"Z", b"X")
