"""AppDef -> kfp v2 container component."""

from __future__ import annotations

import inspect
import re
from typing import Any

from torchx.pipelines.kfp._channels import value_names
from torchx.pipelines.kfp._errors import KfpAdapterError
from torchx.pipelines.kfp._lazy import kfp_dsl
from torchx.pipelines.kfp._placeholders import APP_ID_INPUT, Ref, Segment
from torchx.pipelines.kfp._plan import StagePlan, plan_stage
from torchx.specs import AppDef


def _identifier(name: str) -> str:
    # kfp names the component after the function; it must be a valid identifier.
    ident = re.sub(r"\W", "_", name)
    return ident if ident[:1].isalpha() else f"app_{ident}"


def _signature_parameters(plan: StagePlan) -> list[inspect.Parameter]:
    dsl = kfp_dsl()
    typed: list[tuple[str, Any]] = [
        *((n, dsl.Input[dsl.Artifact]) for n in plan.refs("input")),
        *((n, str) for n in plan.refs("param")),
        *((n, str) for n in plan.refs("channel")),
        *((n, dsl.Output[dsl.Artifact]) for n in plan.refs("output")),
    ]
    if plan.uses_app_id:
        typed.append((APP_ID_INPUT, str))
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    return [inspect.Parameter(name, kind, annotation=t) for name, t in typed]


def _render(element: tuple[Segment, ...], slots: dict[str, Any]) -> Any:
    """One command-line element with each reference replaced by kfp's placeholder."""

    def one(seg: Segment) -> Any:
        if not isinstance(seg, Ref):
            return seg
        slot = slots[seg.name]
        return slot.path if seg.kind in ("input", "output") else slot

    parts = [one(s) for s in element]
    # A lone placeholder stays an object so kfp checks it against the inputs it declares.
    return parts[0] if len(parts) == 1 else "".join(str(p) for p in parts)


def component_from_plan(plan: StagePlan) -> Any:
    dsl = kfp_dsl()
    params = _signature_parameters(plan)

    def stage(*slots: Any) -> Any:
        by_name = {p.name: s for p, s in zip(params, slots, strict=True)}
        return dsl.ContainerSpec(
            image=plan.image,
            command=[_render(c, by_name) for c in plan.command],
            args=[_render(a, by_name) for a in plan.args],
        )

    stage.__name__ = stage.__qualname__ = _identifier(plan.name)
    stage.__doc__ = f"torchx app {plan.name!r} (role {plan.role.name!r})."
    stage.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    component = dsl.container_component(stage)
    if plan.env:
        # dsl.ContainerSpec has no env field, but the component's container does and kfp
        # compiles it; putting env here keeps it on every task made from the component.
        component.component_spec.implementation.container.env = dict(plan.env)
    return component


def component_from_app(app: AppDef) -> Any:
    """A kfp v2 container component that runs the single role of ``app``.

    Image, entrypoint (as the command), args and env come from the role; macros are filled
    the way kfp can (``img_root`` -> ``""``, ``replica_id`` -> ``"0"``, ``app_id`` -> an
    input named ``torchx_app_id`` that ``task_from_app`` sets to kfp's task id).
    ``input_path``/``output_path``/``param`` placeholders in the args become the
    component's inputs and outputs. Resources, retries and Kubernetes settings are task
    settings in kfp; ``task_from_app`` applies them. Pipeline values in the args are
    refused here: only ``task_from_app`` knows to pass them to the component.
    """
    plan = plan_stage(app)
    if plan.channel_args:
        # Each would be a required input named torchx_arg_N that the caller never wrote,
        # and kfp's "missing 1 required argument" would be the user's only clue.
        names = list(dict.fromkeys(n for _, t in plan.channel_args for n in value_names(t)))
        raise KfpAdapterError(
            f"role {plan.role.name!r}.args",
            names,
            "a bare component cannot take pipeline values in its args; inside the pipeline "
            "use task_from_app(app) or torchx.pipelines.kfp.adapter.container_from_app(app), "
            "which pass them in",
        )
    return component_from_plan(plan)
