"""Pieces that several builtin component groups share."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Mapping

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
    h: str | None = None, cpu: float = -1, gpu: int = -1, memMB: int = -1, *, where: str = ""
) -> Resource:
    """A named resource when ``h`` is given, else the explicit sizes (-1: scheduler default).

    An unknown ``h`` is an error about the component ``where``'s ``--h`` (the argument to
    fix), not about a "named resource" the user never typed; still the same type (a
    KeyError too, as pytorch/torchx raised).
    """
    if h:
        try:
            return resource(h=h)
        except SpecsError as e:
            if not where:
                raise
            raise type(e)(f"{where} --h (named resource)", e.value, e.expected) from None
    if (cpu, gpu, memMB) == (-1, -1, -1):
        return Resource.copy(NULL_RESOURCE)
    return Resource(cpu=cpu, gpu=gpu, memMB=memMB)


def log_level_env(debug_env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``LOGLEVEL`` as pytorch/torchx's ``dist.ddp`` and ``utils.sh`` set it, with the
    variables ``debug_env`` (``dist.ddp --debug``'s) under it: the launcher's own
    ``LOGLEVEL`` (so ``LOGLEVEL=INFO torchx run ...`` reaches a container, which does not
    inherit the launcher's environment), else ``debug_env``'s, else WARNING. The caller
    lays the user's ``--env`` over the result, so their ``LOGLEVEL`` beats all three."""
    launcher_level = os.environ.get("LOGLEVEL")
    return {
        "LOGLEVEL": "WARNING",
        **(debug_env or {}),
        **({"LOGLEVEL": launcher_level} if launcher_level else {}),
    }


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


# The help of the arguments that several builtins take, written once so that it cannot
# drift apart between them. ``{per}`` is the unit the app is sized and restarted by: a
# replica, or a node for the components that run torchrun on each node.
SHARED_ARG_HELP = {
    "image": "the image to run in",
    "num_replicas": "how many copies to run",
    "cpu": "cores per {per}",
    "gpu": "GPUs per {per}",
    "memMB": "memory per {per} in MiB",
    "h": "a named resource per {per} (e.g. cpu.small, gpu.small); overrides cpu, gpu and memMB",
    "env": "environment variables, k1=v1,k2=v2",
    "max_retries": "how many times a failed {per} is restarted",
    "mounts": "docker-style mounts, e.g. type=bind,src=/data,dst=/data,readonly",
}
# what a size of -1 means, told where it is the default (``role_resource``)
_UNSIZED = " (-1: the scheduler's default)"


def fill_shared_arg_help(*components: Callable[..., AppDef], per: str = "replica") -> None:
    """Fill the ``Args:`` lines of the shared arguments (``SHARED_ARG_HELP``) into the
    docstrings of builtin ``components``, each where its parameter stands in the signature,
    so ``__doc__``, ``help()``, the CLI's argument help and ``torchx builtins --print`` all
    show them. The builtins' docstrings leave these lines out, so that their wording is
    one for every builtin. A module calls it once, after its components, which keeps each
    definition a plain function: the source ``builtins --print`` shows is one to copy.

    A line a docstring writes itself is kept: that is for an argument whose meaning
    differs in that component. ``per`` names the unit sizes and restarts count in.
    """
    for fn in components:
        if fn.__doc__ is None:  # docstrings stripped (python -OO): no help to complete
            continue
        fn.__doc__ = _filled_doc(fn, per)


def _filled_doc(fn: Callable[..., AppDef], per: str) -> str:
    doc = inspect.getdoc(fn) or ""
    # only "\n" ends a line: splitlines() would also cut at a form feed or U+2028 written
    # in the text, and the join below would turn them into newlines
    lines = doc.split("\n")
    if "Args:" not in lines:
        raise ValueError(f"{fn.__qualname__}: its docstring needs an Args: section to fill")
    start = lines.index("Args:") + 1
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith(" ")), len(lines))
    entries = lines[start:end]
    indent = " " * ((len(entries[0]) - len(entries[0].lstrip())) if entries else 4)
    # each described argument's lines, its continuation lines included, by name. An entry
    # starts at the section's indent, as the docstring parser's Google style starts one, so
    # the filled text parses the same; the parser itself is not run here, on every import
    # of the builtins, only when a docstring is shown.
    written: dict[str, list[str]] = {}
    for line in entries:
        head = line[len(indent) :]
        name = head.partition(":")[0].lstrip("*")
        if line.startswith(indent) and head[:1] not in ("", " "):
            written[name] = [line]
        elif written:
            written[next(reversed(written))].append(line)
        else:
            raise ValueError(f"{fn.__qualname__}: its Args: section starts with {line.strip()!r}")
    params = inspect.signature(fn).parameters
    unknown = sorted(set(written) - set(params))
    if unknown:
        raise ValueError(f"{fn.__qualname__}: its docstring describes no parameter {unknown}")
    args: list[str] = []
    for name, param in params.items():
        if name in written:
            args += written[name]
        elif name in SHARED_ARG_HELP:
            text = SHARED_ARG_HELP[name].format(per=per)
            args.append(f"{indent}{name}: {text}{_UNSIZED if param.default == -1 else ''}")
    return "\n".join([*lines[:start], *args, *lines[end:]])
