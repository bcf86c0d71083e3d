"""Pipeline parameters and task outputs written straight into an app's args, as 0.7 with
kfp v1 allowed: kfp's compiler resolves them in the task's inputs."""

# No `from __future__ import annotations`: kfp reads pipeline annotations as live types.
from typing import Any

import pytest
from kfp import dsl

import torchx.specs as specs
from torchx.pipelines.kfp import KfpAdapterError, input_path, output_path, param, task_from_app


def _app(*args: Any, **env: Any) -> specs.AppDef:
    role = specs.Role("train", image="img:1", entrypoint="python", args=list(args), env=env)
    return specs.AppDef("train", [role])


@dsl.component(base_image="python:3.11")
def _pick_epochs() -> int:
    return 3


def test_parameters_and_outputs_in_args(compile_pipeline: Any) -> None:
    given: list[specs.AppDef] = []

    @dsl.pipeline(name="values")
    def pipeline(data: str = "s3://bucket/d", lr: float = 0.1):
        epochs = _pick_epochs()
        app = _app("-m", "trainer", "--data", data, f"--lr={lr}", f"--epochs={epochs.output}")
        given.append(app)
        task_from_app(app)

    out = compile_pipeline(pipeline)
    container = out.container("train")
    assert container["args"] == [
        "-m",
        "trainer",
        "--data",
        "{{$.inputs.parameters['torchx_arg_0']}}",
        "{{$.inputs.parameters['torchx_arg_1']}}",
        "{{$.inputs.parameters['torchx_arg_2']}}",
    ]
    task = out.tasks["train"]
    params = task["inputs"]["parameters"]
    assert params["pipelinechannel--data"] == {"componentInputParameter": "data"}
    assert params["pipelinechannel--lr"] == {"componentInputParameter": "lr"}
    assert params["torchx_arg_0"]["runtimeValue"]["constant"] == (
        "{{$.inputs.parameters['pipelinechannel--data']}}"
    )
    assert params["torchx_arg_1"]["runtimeValue"]["constant"] == (
        "--lr={{$.inputs.parameters['pipelinechannel--lr']}}"
    )
    upstream = params["pipelinechannel--pick-epochs-Output"]["taskOutputParameter"]
    assert upstream["producerTask"] == "pick-epochs"
    assert task["dependentTasks"] == ["pick-epochs"]
    # The caller's AppDef is left as written.
    assert not isinstance(given[0].roles[0].args[3], str)


def _refused(build: Any) -> KfpAdapterError:
    caught: list[KfpAdapterError] = []

    @dsl.pipeline(name="bad")
    def pipeline(data: str = "d"):
        try:
            task_from_app(build(data))
        except KfpAdapterError as e:
            caught.append(e)
        task_from_app(_app("-c", "pass"))

    assert pipeline is not None and len(caught) == 1
    return caught[0]


def test_values_kfp_cannot_fill_there_are_refused() -> None:
    err = _refused(lambda data: _app("-c", "pass", DATA=data))
    assert err.field == "role 'train'.env['DATA']" and "only in args" in str(err)
    err = _refused(lambda data: _app(f"--run={data}-${{app_id}}"))
    assert err.field == "role 'train'.args[0]" and "argument of its own" in str(err)


def test_an_artifact_in_args_says_input_path() -> None:
    caught: list[KfpAdapterError] = []

    @dsl.pipeline(name="artifact")
    def pipeline():
        fetch = task_from_app(_app("--out", output_path("data")))
        try:
            task_from_app(_app("--in", fetch.outputs["data"]))
        except KfpAdapterError as e:
            caught.append(e)

    assert pipeline is not None
    (err,) = caught
    assert err.field == "role 'train'.args[1]"
    assert "input_path('data')" in str(err) and "\n" not in str(err)


def test_a_number_parameter_fills_a_param(compile_pipeline: Any) -> None:
    @dsl.pipeline(name="number")
    def pipeline(lr: float = 0.1):
        task_from_app(_app("--lr", param("lr")), inputs={"lr": lr})

    out = compile_pipeline(pipeline)
    assert out.container("train")["args"] == ["--lr", "{{$.inputs.parameters['lr']}}"]
    params = out.tasks["train"]["inputs"]["parameters"]
    assert params["pipelinechannel--lr"] == {"componentInputParameter": "lr"}
    assert params["lr"]["runtimeValue"]["constant"] == (
        "{{$.inputs.parameters['pipelinechannel--lr']}}"
    )


def test_inputs_of_the_wrong_kind_name_the_input_not_kfp_types() -> None:
    caught: list[KfpAdapterError] = []

    @dsl.pipeline(name="kinds")
    def pipeline(data: str = "s3://bucket/d"):
        fetch = task_from_app(_app("--out", output_path("data")))
        for app, inputs in [
            (_app("--in", input_path("data")), {"data": "/local/file"}),
            (_app("--in", input_path("data")), {"data": data}),
            (_app("--src", param("data")), {"data": fetch.outputs["data"]}),
        ]:
            try:
                task_from_app(app, inputs=inputs)
            except KfpAdapterError as e:
                caught.append(e)

    assert pipeline is not None
    first, second, third = caught
    assert first.field == "app 'train' inputs['data']" and "'/local/file'" in str(first)
    assert "fetch.outputs['data']" in str(first) and "use param()" in str(first)
    assert second.field == "app 'train' inputs['data']" and "use param()" in str(second)
    assert "write input_path('data')" in str(third)
    assert all("\n" not in str(e) for e in caught)


def test_the_bare_component_refuses_a_pipeline_value_in_one_line() -> None:
    from torchx.pipelines.kfp import component_from_app

    # kfp builds the pipeline when the function is decorated, so the error comes from there.
    with pytest.raises(KfpAdapterError) as info:

        @dsl.pipeline(name="bare")
        def pipeline(lr: str = "0.1"):
            component_from_app(_app("--lr", lr, f"--lr2={lr}"))()

    msg = str(info.value)
    assert msg.startswith("role 'train'.args: got ['lr']; ")
    assert "task_from_app(app)" in msg and "container_from_app(app)" in msg
    assert "\n" not in msg and "torchx_arg" not in msg
