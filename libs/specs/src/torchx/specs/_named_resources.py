"""Named resources: ``resource(h="gpu.small")`` instead of spelling out cpu, gpu and memory.

Built-in names are generic sizes (``cpu.*``, ``gpu.*``) and common cloud GPU instance types.
Packages add their own through the ``torchx.named_resources`` entry-point group: each entry
point names a zero-argument callable that returns a ``Resource``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from torchx.specs._app import Resource
from torchx.specs._errors import SpecsError, closest

GiB = 1024  # in MiB, the unit of Resource.memMB
INSTANCE_TYPE = "node.kubernetes.io/instance-type"


def _sized(cpu: float, gpu: int, mem_gib: float) -> Callable[[], Resource]:
    return lambda: Resource(cpu=cpu, gpu=gpu, memMB=int(mem_gib * GiB))


def _instance(name: str, cpu: int, gpu: int, mem_gib: float) -> Callable[[], Resource]:
    return lambda: Resource(
        cpu=cpu, gpu=gpu, memMB=int(mem_gib * GiB), capabilities={INSTANCE_TYPE: name}
    )


# vCPU / GPU / memory (GiB) as published by each provider.
_CLOUD: dict[str, tuple[int, int, float]] = {
    # AWS
    "g4dn.xlarge": (4, 1, 16),
    "g4dn.12xlarge": (48, 4, 192),
    "g5.xlarge": (4, 1, 16),
    "g5.12xlarge": (48, 4, 192),
    "g5.48xlarge": (192, 8, 768),
    "p3.2xlarge": (8, 1, 61),
    "p3.8xlarge": (32, 4, 244),
    "p3.16xlarge": (64, 8, 488),
    "p4d.24xlarge": (96, 8, 1152),
    "p5.48xlarge": (192, 8, 2048),
    # Google Cloud
    "a2-highgpu-1g": (12, 1, 85),
    "a2-highgpu-8g": (96, 8, 680),
    "a3-highgpu-8g": (208, 8, 1872),
    # Azure
    "Standard_NC24ads_A100_v4": (24, 1, 220),
    "Standard_ND96asr_v4": (96, 8, 900),
}

_BUILTIN: dict[str, Callable[[], Resource]] = {
    "cpu.nano": _sized(0.5, 0, 0.5),
    "cpu.small": _sized(1, 0, 2),
    "cpu.medium": _sized(2, 0, 8),
    "cpu.large": _sized(8, 0, 32),
    "cpu.xlarge": _sized(16, 0, 64),
    "gpu.small": _sized(8, 1, 32),
    "gpu.medium": _sized(16, 2, 64),
    "gpu.large": _sized(32, 4, 128),
    "gpu.xlarge": _sized(64, 8, 256),
    **{name: _instance(name, *shape) for name, shape in _CLOUD.items()},
}


class _NamedResources(Mapping[str, Resource]):
    """Lazily merges the built-in names with the entry-point group on first lookup."""

    def __init__(self) -> None:
        self._factories: dict[str, Callable[[], Resource]] | None = None

    def _load(self) -> dict[str, Callable[[], Resource]]:
        if self._factories is None:
            from importlib.metadata import entry_points  # not on the import path of specs

            factories = dict(_BUILTIN)
            for ep in entry_points(group="torchx.named_resources"):
                factories[ep.name] = ep.load()
            self._factories = factories
        return self._factories

    def __getitem__(self, name: str) -> Resource:
        factories = self._load()
        if name not in factories:
            raise SpecsError("named resource", name, closest(name, list(factories)))
        res = factories[name]()
        if not isinstance(res, Resource):
            raise TypeError(f"named resource {name!r} returned {type(res).__name__}, not Resource")
        return res

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())

    def __contains__(self, name: object) -> bool:
        return name in self._load()


named_resources = _NamedResources()


def get_named_resources(name: str) -> Resource:
    """The Resource registered as ``name`` (a fresh copy each call)."""
    return named_resources[name]


def resource(
    cpu: float | None = None,
    gpu: int | None = None,
    memMB: int | None = None,
    h: str | None = None,
) -> Resource:
    """A Resource from explicit sizes, or from a named resource ``h``.

    ``h`` wins over the explicit sizes when both are given, so components can pass their
    user's ``--h`` straight through together with defaults.
    """
    if h:
        return get_named_resources(h)
    return Resource(
        cpu=1 if cpu is None else cpu,
        gpu=0 if gpu is None else gpu,
        memMB=1024 if memMB is None else memMB,
    )
