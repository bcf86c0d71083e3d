"""AppDef, Role and Resource: the data that describes an app, independent of any scheduler."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from torchx.specs._dryrun import AppDryRunInfo
from torchx.specs._errors import SpecsError
from torchx.specs._mounts import BindMount, DeviceMount, Mount, VolumeMount


@dataclass
class Resource:
    """What one replica of a role needs.

    ``cpu`` is in (possibly fractional) cores, ``memMB`` in MiB. ``capabilities`` carries
    scheduler-specific constraints (an instance type, a node label); ``devices`` asks for
    named devices by count (``{"vpc.amazonaws.com/efa": 4}``).
    """

    cpu: float
    gpu: int
    memMB: int
    capabilities: dict[str, Any] = field(default_factory=dict)
    devices: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # ``capabilities=None`` (a component forwarding its optional argument) means none
        # on every scheduler (0.7's kubernetes scheduler failed on it); store {} so no
        # scheduler sees None.
        if self.capabilities is None:
            self.capabilities = {}

    @staticmethod
    def copy(original: Resource, **capabilities: Any) -> Resource:
        """A copy of ``original`` with ``capabilities`` merged over its own."""
        return Resource(
            cpu=original.cpu,
            gpu=original.gpu,
            memMB=original.memMB,
            capabilities={**original.capabilities, **capabilities},
            devices=dict(original.devices),
        )


# pytorch/torchx's docs/source/basics.rst ("Basics") writes ``specs.Resources``; both
# names refer to the same class.
Resources = Resource

# Markers pytorch/torchx defines as plain strings: a field not set yet, and "every
# replica" (``torchx log`` and scheduler filters).
MISSING = "<MISSING>"
ALL = "all"

# "No explicit request": schedulers read -1 as "use your own default".
NULL_RESOURCE = Resource(cpu=-1, gpu=-1, memMB=-1)


class RetryPolicy(str, Enum):
    """What is restarted when a replica fails and retries remain.

    REPLICA restarts only the failed replica, ROLE every replica of its role, APPLICATION
    every replica of every role.
    """

    REPLICA = "REPLICA"
    APPLICATION = "APPLICATION"
    ROLE = "ROLE"


@dataclass
class Role:
    """A set of identical replicas running the same command in the same image."""

    name: str
    image: str
    entrypoint: str = MISSING
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    num_replicas: int = 1
    min_replicas: int | None = None
    max_retries: int = 0
    retry_policy: RetryPolicy = RetryPolicy.APPLICATION
    resource: Resource = field(default_factory=lambda: Resource.copy(NULL_RESOURCE))
    port_map: dict[str, int] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    mounts: list[Mount] = field(default_factory=list)
    # Kept so that Role(..., base_image=...) written for pytorch/torchx still builds;
    # no scheduler reads it (pytorch/torchx deprecated it too).
    base_image: str | None = None

    def pre_proc(self, scheduler: str, dryrun_info: AppDryRunInfo[Any]) -> AppDryRunInfo[Any]:
        """A hook a Role subclass may override to edit a scheduler's request for it: each
        role's, in order, once per dry run; the info returned is the one used. ``scheduler``
        is the scheduler's backend as pytorch/torchx 0.7 gave it: ``"local"`` for local_cwd,
        ``"docker"`` for local_docker, else its ``backend`` (``"slurm"``, a plug-in's)."""
        return dryrun_info

    def __post_init__(self) -> None:
        if isinstance(self.args, (str, bytes)):
            # list("hello") would run the program with the arguments h e l l o
            raise SpecsError(
                f"role {self.name!r} args",
                self.args,
                f"give a list of arguments, e.g. args={[self.args]!r}",
            )
        # Components commonly forward ``*args`` (a tuple) or a generator; store a list so
        # the role can be edited and compared like any other.
        if not isinstance(self.args, list):
            self.args = list(self.args if isinstance(self.args, Iterable) else [self.args])
        if self.mounts is None:  # ``mounts=None`` forwarded by a component means none
            self.mounts = []
        if not isinstance(self.env, dict) and isinstance(self.env, Mapping):
            self.env = dict(self.env)
        if isinstance(self.retry_policy, str) and not isinstance(self.retry_policy, RetryPolicy):
            try:
                self.retry_policy = RetryPolicy(self.retry_policy.upper())
            except ValueError:
                raise SpecsError(
                    f"role {self.name!r} retry_policy",
                    self.retry_policy,
                    "use one of " + ", ".join(p.value for p in RetryPolicy),
                ) from None


@dataclass
class AppDef:
    """An application: a name and one or more roles (e.g. a coordinator and its workers)."""

    name: str
    roles: list[Role] = field(default_factory=list)
    metadata: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.roles, list):
            if not isinstance(self.roles, Iterable) or isinstance(self.roles, (str, bytes)):
                raise SpecsError(
                    f"app {self.name!r} roles", self.roles, "give a list of Role objects"
                )
            self.roles = list(self.roles)


__all__ = [
    "ALL",
    "MISSING",
    "NULL_RESOURCE",
    "AppDef",
    "BindMount",
    "DeviceMount",
    "Resource",
    "Resources",
    "RetryPolicy",
    "Role",
    "VolumeMount",
]
