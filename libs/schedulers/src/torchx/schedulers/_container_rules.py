"""Checks shared by the container schedulers: what Docker and Kubernetes would refuse.

Each check raises SpecsError naming the field and the rule, so a bad app is refused before
anything is created.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from torchx.specs import MISSING, CfgVal, Role, SpecsError

# The image reference grammar of the Docker distribution spec.
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_DOMAIN_PART = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"{_DOMAIN_PART}(?:\.{_DOMAIN_PART})*(?::[0-9]+)?"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
_IMAGE = re.compile(
    rf"^(?P<name>(?:{_DOMAIN}/)?{_COMPONENT}(?:/{_COMPONENT})*)(?::(?P<tag>{_TAG}))?"
    rf"(?:@(?P<digest>{_DIGEST}))?$"
)
_IMAGE_RULE = (
    "an image is [registry[:port]/]path[:tag][@digest]: lowercase path components of "
    "letters, digits and . _ - separators, a tag of at most 128 of [A-Za-z0-9_.-] not "
    "starting with . or -, and at most 255 characters before the tag"
)

_LABEL_VALUE = re.compile(r"^(?:[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?)?$")
_LABEL_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?$")
_LABEL_RULE = (
    "at most 63 characters of letters, digits, '-', '_' and '.', starting and ending "
    "with a letter or digit"
)


def check_image(field: str, image: str) -> str:
    """``image`` if Docker would accept it as an image reference."""
    m = _IMAGE.match(image) if isinstance(image, str) else None
    if m is None or len(m.group("name")) > 255:
        raise SpecsError(field, image, _IMAGE_RULE)
    return image


def check_label_value(field: str, value: str) -> str:
    if not isinstance(value, str) or not _LABEL_VALUE.match(value):
        raise SpecsError(field, value, f"a Kubernetes label value is empty or {_LABEL_RULE}")
    return value


def check_label_key(field: str, key: str) -> str:
    """A Kubernetes qualified name: ``[prefix/]name``, prefix a DNS subdomain."""
    if not isinstance(key, str):
        raise SpecsError(field, key, "a label key is a string")
    prefix, sep, name = key.rpartition("/")
    if sep and (not _DNS_SUBDOMAIN.match(prefix) or len(prefix) > 253):
        raise SpecsError(
            field,
            key,
            "the prefix of a label key is a DNS subdomain: lowercase letters, digits, '-' "
            "and '.', at most 253 characters",
        )
    if not _LABEL_NAME.match(name):
        raise SpecsError(field, key, f"the name part of a label key is {_LABEL_RULE}")
    return key


def check_labels(field: str, labels: dict[str, str]) -> dict[str, str]:
    for k, v in labels.items():
        check_label_key(f"{field} key", k)
        check_label_value(f"{field}[{k!r}]", v)
    return labels


def to_dns_label(text: str, max_len: int = 63) -> str:
    """``text`` made into a DNS-1123 label (lowercase alphanumerics and '-')."""
    out = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")
    out = out[:max_len].strip("-")
    return out or "app"


def check_resources(field: str, cpu: float, gpu: int, mem_mb: int) -> None:
    """Resource requests an engine would refuse: negative, zero or fractional GPUs.

    ``-1`` means "no request" (NULL_RESOURCE) and is allowed for each of them.
    """
    if not isinstance(cpu, (int, float)) or isinstance(cpu, bool) or (cpu != -1 and cpu <= 0):
        raise SpecsError(f"{field}.cpu", cpu, "a number of cores > 0, or -1 for no request")
    if cpu != -1 and round(cpu * 1000) < 1:
        raise SpecsError(f"{field}.cpu", cpu, "at least 0.001 cores (1 millicore)")
    if not isinstance(gpu, int) or isinstance(gpu, bool) or gpu < -1:
        raise SpecsError(f"{field}.gpu", gpu, "a whole number of GPUs >= 0, or -1 for none")
    if not isinstance(mem_mb, int) or isinstance(mem_mb, bool) or (mem_mb != -1 and mem_mb <= 0):
        raise SpecsError(f"{field}.memMB", mem_mb, "a whole number of MiB > 0, or -1 for no limit")


def check_device_counts(field: str, devices: dict[str, int]) -> None:
    for name, count in devices.items():
        check_label_key(f"{field} name", name)
        if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
            raise SpecsError(f"{field}[{name!r}]", count, "a whole number of devices > 0")


def checked_roles(roles: list[Role]) -> Iterator[tuple[str, Role]]:
    """Each role with how errors name it, after what both container schedulers require
    of it (``check_role``); an app without roles is refused."""
    if not roles:
        raise SpecsError("app.roles", [], "an app needs at least one role")
    for role in roles:
        yield check_role(role), role


def check_role(role: Role) -> str:
    """What both container schedulers require of a role; returns how errors name it."""
    where = f"role {role.name!r}"
    check_image(f"{where} image", role.image)
    res = role.resource
    check_resources(f"{where} resource", res.cpu, res.gpu, res.memMB)
    check_device_counts(f"{where} resource.devices", res.devices)
    if not role.entrypoint or role.entrypoint == MISSING:
        raise SpecsError(f"{where} entrypoint", role.entrypoint, "give the program to run")
    if not isinstance(role.num_replicas, int) or role.num_replicas < 1:
        raise SpecsError(f"{where} num_replicas", role.num_replicas, "a whole number >= 1")
    return where


def check_image_repo(repo: CfgVal) -> None:
    """The run option ``image_repo``: a repository, without a tag."""
    check_image("run option 'image_repo'", str(repo))
    if ":" in str(repo).rsplit("/", 1)[-1]:
        raise SpecsError("run option 'image_repo'", repo, "give a repository without a tag")
