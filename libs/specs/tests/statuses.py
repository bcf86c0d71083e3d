"""Statuses the specs tests print and raise."""

from __future__ import annotations

from torchx.specs import AppState, ReplicaStatus, RoleStatus


def failed_trainer(exit_code: int, error: str = "") -> RoleStatus:
    """A two-replica ``trainer`` role: replica 0 succeeded, replica 1 failed with ``exit_code``
    and the structured ``error``."""
    return RoleStatus(
        "trainer",
        [
            ReplicaStatus(0, AppState.SUCCEEDED, "trainer", exit_code=0),
            ReplicaStatus(
                1, AppState.FAILED, "trainer", exit_code=exit_code, structured_error_msg=error
            ),
        ],
    )
