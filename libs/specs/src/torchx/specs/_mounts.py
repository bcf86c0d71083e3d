"""Mounts a role asks for, and the docker-style ``type=bind,src=...,dst=...`` parser."""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import Enum

from torchx.specs._errors import SpecsError


class MountType(str, Enum):
    BIND = "bind"
    VOLUME = "volume"
    DEVICE = "device"


@dataclass(frozen=True)
class BindMount:
    """A host path made visible inside the app at ``dst_path``."""

    src_path: str
    dst_path: str
    read_only: bool = False


@dataclass(frozen=True)
class VolumeMount:
    """A named, scheduler-managed volume (a Docker volume, a Kubernetes PVC)."""

    src: str
    dst_path: str
    read_only: bool = False


@dataclass(frozen=True)
class DeviceMount:
    """A host device node (e.g. ``/dev/fuse``) with cgroup permissions ``rwm``."""

    src_path: str
    dst_path: str
    permissions: str = "rwm"


Mount = BindMount | VolumeMount | DeviceMount

_SRC_KEYS = ("src", "source")
_DST_KEYS = ("dst", "destination", "target")
_BOOL_KEYS = ("readonly", "ro", "read_only")


def _parse_one(text: str) -> Mount:
    opts: dict[str, str] = {}
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        key, sep, value = item.partition("=")
        key = key.strip().lower()
        if not sep and key in _BOOL_KEYS:
            value = "true"
        elif not sep:
            raise SpecsError(
                "mounts", text, f"{item!r} is not key=value (e.g. type=bind,src=/a,dst=/b)"
            )
        opts[key] = value.strip()

    kind = opts.pop("type", None)
    if kind is None:
        raise SpecsError(
            "mounts", text, "each mount starts with type=bind, type=volume or type=device"
        )
    if kind not in {m.value for m in MountType}:
        raise SpecsError("mounts.type", kind, "use one of bind, volume, device")
    src = next((opts.pop(k) for k in _SRC_KEYS if k in opts), None)
    dst = next((opts.pop(k) for k in _DST_KEYS if k in opts), None)
    read_only = any(opts.pop(k, "false").lower() in ("true", "1", "yes") for k in _BOOL_KEYS)
    perm = opts.pop("perm", opts.pop("permissions", "rwm"))
    if opts:
        raise SpecsError(
            "mounts", text, f"unknown option(s) {', '.join(sorted(opts))} for type={kind}"
        )
    if not src:
        raise SpecsError("mounts.src", text, f"a {kind} mount needs src=...")
    if kind == MountType.DEVICE.value:
        if not set(perm) <= set("rwm") or not perm:
            raise SpecsError(
                "mounts.perm", perm, "device permissions are a combination of r, w and m"
            )
        return DeviceMount(src_path=src, dst_path=dst or src, permissions=perm)
    if not dst:
        raise SpecsError("mounts.dst", text, f"a {kind} mount needs dst=...")
    if kind == MountType.BIND.value:
        # ``~`` means the launching user's home, as on a shell command line (and in 0.7).
        return BindMount(src_path=os.path.expanduser(src), dst_path=dst, read_only=read_only)
    return VolumeMount(src=src, dst_path=dst, read_only=read_only)


def parse_mounts(opts: list[str] | str) -> list[Mount]:
    """Parse docker-style mount strings.

    Accepts a list with one mount per entry, or one string where each mount starts with
    ``type=`` (``"type=bind,src=/a,dst=/b,readonly type=device,src=/dev/fuse"`` or the same
    joined with commas, the way ``--mounts`` collects them).
    """
    if isinstance(opts, str):
        opts = [opts]
    groups: list[str] = []
    for spec in opts:
        for token in spec.replace(" ", ",").split(","):
            if not token:
                continue
            if token.strip().lower().startswith("type=") or not groups:
                groups.append(token)
            else:
                groups[-1] += "," + token
    return [_parse_one(g) for g in groups]
