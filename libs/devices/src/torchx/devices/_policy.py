"""What a scope does when it names a GPU this machine does not have."""

from __future__ import annotations

import os
from typing import Literal

MissingGPUPolicy = Literal["error", "cpu"]

POLICIES: tuple[MissingGPUPolicy, ...] = ("error", "cpu")
ENV_VAR = "TORCHX_MISSING_GPU"

_default: MissingGPUPolicy | None = None


def check_policy(value: object, field: str) -> MissingGPUPolicy:
    if value not in POLICIES:
        raise ValueError(f"{field}={value!r} is not a missing-GPU policy; accepted: 'error', 'cpu'")
    return value


def set_missing_gpu_policy(policy: MissingGPUPolicy) -> None:
    """Set the process-wide policy used by scopes that do not pass ``on_missing_gpu``.

    When the GPU or other accelerator (cuda, mps, xpu) a scope asks for is missing,
    ``"error"`` (the default) raises :class:`DeviceUnavailableError`; ``"cpu"`` runs the scope
    on the CPU and emits a :class:`GPUFallbackWarning`. The environment variable
    ``TORCHX_MISSING_GPU`` sets the same default without touching code.
    """
    global _default
    _default = check_policy(policy, "policy")


def get_missing_gpu_policy() -> MissingGPUPolicy:
    """The policy scopes use when they do not pass ``on_missing_gpu``."""
    if _default is not None:
        return _default
    from_env = os.environ.get(ENV_VAR)
    if from_env is None or from_env == "":
        return "error"
    return check_policy(from_env, ENV_VAR)


def reset_missing_gpu_policy() -> None:
    """Forget any policy set in code, so the environment variable (or ``"error"``) applies again."""
    global _default
    _default = None
