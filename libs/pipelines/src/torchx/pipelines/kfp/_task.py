"""AppDef -> a task in the kfp pipeline being defined, with its resources applied."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from torchx.pipelines.kfp._channels import as_string_input, is_artifact
from torchx.pipelines.kfp._component import component_from_plan
from torchx.pipelines.kfp._errors import KfpAdapterError
from torchx.pipelines.kfp._lazy import in_pipeline, kfp_dsl, kfp_kubernetes
from torchx.pipelines.kfp._placeholders import APP_ID_INPUT
from torchx.pipelines.kfp._plan import StagePlan, plan_stage
from torchx.pipelines.kfp._resources import task_resources
from torchx.specs import AppDef

logger = logging.getLogger(__name__)


def _inputs(plan: StagePlan, given: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(given, Mapping):
        raise KfpAdapterError(
            f"app {plan.name!r} inputs",
            given,
            "give a dict of name -> value, e.g. inputs={'data': fetch.outputs['data']}",
        )
    for name in plan.refs("param"):
        # kfp would refuse it with its own type words; a param is a string input
        value = given.get(name)
        if isinstance(value, (int, float, bool, list, tuple, dict)):
            raise KfpAdapterError(
                f"app {plan.name!r} inputs[{name!r}]",
                value,
                f"param() takes a string; pass str({value!r}) or a pipeline parameter",
            )
    declared = (*plan.refs("input"), *plan.refs("param"))
    missing = [n for n in declared if n not in given]
    if missing:
        raise KfpAdapterError(
            f"app {plan.name!r} inputs",
            sorted(given),
            f"its args use {', '.join(missing)}; pass inputs={{name: value}} with an "
            "upstream task's output for input_path() and a string for param()",
        )
    extra = sorted(set(given) - set(declared))
    if extra:
        raise KfpAdapterError(
            f"app {plan.name!r} inputs",
            extra,
            f"the app's args use only {list(declared) or 'no inputs'}; "
            "put input_path(name) or param(name) in its args",
        )
    for name in plan.refs("input"):
        # kfp would refuse these deep in its type checker; name the input and the fix here
        if not is_artifact(given[name]):
            raise KfpAdapterError(
                f"app {plan.name!r} inputs[{name!r}]",
                given[name],
                "input_path() takes an upstream task's artifact, e.g. "
                f"fetch.outputs[{name!r}]; for a string or a pipeline parameter use param()",
            )
    for name in plan.refs("param"):
        if is_artifact(given[name]):
            raise KfpAdapterError(
                f"app {plan.name!r} inputs[{name!r}]",
                str(given[name]),
                f"param() takes a string; for an artifact write input_path({name!r})",
            )
    arguments = {n: given[n] for n in plan.refs("input")}
    arguments.update((n, as_string_input(given[n])) for n in plan.refs("param"))
    return arguments


def _kubernetes(choice: bool | None) -> ModuleType | None:
    k8s = kfp_kubernetes()
    if choice and k8s is None:
        raise KfpAdapterError(
            "use_kubernetes",
            choice,
            "kfp-kubernetes is not installed; install torchx-pipelines[kubernetes]",
        )
    return k8s if choice is not False else None


def task_from_app(
    app: AppDef,
    inputs: Mapping[str, Any] | None = None,
    *,
    display_name: str | None = None,
    use_kubernetes: bool | None = None,
) -> Any:
    """Add ``app`` as a task of the ``@dsl.pipeline`` function being defined.

    Args:
        app: a single-role, single-replica AppDef.
        inputs: a value for each ``input_path(name)`` (an upstream ``task.outputs[...]``)
            and each ``param(name)`` (a pipeline parameter or a string) in its args.
        display_name: the task's name in the kfp UI; the app's name by default.
        use_kubernetes: apply node selectors and volume mounts with kfp-kubernetes.
            ``None`` uses it when installed; ``False`` refuses apps that need it.

    Returns the kfp ``PipelineTask``: resources (cpu and memory as request and limit,
    accelerator type and count), env, retries (``max_retries``) and display name are set.
    """
    return _task(plan_stage(app), inputs or {}, display_name, use_kubernetes)


def _task(
    plan: StagePlan, inputs: Mapping[str, Any], display_name: str | None, kubernetes: bool | None
) -> Any:
    """``task_from_app`` of the app already reduced to ``plan``."""
    dsl = kfp_dsl()
    if not in_pipeline():
        raise KfpAdapterError(
            "task_from_app",
            plan.name,
            "call it inside a @dsl.pipeline function; component_from_app(app) gives a "
            "component to use elsewhere",
        )
    k8s = _kubernetes(kubernetes)
    res = task_resources(plan.role, kubernetes=k8s is not None)
    if plan.role.port_map:
        # Accepted, not refused (dist.ddp and serve.torchserve name one), but nothing of it
        # reaches the compiled pipeline; say so where a user reading the log will look.
        logger.info(
            "role %r: port_map %s is not declared on the kfp task (kfp v2 has no container "
            "ports); the stage still listens on those ports on its pod's address",
            plan.role.name,
            dict(plan.role.port_map),
        )
    arguments = _inputs(plan, inputs)
    # kfp resolves the pipeline values inside each element's text when it passes it in.
    arguments.update(plan.channel_args)
    if plan.uses_app_id:
        arguments[APP_ID_INPUT] = dsl.PIPELINE_TASK_ID_PLACEHOLDER
    task = component_from_plan(plan)(**arguments)
    task.set_display_name(display_name or plan.name)
    if res.cpu is not None:
        task.set_cpu_request(res.cpu).set_cpu_limit(res.cpu)
    if res.memory is not None:
        task.set_memory_request(res.memory).set_memory_limit(res.memory)
    if res.accelerator_type is not None:
        task.set_accelerator_type(res.accelerator_type)
        task.set_accelerator_limit(res.accelerator_count)
    if res.retries:
        task.set_retry(num_retries=res.retries)
    if k8s is not None:
        for key, value in res.node_selector:
            k8s.add_node_selector(task, label_key=key, label_value=value)
        for claim, path in res.pvc_mounts:
            k8s.mount_pvc(task, pvc_name=claim, mount_path=path)
    return task


def task_from_call(
    caller: str,
    stage: AppDef | StagePlan,
    args: tuple[object, ...],
    kwargs: Mapping[str, object],
) -> Any:
    """0.7's calling form of a stage: the component's inputs as keyword arguments.
    ``stage``: the app, or its plan where the caller made it already (a component)."""
    if args:
        raise KfpAdapterError(
            f"{caller} arguments",
            list(args),
            "pass the component's inputs by name (input_path/param names as keywords)",
        )
    if not in_pipeline():
        # Named for what the user called, not for task_from_app underneath it.
        raise KfpAdapterError(
            caller,
            stage.name,
            "call it inside a @dsl.pipeline function: kfp v2 makes tasks only there",
        )
    plan = stage if isinstance(stage, StagePlan) else plan_stage(stage)
    return _task(plan, dict(kwargs), None, None)
