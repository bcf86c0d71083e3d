"""Pipelines built from AppDefs, compiled by kfp's compiler and read back from YAML."""

# No `from __future__ import annotations`: kfp reads pipeline annotations as live types.
import importlib.util
from typing import Any

import pytest
from kfp import dsl

import torchx.specs as specs
from torchx.pipelines.kfp import (
    ACCELERATOR_TYPE,
    component_from_app,
    input_path,
    output_path,
    param,
    task_from_app,
)


def test_container_spec_env_and_display_name(compile_pipeline: Any, apps: Any) -> None:
    app = apps.python("trainer.main", "--epochs", "3", env={"LOG_LEVEL": "debug", "A": "1"})

    @dsl.pipeline(name="one-stage")
    def pipeline():
        task_from_app(app)

    out = compile_pipeline(pipeline)
    container = out.container("python")
    assert container["image"] == apps.image
    assert container["command"] == ["python"]
    assert container["args"] == ["-m", "trainer.main", "--epochs", "3"]
    assert container["env"] == [
        {"name": "LOG_LEVEL", "value": "debug"},
        {"name": "A", "value": "1"},
    ]
    assert out.tasks["python"]["taskInfo"]["name"] == "python"
    assert "retryPolicy" not in out.tasks["python"]
    assert "resources" not in container  # NULL_RESOURCE: the cluster's defaults


def test_custom_display_name(compile_pipeline: Any, apps: Any) -> None:
    @dsl.pipeline(name="named")
    def pipeline():
        task_from_app(apps.python("m"), display_name="Train the model")

    assert compile_pipeline(pipeline).tasks["python"]["taskInfo"]["name"] == "Train the model"


def test_cpu_memory_requests_and_limits(compile_pipeline: Any, apps: Any) -> None:
    @dsl.pipeline(name="sized")
    def pipeline():
        task_from_app(apps.python("m", resource=specs.Resource(cpu=0.5, gpu=0, memMB=3000)))
        task_from_app(apps.python("m", name="big", resource=specs.resource(h="cpu.xlarge")))

    out = compile_pipeline(pipeline)
    small = out.container("python")["resources"]
    assert small["resourceCpuRequest"] == small["resourceCpuLimit"] == "500m"
    assert small["resourceMemoryRequest"] == small["resourceMemoryLimit"] == "3000Mi"
    assert "accelerator" not in small
    big = out.container("big")["resources"]
    assert big["resourceCpuRequest"] == big["resourceCpuLimit"] == "8"
    assert big["resourceMemoryLimit"] == f"{32 * 1024}Mi"


def test_accelerator_from_gpu_named_resource_and_capability(
    compile_pipeline: Any, apps: Any
) -> None:
    typed = specs.Resource.copy(specs.resource(h="gpu.medium"), **{ACCELERATOR_TYPE: "amd.com/gpu"})

    @dsl.pipeline(name="gpus")
    def pipeline():
        task_from_app(apps.python("m", name="plain", resource=specs.Resource(4, 2, 1024)))
        task_from_app(apps.python("m", name="named", resource=specs.resource(h="gpu.small")))
        task_from_app(apps.python("m", name="typed", resource=typed))
        task_from_app(
            apps.python(
                "m",
                name="device",
                resource=specs.Resource(cpu=1, gpu=0, memMB=512, devices={"google.com/tpu": 4}),
            )
        )

    out = compile_pipeline(pipeline)

    def accel(task: str) -> tuple[str, str]:
        a = out.container(task)["resources"]["accelerator"]
        return a["resourceType"], a["resourceCount"]

    assert accel("plain") == ("nvidia.com/gpu", "2")
    assert accel("named") == ("nvidia.com/gpu", "1")
    assert accel("typed") == ("amd.com/gpu", "2")
    assert accel("device") == ("google.com/tpu", "4")
    # kfp-kubernetes is not needed for any of these: no platform section at all.
    assert out.platform == {}


def test_retries_from_max_retries(compile_pipeline: Any, apps: Any) -> None:
    @dsl.pipeline(name="retry")
    def pipeline():
        task_from_app(apps.python("m", max_retries=3))

    policy = compile_pipeline(pipeline).tasks["python"]["retryPolicy"]
    assert policy["maxRetryCount"] == 3


def test_macros_filled_the_way_kfp_can(compile_pipeline: Any, apps: Any) -> None:
    m = specs.macros
    app = apps.python(
        "m",
        f"--out=/runs/{m.app_id}/{m.replica_id}",
        f"{m.img_root}/config.yaml",
        env={"REPLICA": m.replica_id},
    )

    @dsl.pipeline(name="macros")
    def pipeline():
        task_from_app(app)

    out = compile_pipeline(pipeline)
    container = out.container("python")
    assert container["args"][2:] == [
        "--out=/runs/{{$.inputs.parameters['torchx_app_id']}}/0",
        "/config.yaml",
    ]
    assert container["env"] == [{"name": "REPLICA", "value": "0"}]
    app_id = out.tasks["python"]["inputs"]["parameters"]["torchx_app_id"]
    assert app_id == {"runtimeValue": {"constant": "{{$.pipeline_task_uuid}}"}}


def test_chained_stages_form_a_dag(compile_pipeline: Any, apps: Any) -> None:
    @dsl.pipeline(name="chain")
    def pipeline(source: str = "s3://bucket/raw"):
        fetch = task_from_app(apps.copy(param("src"), output_path("data")), inputs={"src": source})
        train = task_from_app(
            apps.python(
                "trainer",
                f"--data={input_path('data')}/train.csv",
                "--model",
                output_path("model"),
                name="train",
            ),
            inputs={"data": fetch.outputs["data"]},
        )
        evaluate = task_from_app(
            apps.python(
                "evaluate",
                "--model",
                input_path("model"),
                "--data",
                input_path("data"),
                name="evaluate",
            ),
            inputs={"model": train.outputs["model"], "data": fetch.outputs["data"]},
        )
        evaluate.set_caching_options(False)

    out = compile_pipeline(pipeline)
    tasks = out.tasks
    assert "dependentTasks" not in tasks["copy"]
    assert tasks["copy"]["inputs"]["parameters"]["src"] == {"componentInputParameter": "source"}
    assert tasks["train"]["dependentTasks"] == ["copy"]
    assert sorted(tasks["evaluate"]["dependentTasks"]) == ["copy", "train"]
    model_in = tasks["evaluate"]["inputs"]["artifacts"]["model"]["taskOutputArtifact"]
    assert model_in == {"outputArtifactKey": "model", "producerTask": "train"}
    data_in = tasks["train"]["inputs"]["artifacts"]["data"]["taskOutputArtifact"]
    assert data_in == {"outputArtifactKey": "data", "producerTask": "copy"}
    assert out.container("copy")["args"][-1] == "{{$.outputs.artifacts['data'].path}}"
    assert (
        out.container("train")["args"][2] == "--data={{$.inputs.artifacts['data'].path}}/train.csv"
    )
    assert out.container("copy")["args"][-3] == "{{$.inputs.parameters['src']}}"


def test_compiling_twice_is_byte_identical(compile_pipeline: Any, apps: Any) -> None:
    def build() -> Any:
        @dsl.pipeline(name="twice")
        def pipeline():
            first = task_from_app(
                apps.copy("s3://a", output_path("data"), resource=specs.resource(h="gpu.small"))
            )
            task_from_app(
                apps.python("m", input_path("data"), env={"B": "2", "A": "1"}, max_retries=1),
                inputs={"data": first.outputs["data"]},
            )

        return pipeline

    first, second = compile_pipeline(build()), compile_pipeline(build())
    assert first.text == second.text
    assert compile_pipeline(build()).text == first.text


def test_component_from_app_declares_inputs_and_outputs(compile_pipeline: Any, apps: Any) -> None:
    component = component_from_app(
        apps.python("m", input_path("data"), param("lr"), output_path("model"), env={"X": "y"})
    )
    out = compile_pipeline(component)
    inputs = out.spec["root"]["inputDefinitions"]
    assert inputs["parameters"] == {"lr": {"parameterType": "STRING"}}
    assert list(inputs["artifacts"]) == ["data"]
    assert list(out.spec["root"]["outputDefinitions"]["artifacts"]) == ["model"]
    container = next(iter(out.spec["deploymentSpec"]["executors"].values()))["container"]
    assert container["env"] == [{"name": "X", "value": "y"}]


@pytest.mark.skipif(
    importlib.util.find_spec("kfp.kubernetes") is None,
    reason="kfp-kubernetes is not installed (torchx-pipelines[kubernetes])",
)
def test_kubernetes_node_selector_and_volume(compile_pipeline: Any, apps: Any) -> None:
    app = apps.python(
        "m",
        resource=specs.resource(h="p3.16xlarge"),
        mounts=[specs.VolumeMount(src="datasets", dst_path="/data")],
    )

    @dsl.pipeline(name="k8s")
    def pipeline():
        task_from_app(app, use_kubernetes=True)

    out = compile_pipeline(pipeline)
    k8s = out.kubernetes("python")
    assert k8s["nodeSelector"]["labels"] == {"node.kubernetes.io/instance-type": "p3.16xlarge"}
    (pvc,) = k8s["pvcMount"]
    assert pvc["mountPath"] == "/data"
    assert pvc["pvcNameParameter"]["runtimeValue"]["constant"] == "datasets"
    accel = out.container("python")["resources"]["accelerator"]
    assert (accel["resourceType"], accel["resourceCount"]) == ("nvidia.com/gpu", "8")


def test_fifty_stage_chain_compiles(compile_pipeline: Any, apps: Any) -> None:
    @dsl.pipeline(name="long")
    def pipeline():
        prev = task_from_app(apps.copy("s3://in", output_path("out")))
        for i in range(49):
            prev = task_from_app(
                apps.python("step", input_path("inp"), output_path("out"), name=f"step{i}"),
                inputs={"inp": prev.outputs["out"]},
            )

    tasks = compile_pipeline(pipeline).tasks
    assert len(tasks) == 50
    assert tasks["step48"]["dependentTasks"] == ["step47"]
