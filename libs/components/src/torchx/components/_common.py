"""Pieces that several builtin component groups share."""

from __future__ import annotations

from torchx.specs import (
    NULL_RESOURCE,
    AppDef,
    Mount,
    Resource,
    Role,
    SpecsError,
    parse_mounts,
    resource,
)

# The image a builtin component runs in unless told otherwise: pytorch/torchx 0.7's
# published image (its ``torchx.version.TORCHX_IMAGE``), which has torch, torchrun and the
# programs the builtins call. Local schedulers ignore it (local_cwd runs in the current
# directory); for your own code, build an image or use --workspace.
IMAGE = "ghcr.io/pytorch/torchx:0.7.0"


def role_resource(
    h: str | None = None, cpu: float = -1, gpu: int = -1, memMB: int = -1
) -> Resource:
    """A named resource when ``h`` is given, else the explicit sizes (-1: scheduler default)."""
    if h:
        return resource(h=h)
    if (cpu, gpu, memMB) == (-1, -1, -1):
        return Resource.copy(NULL_RESOURCE)
    return Resource(cpu=cpu, gpu=gpu, memMB=memMB)


def mounts_of(mounts: list[str] | None) -> list[Mount]:
    return parse_mounts(mounts) if mounts else []


def sized_role(
    name: str,
    image: str,
    entrypoint: str,
    args: list[str],
    size: Resource,
    env: dict[str, str] | None,
    mounts: list[str] | None,
    *,
    num_replicas: int = 1,
    max_retries: int = 0,
) -> Role:
    """A role from the options every sized builtin component takes: its resource (from
    ``role_resource``), the environment and docker-style mounts."""
    return Role(
        name=name,
        image=image,
        entrypoint=entrypoint,
        args=args,
        num_replicas=num_replicas,
        resource=size,
        env=dict(env or {}),
        max_retries=max_retries,
        mounts=mounts_of(mounts),
    )


def python_app(
    name: str,
    image: str,
    args: list[str],
    *,
    role_name: str | None = None,
    size: Resource | None = None,
    port_map: dict[str, int] | None = None,
    metadata: dict[str, str] | None = None,
) -> AppDef:
    """A one-role app that runs ``python ARGS`` in ``image``: the builtins whose program is
    a module of torchx's image or a code string. The role is named ``name`` unless told."""
    role = Role(
        name=role_name or name,
        image=image,
        entrypoint="python",
        args=args,
        resource=role_resource() if size is None else size,
        port_map=dict(port_map or {}),
    )
    return AppDef(name=name, roles=[role], metadata=dict(metadata or {}))


def one_of(field_values: dict[str, str | None], what: str) -> tuple[str, str]:
    """The single (name, value) among ``field_values`` that is set; anything else is an error."""
    given = {k: v for k, v in field_values.items() if v}
    if len(given) != 1:
        names = ", ".join(f"--{k}" for k in field_values)
        shown = ", ".join(f"--{k}" for k in given)
        error = SpecsError(what, shown or None, f"give exactly one of {names}")
        if not shown:  # nothing to quote: "got ''" would read as if an empty value was given
            error.args = (f"{what}: not given; give exactly one of {names}",)
        raise error
    ((name, value),) = given.items()
    return name, value
