"""Named resources: ``resource(h="gpu.small")`` instead of spelling out cpu, gpu and memory.

Built-in names are generic sizes (``cpu.*``, ``gpu.*``) and common cloud GPU instance types.
Packages add their own through the ``torchx.named_resources`` entry-point group: each entry
point names a zero-argument callable that returns a ``Resource``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from torchx.specs._app import NULL_RESOURCE, Resource
from torchx.specs._errors import SpecsError, close_matches, closest

GiB = 1024  # in MiB, the unit of Resource.memMB
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
EFA_DEVICE = "vpc.amazonaws.com/efa"
NEURON_DEVICE = "aws.amazon.com/neurondevice"
# An AWS instance's usable memory is a little below its published size (the OS and the
# agents keep some): requests are sized at 96% so that a job asking for a whole instance
# still fits on one, as with pytorch/torchx.
AWS_MEM_TAX = 0.96
AWS_GiB = int(GiB * AWS_MEM_TAX)


def _sized(cpu: float, gpu: int, mem_mb: int) -> Callable[[], Resource]:
    return lambda: Resource(cpu=cpu, gpu=gpu, memMB=mem_mb)


def _instance(
    name: str, cpu: int, gpu: int, mem_mb: int, devices: dict[str, int] | None = None
) -> Callable[[], Resource]:
    return lambda: Resource(
        cpu=cpu,
        gpu=gpu,
        memMB=mem_mb,
        capabilities={INSTANCE_TYPE: name},
        devices=dict(devices or {}),
    )


# Generic sizes, the same as pytorch/torchx's so that a job asks for what it asked before.
GENERIC: dict[str, Callable[[], Resource]] = {
    "gpu.small": _sized(8, 1, 32 * GiB),
    "gpu.medium": _sized(16, 2, 64 * GiB),
    "gpu.large": _sized(32, 4, 128 * GiB),
    "gpu.xlarge": _sized(64, 8, 256 * GiB),
    "cpu.nano": _sized(1, 0, 512),
    "cpu.micro": _sized(1, 0, 1 * GiB),
    "cpu.small": _sized(1, 0, 2 * GiB),
    "cpu.medium": _sized(2, 0, 4 * GiB),
    "cpu.large": _sized(2, 0, 8 * GiB),
    "cpu.xlarge": _sized(8, 0, 32 * GiB),
}

# AWS instance types: vCPU, GPU, published memory (GiB), devices.
_AWS: dict[str, tuple[int, int, int, dict[str, int]]] = {
    "t3.medium": (2, 0, 4, {}),
    "m5.2xlarge": (8, 0, 32, {}),
    "p3.2xlarge": (8, 1, 61, {}),
    "p3.8xlarge": (32, 4, 244, {}),
    "p3.16xlarge": (64, 8, 488, {}),
    "p3dn.24xlarge": (96, 8, 768, {EFA_DEVICE: 1}),
    "p4d.24xlarge": (96, 8, 1152, {EFA_DEVICE: 4}),
    "p4de.24xlarge": (96, 8, 1152, {EFA_DEVICE: 4}),
    "p5.48xlarge": (192, 8, 2048, {EFA_DEVICE: 32}),
    "g4dn.xlarge": (4, 1, 16, {}),
    "g4dn.2xlarge": (8, 1, 32, {}),
    "g4dn.4xlarge": (16, 1, 64, {}),
    "g4dn.8xlarge": (32, 1, 128, {EFA_DEVICE: 1}),
    "g4dn.12xlarge": (48, 4, 192, {EFA_DEVICE: 1}),
    "g4dn.16xlarge": (64, 1, 256, {EFA_DEVICE: 1}),
    "g4dn.metal": (96, 8, 384, {EFA_DEVICE: 1}),
    "g5.xlarge": (4, 1, 16, {}),
    "g5.2xlarge": (8, 1, 32, {}),
    "g5.4xlarge": (16, 1, 64, {}),
    "g5.8xlarge": (32, 1, 128, {EFA_DEVICE: 1}),
    "g5.12xlarge": (48, 4, 192, {EFA_DEVICE: 1}),
    "g5.16xlarge": (64, 1, 256, {EFA_DEVICE: 1}),
    "g5.24xlarge": (96, 4, 384, {EFA_DEVICE: 1}),
    "g5.48xlarge": (192, 8, 768, {EFA_DEVICE: 1}),
    "trn1.2xlarge": (8, 0, 32, {NEURON_DEVICE: 1}),
    "trn1.32xlarge": (128, 0, 512, {EFA_DEVICE: 8, NEURON_DEVICE: 16}),
}

# Keyed ``aws_<instance type>`` as in pytorch/torchx.
AWS: dict[str, Callable[[], Resource]] = {
    f"aws_{name}": _instance(name, cpu, gpu, mem * AWS_GiB, devices)
    for name, (cpu, gpu, mem, devices) in _AWS.items()
}

# Other clouds: vCPU / GPU / memory (GiB) as published by each provider.
_OTHER_CLOUDS: dict[str, tuple[int, int, float]] = {
    # Google Cloud
    "a2-highgpu-1g": (12, 1, 85),
    "a2-highgpu-8g": (96, 8, 680),
    "a3-highgpu-8g": (208, 8, 1872),
    # Azure
    "Standard_NC24ads_A100_v4": (24, 1, 220),
    "Standard_ND96asr_v4": (96, 8, 900),
}

_BUILTIN: dict[str, Callable[[], Resource]] = {
    **GENERIC,
    **AWS,
    # The bare instance type (``p4d.24xlarge``) is an alias of ``aws_p4d.24xlarge``.
    **{name.removeprefix("aws_"): factory for name, factory in AWS.items()},
    **{
        name: _instance(name, cpu, gpu, int(mem_gib * GiB))
        for name, (cpu, gpu, mem_gib) in _OTHER_CLOUDS.items()
    },
    # pytorch/torchx's names for "no explicit request".
    "NULL": lambda: Resource.copy(NULL_RESOURCE),
    "MISSING": lambda: Resource.copy(NULL_RESOURCE),
}


# Plug-in names listed in the hint of an unknown name; the rest are counted.
MAX_HINT_PLUGIN_NAMES = 10


def _hint(name: str, known: Mapping[str, object]) -> str:
    """The names near ``name``; without any, the generic sizes, the count of built-in cloud
    instance types (the first 12 names in order would be NULL, MISSING and those, which a
    first try rarely wants) and the names plug-ins added, which the user most likely meant."""
    asked = [n for n in known if n not in ("NULL", "MISSING")]  # "no request", not a size
    if close_matches(name, asked):
        return closest(name, asked)
    clouds = sum(1 for n in _BUILTIN if n not in GENERIC and n not in ("NULL", "MISSING"))
    hint = f"known: {', '.join(GENERIC)}, {clouds} cloud instance types"
    plugins = [n for n in asked if n not in _BUILTIN]
    if plugins:
        shown = ", ".join(plugins[:MAX_HINT_PLUGIN_NAMES])
        more = len(plugins) - MAX_HINT_PLUGIN_NAMES
        hint += f" and from plug-ins {shown}" + (f" and {more} more" if more > 0 else "")
    return hint + " (list(torchx.specs.named_resources) names them all)"


class UnknownNamedResourceError(SpecsError, KeyError):
    """No named resource has this name. Also a KeyError, which is what pytorch/torchx's
    ``named_resources[name]`` raised, so either ``except`` works."""

    def __str__(self) -> str:
        return BaseException.__str__(self)  # the message as is, not quoted as by KeyError


class _NamedResources(Mapping[str, Resource]):
    """Lazily merges the built-in names with the entry-point group on first lookup."""

    def __init__(self) -> None:
        self._factories: dict[str, Callable[[], Resource]] | None = None

    def _load(self) -> dict[str, Callable[[], Resource]]:
        if self._factories is None:
            from importlib.metadata import entry_points  # not on the import path of specs

            factories = dict(_BUILTIN)
            for ep in entry_points(group="torchx.named_resources"):
                try:
                    factories[ep.name] = ep.load()
                except Exception as e:  # one broken plug-in must not hide the other names
                    import logging

                    logging.getLogger("torchx.specs").warning(
                        "torchx: skipping named resource %r (%s): %s: %s",
                        ep.name,
                        ep.value,
                        type(e).__name__,
                        e,
                    )
            self._factories = factories
        return self._factories

    def __getitem__(self, name: str) -> Resource:
        factories = self._load()
        if not isinstance(name, str):  # closest() compares text: say what a name is instead
            raise UnknownNamedResourceError(
                "named resource", name, "give its name as a str, e.g. 'gpu.small'"
            )
        if name not in factories:
            raise UnknownNamedResourceError("named resource", name, _hint(name, factories))
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


def get_named_resources(res: str) -> Resource:
    """The Resource registered as ``res`` (a fresh copy each call)."""
    return named_resources[res]


def resource(
    cpu: float | None = None,
    gpu: int | None = None,
    memMB: int | None = None,
    h: str | None = None,
) -> Resource:
    """A Resource from explicit sizes, or from a named resource ``h``.

    ``h`` wins over the explicit sizes when both are given, so components can pass their
    user's ``--h`` straight through together with defaults. A size left out (or 0, as
    pytorch/torchx reads it) takes the default: 2 cpus, no gpu, 1024 MiB.
    """
    if h:
        return get_named_resources(h)
    return Resource(cpu=cpu or 2, gpu=gpu or 0, memMB=memMB or 1024)
