"""An AppDef checked and reduced to what one kfp container stage needs; no kfp here."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from torchx.pipelines.kfp._channels import as_text, channel_input, has_channel, is_channel
from torchx.pipelines.kfp._errors import KfpAdapterError
from torchx.pipelines.kfp._placeholders import (
    APP_ID_TOKEN,
    Ref,
    RefKind,
    Segment,
    has_refs,
    split_refs,
)
from torchx.specs import AppDef, AppDefError, Role, macros, validate_app

_RUN_ELSEWHERE = (
    "a kfp v2 task runs exactly one container; run a distributed or multi-role app as a "
    "Kubernetes job through the kubernetes scheduler (torchx run --scheduler kubernetes ...)"
)

# How each torchx macro reads inside a kfp stage. The image *is* the container, so the
# image root is the filesystem root, as with every container scheduler; a stage is one
# replica, so its id is 0; app_id is a per-task id that kfp fills in at run time.
_MACRO_VALUES = macros.Values(img_root="", app_id=APP_ID_TOKEN, replica_id="0")
# rank0_env names a variable holding the address of replica 0 for peers to reach; a stage
# has no peers and kfp sets no such variable, so there is nothing true to put there.
_UNFILLABLE = {"rank0_env": "a kfp stage has no peer replicas and no rank-0 address"}


@dataclass(frozen=True)
class StagePlan:
    """One role of an AppDef, ready to become a kfp container component."""

    name: str
    role: Role
    image: str
    command: tuple[tuple[Segment, ...], ...]
    args: tuple[tuple[Segment, ...], ...]
    env: tuple[tuple[str, str], ...]
    # (component input, element text) for each element holding a kfp pipeline value.
    channel_args: tuple[tuple[str, str], ...] = ()

    def refs(self, kind: RefKind) -> tuple[str, ...]:
        """Names referenced with ``kind``, in order of first use, each once."""
        seen: dict[str, None] = {}
        for element in (*self.command, *self.args):
            for seg in element:
                if isinstance(seg, Ref) and seg.kind == kind:
                    seen.setdefault(seg.name)
        return tuple(seen)

    @property
    def uses_app_id(self) -> bool:
        return bool(self.refs("app_id"))


def single_role(app: AppDef) -> Role:
    """The app's only role, or an error saying why the app is not one kfp stage."""
    if not isinstance(app, AppDef):
        raise KfpAdapterError("app", app, "give a torchx.specs.AppDef")
    roles = app.roles
    if not roles:
        raise KfpAdapterError(
            f"app {app.name!r}.roles", roles, "add exactly one Role: a stage is one container"
        )
    if len(roles) > 1:
        names = [r.name for r in roles]
        raise KfpAdapterError(f"app {app.name!r}.roles", names, _RUN_ELSEWHERE)
    role = roles[0]
    if role.num_replicas != 1:
        raise KfpAdapterError(
            f"role {role.name!r}.num_replicas",
            role.num_replicas,
            f"set it to 1 (e.g. dist.ddp j='1xN'); {_RUN_ELSEWHERE}",
        )
    return role


# Also matches the escaped ``$${rank0_env}`` shell form: the intent is the same.
_MACRO_USE = re.compile(r"\$\{?(" + "|".join(_UNFILLABLE) + r")\b")


def _filled(field: str, text: str) -> str:
    """``text`` with the macros a stage can fill filled; refuses one it cannot."""
    for match in _MACRO_USE.finditer(text):
        name = match.group(1)
        if name in _UNFILLABLE:
            raise KfpAdapterError(
                field,
                text,
                f"the ${{{name}}} macro cannot be filled: {_UNFILLABLE[name]}; remove it",
            )
    return _MACRO_VALUES.substitute(text)


def _element(field: str, text: str) -> tuple[Segment, ...]:
    return tuple(split_refs(field, _filled(field, text)))


class _Elements:
    """Command and arg elements in order; one holding a kfp value becomes an input."""

    def __init__(self) -> None:
        self.channels: list[tuple[str, str]] = []

    def __call__(self, field: str, text: str) -> tuple[Segment, ...]:
        if not has_channel(text):
            return _element(field, text)
        filled = _filled(field, text)
        if has_refs(filled):
            raise KfpAdapterError(
                field,
                text,
                "a pipeline value and a torchx placeholder (or the ${app_id} macro) cannot "
                "share one argument; put each in an argument of its own",
            )
        name = channel_input(field, filled, len(self.channels))
        self.channels.append((name, filled))
        return (Ref("channel", name),)


def _with_text_values(app: AppDef, role: Role) -> tuple[AppDef, Role]:
    """``app`` with kfp pipeline values in its role written as kfp's text for them."""
    if not any(map(is_channel, (role.entrypoint, *role.args, *role.env.values()))):
        return app, role
    args = [as_text(a) for a in role.args]
    env = {k: as_text(v) for k, v in role.env.items()}
    entrypoint = as_text(role.entrypoint)
    # A copy: the caller's AppDef stays as given.
    role = dataclasses.replace(role, entrypoint=entrypoint, args=args, env=env)
    return dataclasses.replace(app, roles=[role]), role


def plan_stage(app: AppDef) -> StagePlan:
    """Check ``app`` and reduce it to one stage; every refusal names the field."""
    app, role = _with_text_values(app, single_role(app))
    where = f"role {role.name!r}"
    if not isinstance(role.image, str) or not role.image.strip():
        raise KfpAdapterError(
            f"{where}.image", role.image, "give the container image the stage runs in"
        )
    try:
        validate_app(app)
    except AppDefError as e:
        raise KfpAdapterError("app", app.name, "; ".join(e.problems)) from e
    env: list[tuple[str, str]] = []
    for key, value in role.env.items():
        field = f"{where}.env[{key!r}]"
        filled = _filled(field, value)
        if has_refs(filled) or has_channel(filled):
            # kfp resolves its placeholders in command and args only, never in env.
            raise KfpAdapterError(
                field,
                value,
                "kfp fills pipeline values, placeholders and the ${app_id} macro only in "
                "args; pass the value as an argument instead",
            )
        env.append((key, filled))
    element = _Elements()
    command = (element(f"{where}.entrypoint", role.entrypoint),)
    args = tuple(element(f"{where}.args[{i}]", a) for i, a in enumerate(role.args))
    plan = StagePlan(
        name=app.name,
        role=role,
        image=role.image,
        command=command,
        args=args,
        env=tuple(env),
        channel_args=tuple(element.channels),
    )
    both = set(plan.refs("output")) & (set(plan.refs("input")) | set(plan.refs("param")))
    if both:
        raise KfpAdapterError(
            f"{where}.args",
            sorted(both),
            "a name is either an output or an input of a stage, not both; rename one",
        )
    clash = set(plan.refs("input")) & set(plan.refs("param"))
    if clash:
        raise KfpAdapterError(
            f"{where}.args",
            sorted(clash),
            "a name is either an input artifact (input_path) or a parameter (param), not both",
        )
    return plan
