"""The ``=== APPLICATION ===`` block of ``torchx run --dryrun``: per role what a user
checks before submitting (0.7 printed every Role field): the command, the image that will
run, the resource and where a named one came from, env, mounts, retries and ports."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torchx.runner import Runner
    from torchx.specs import AppDef, ComponentSchema, Mount, ParsedArgs, Resource, Role


def given_arg(
    runner: Runner, schema: ComponentSchema, parsed: ParsedArgs, name: str
) -> tuple[str, str] | None:
    """``(value, where)`` of the component's argument ``name`` when the command line or a
    ``[component:NAME]`` section gave it; None when it took its default (or there is none)."""
    arg = schema.option(name)
    if arg is None:
        return None
    if arg.name in parsed.values:
        written = parsed.written.get(arg.name)
        return str(parsed.values[arg.name]), written[-1][0] if written else arg.flag
    for key, (value, origin) in runner.config.component_defaults(schema.name).items():
        if schema.option(key) is arg:
            return value, f"{origin} [component:{schema.name}]"
    return None


def image_origin(runner: Runner, schema: ComponentSchema, parsed: ParsedArgs) -> str | None:
    """Where the component's ``image`` came from: the command line, a config file or the
    component's own default (None when the component takes no image)."""
    arg = schema.option("image")
    if arg is None:
        return None
    given = given_arg(runner, schema, parsed, "image")
    return given[1] if given else f"the default of {schema.name}; {arg.flag} to change it"


def resource_origin(runner: Runner, schema: ComponentSchema, parsed: ParsedArgs) -> str | None:
    """The named resource the role's resource came from (``-h gpu.small``), and where it
    was given; None when no ``h`` was given."""
    given = given_arg(runner, schema, parsed, "h")
    if given is None or given[0] in ("", "None"):
        return None
    return f"{given[0]}, from {given[1]}"


def describe_app(
    app: AppDef,
    image_from: str | None = None,
    built: AppDef | None = None,
    resource_from: str | None = None,
) -> str:
    """``app`` for people, one line per fact; ``built``: the app with its workspace built
    in (the images that will run), ``image_from``/``resource_from``: where the component's
    image and named resource came from."""
    from torchx.specs import RetryPolicy

    lines = [f"AppDef {app.name}"]
    same_roles = built is not None and len(built.roles) == len(app.roles)
    run_images = [r.image for r in built.roles] if built is not None and same_roles else None
    for i, r in enumerate(app.roles):
        # quoted as a shell reads it: an empty argument ("--role ''") or one with spaces
        # shows as one argument, so the line can be pasted into a shell
        lines.append(f"  role {r.name} {_replicas(r)}: {shlex.join([r.entrypoint, *r.args])}")
        runs = run_images[i] if run_images else r.image
        if runs != r.image:
            base = r.image + (f", from {image_from}" if image_from else "")
            lines.append(f"    image: {runs} (the workspace built on {base})")
        else:
            lines.append(f"    image: {r.image}" + (f" (from {image_from})" if image_from else ""))
        named = f" ({resource_from})" if resource_from else ""
        lines.append(f"    resource: {resource_text(r.resource)}{named}")
        if r.env:
            lines.append(f"    env: {r.env}")
        if r.mounts:
            lines.append("    mounts: " + ", ".join(mount_text(m) for m in r.mounts))
        if r.max_retries or r.retry_policy != RetryPolicy.APPLICATION:
            policy = r.retry_policy.value
            lines.append(f"    retries: max_retries={r.max_retries} retry_policy={policy}")
        if r.port_map:
            ports = ", ".join(f"{k}={v}" for k, v in r.port_map.items())
            lines.append(f"    ports: {ports}")
    return "\n".join(lines)


def _replicas(role: Role) -> str:
    low = role.min_replicas
    return f"x{role.num_replicas}" + (
        f" (min {low})" if low is not None and low != role.num_replicas else ""
    )


def resource_text(res: Resource) -> str:
    """``cpu=2 gpu=0 memMB=1024`` (a size left at -1 reads ``default``: the scheduler's),
    then capabilities and devices when there are any."""
    sizes = (("cpu", res.cpu), ("gpu", res.gpu), ("memMB", res.memMB))
    if all(v < 0 for _, v in sizes) and not res.capabilities and not res.devices:
        return "the scheduler's default (unsized)"
    parts = [f"{k}={v:g}" if v >= 0 else f"{k}=default" for k, v in sizes]
    if res.capabilities:
        parts.append(f"capabilities={res.capabilities}")
    if res.devices:
        parts.append(f"devices={res.devices}")
    return " ".join(parts)


def mount_text(mount: Mount) -> str:
    """``bind /data:/data``, ``volume NAME:/dst:ro``, ``device /dev/fuse:/dev/fuse:rwm``."""
    from torchx.specs import BindMount, VolumeMount

    if isinstance(mount, BindMount):
        return f"bind {mount.src_path}:{mount.dst_path}" + (":ro" if mount.read_only else "")
    if isinstance(mount, VolumeMount):
        return f"volume {mount.src}:{mount.dst_path}" + (":ro" if mount.read_only else "")
    return f"device {mount.src_path}:{mount.dst_path}:{mount.permissions}"
