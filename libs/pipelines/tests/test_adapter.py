"""pytorch/torchx 0.7's ``torchx.pipelines.kfp.adapter`` names on kfp v2."""

# No `from __future__ import annotations`: kfp reads pipeline annotations as live types.
from typing import Any

import pytest
import yaml
from kfp import dsl

import torchx.specs as specs
from torchx.pipelines.kfp import KfpAdapterError, output_path
from torchx.pipelines.kfp.adapter import (
    METADATA_FILE,
    component_from_app,
    component_spec_from_app,
    container_from_app,
    resource_from_app,
)
from torchx.pipelines.kfp.version import __version__


def _app(*args: str, **resource: Any) -> specs.AppDef:
    role = specs.Role(
        "trainer", image="img:1", entrypoint="python", args=list(args), env={"A": "1"},
        resource=specs.Resource(cpu=2, gpu=0, memMB=1024) if resource else specs.NULL_RESOURCE,
    )  # fmt: skip
    return specs.AppDef("train", [role])


def test_container_from_app_is_a_task_with_resources(compile_pipeline: Any) -> None:
    app = _app("-m", "trainer", resource=True)

    @dsl.pipeline(name="adapter")
    def pipeline():
        container_from_app(app)

    out = compile_pipeline(pipeline)
    (name,) = out.tasks
    container = out.container(name)
    assert container["image"] == "img:1" and container["command"] == ["python"]
    assert container["args"] == ["-m", "trainer"]
    assert container["resources"]["cpuLimit"] == 2.0


def test_component_from_app_and_its_spec() -> None:
    factory = component_from_app(_app("-c", "pass"))
    assert factory.component_spec.implementation.container.image == "img:1"
    text, role = component_spec_from_app(_app("-c", "pass"))
    assert role.name == "trainer"
    doc = yaml.safe_load(text)
    (executor,) = doc["deploymentSpec"]["executors"].values()
    assert executor["container"]["image"] == "img:1"
    assert executor["container"]["args"] == ["-c", "pass"]


def test_what_kfp_v2_cannot_do_is_refused_with_the_alternative() -> None:
    with pytest.raises(KfpAdapterError, match="output viewer"):
        component_from_app(_app(), ui_metadata={"outputs": []})
    with pytest.raises(KfpAdapterError, match="ResourceOp"):
        resource_from_app(_app(), queue="default")
    with pytest.raises(KfpAdapterError, match="by name"):
        container_from_app(_app(output_path("x")), "positional")
    assert METADATA_FILE.endswith("data.json") and __version__


def test_the_package_version() -> None:
    import torchx.pipelines.kfp as kfp_adapter

    assert kfp_adapter.__version__ == __version__


def test_calling_component_from_app_keeps_the_resources(compile_pipeline: Any) -> None:
    # 0.7's factory set cpu, memory and gpu on what it made; kfp v2 keeps them on the task.
    app = _app("-m", "trainer", resource=True)
    app.roles[0].resource = specs.Resource(cpu=2, gpu=1, memMB=1024)
    app.roles[0].max_retries = 3
    factory = component_from_app(app)

    @dsl.pipeline(name="factory")
    def pipeline():
        factory()

    out = compile_pipeline(pipeline)
    (name,) = out.tasks
    container = out.container(name)
    assert container["args"] == ["-m", "trainer"]
    assert container["env"] == [{"name": "A", "value": "1"}]
    res = container["resources"]
    assert (res["resourceCpuLimit"], res["resourceMemoryLimit"]) == ("2", "1024Mi")
    assert res["accelerator"]["resourceType"] == "nvidia.com/gpu"
    assert res["accelerator"]["resourceCount"] == "1"
    assert out.tasks[name]["retryPolicy"]["maxRetryCount"] == 3


def test_component_from_app_refuses_a_bad_resource_when_made() -> None:
    app = _app()
    app.roles[0].resource = specs.Resource(cpu=1, gpu=0, memMB=0, devices={"a": 1, "b": 1})
    with pytest.raises(KfpAdapterError, match=r"resource\.devices"):
        component_from_app(app)


def test_the_task_takes_after_and_v2_settings_as_migrating_says(compile_pipeline: Any) -> None:
    later = specs.AppDef("second", [specs.Role("s", image="img:2", entrypoint="true")])

    @dsl.pipeline(name="order")
    def pipeline():
        first = container_from_app(_app("-c", "pass"))
        second = container_from_app(later)
        second.after(first).set_cpu_limit("2")

    out = compile_pipeline(pipeline)
    assert out.tasks["second"]["dependentTasks"] == ["train"]
    assert out.container("second")["resources"]["resourceCpuLimit"] == "2"


def test_component_from_app_compiles_alone_as_a_kfp_component(tmp_path: Any) -> None:
    # Upstream's kfp v1 factory compiled by itself; kfp v2's compiler (and Client uploads,
    # which compile first) take only a kfp component, which the factory now is.
    from kfp import compiler, components

    factory = component_from_app(_app("-m", "trainer", resource=True))
    assert isinstance(factory, components.ContainerComponent)
    assert (factory.name, factory.description) == ("train", "torchx app 'train' (role 'trainer').")
    out = tmp_path / "component.yaml"
    compiler.Compiler().compile(factory, str(out))
    doc = yaml.safe_load(out.read_text())
    (executor,) = doc["deploymentSpec"]["executors"].values()
    assert executor["container"]["image"] == "img:1"
    assert executor["container"]["args"] == ["-m", "trainer"]
    # kfp loads it back as a component, as it would one another tool compiled.
    loaded = components.load_component_from_file(str(out))
    assert loaded.component_spec.implementation.container.command == ["python"]


def test_the_factory_inside_a_pipeline_takes_inputs_by_name_only(compile_pipeline: Any) -> None:
    # 0.7 passed positional arguments on to the v1 factory; a v2 component takes none.
    factory = component_from_app(_app("--out", output_path("model")))
    with pytest.raises(KfpAdapterError) as info:
        factory("positional")
    assert str(info.value).startswith("component_from_app(app)(...) arguments: got ['positional']")

    @dsl.pipeline(name="nested")
    def pipeline(lr: str = "0.1"):
        first = factory()
        # A pipeline value in args: the factory fills the input the bare component would lack.
        component_from_app(_app("--lr", lr, resource=True))().after(first)

    out = compile_pipeline(pipeline)
    (second,) = (t for t in out.tasks if t != "train")
    params = out.tasks[second]["inputs"]["parameters"]
    assert params["pipelinechannel--lr"] == {"componentInputParameter": "lr"}
    filled = params["torchx_arg_0"]["runtimeValue"]["constant"]
    assert filled == "{{$.inputs.parameters['pipelinechannel--lr']}}"
    assert out.tasks[second]["dependentTasks"] == ["train"]
    assert out.container(second)["resources"]["resourceCpuLimit"] == "2"
