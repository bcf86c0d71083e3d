"""Builtin components through the 0.7 adapter names, compiled by kfp's real compiler:
what an ML engineer converts first, checked in the YAML kfp writes."""

# No `from __future__ import annotations`: kfp reads pipeline annotations as live types.
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

dsl = pytest.importorskip("kfp.dsl")
compiler = pytest.importorskip("kfp.compiler")

from torchx.components import dist, serve, utils  # noqa: E402
from torchx.pipelines.kfp import KfpAdapterError  # noqa: E402
from torchx.pipelines.kfp.adapter import component_from_app, container_from_app  # noqa: E402


def _compile(tmp_path: Path, pipeline: Callable[..., Any]) -> dict[str, Any]:
    out = tmp_path / "pipeline.yaml"
    compiler.Compiler().compile(pipeline, str(out))
    spec: dict[str, Any] = next(yaml.safe_load_all(out.read_text()))
    return spec


def _container(spec: dict[str, Any], task: str) -> dict[str, Any]:
    component = spec["root"]["dag"]["tasks"][task]["componentRef"]["name"]
    executor = spec["components"][component]["executorLabel"]
    container: dict[str, Any] = spec["deploymentSpec"]["executors"][executor]["container"]
    return container


def test_echo_sh_and_python_compile_with_their_settings(tmp_path: Path) -> None:
    echo = utils.echo(msg="hello", image="alpine:3")
    sh = utils.sh("echo", "$HOME", "&&", "ls", env={"STAGE": "sh"})
    py = utils.python("--lr", "0.1", script="train.py", h="gpu.small")

    @dsl.pipeline(name="builtins")
    def pipeline():
        component_from_app(echo)()
        container_from_app(sh)
        container_from_app(py)

    spec = _compile(tmp_path, pipeline)
    assert _container(spec, "echo") == {"image": "alpine:3", "command": ["echo"], "args": ["hello"]}
    sh_c = _container(spec, "sh")
    assert (sh_c["command"], sh_c["args"]) == (["sh"], ["-c", "echo $HOME && ls"])
    assert {"name": "STAGE", "value": "sh"} in sh_c["env"]
    py_c = _container(spec, "torchx-utils-python")
    assert py_c["args"] == ["train.py", "--lr", "0.1"]
    res = py_c["resources"]
    assert (res["resourceCpuLimit"], res["resourceCpuRequest"]) == ("8", "8")
    assert (res["resourceMemoryLimit"], res["resourceMemoryRequest"]) == ("32768Mi", "32768Mi")
    assert (res["accelerator"]["resourceType"], res["accelerator"]["resourceCount"]) == (
        "nvidia.com/gpu",
        "1",
    )


def test_components_that_name_a_port_compile(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # dist.ddp -j 1xN and serve.torchserve carry a port_map; one kfp container runs each.
    caplog.set_level(logging.INFO, logger="torchx.pipelines.kfp")
    ddp = dist.ddp(script="train.py", j="1x2", cpu=4, gpu=2, memMB=4096)
    ts = serve.torchserve(model_path="/models/m.mar", management_api="http://ts:8081")

    @dsl.pipeline(name="ports")
    def pipeline():
        container_from_app(ddp)
        container_from_app(ts)

    spec = _compile(tmp_path, pipeline)
    train = _container(spec, "train")
    assert train["command"] == ["torchrun"]
    assert train["args"][train["args"].index("--nproc_per_node") + 1] == "2"
    assert train["args"][-1] == "train.py"
    res = train["resources"]
    assert (res["resourceCpuLimit"], res["resourceMemoryLimit"]) == ("4", "4096Mi")
    assert res["accelerator"]["resourceCount"] == "2"
    worker = _container(spec, "torchx-torchserve")
    assert worker["args"][worker["args"].index("--model_path") + 1] == "/models/m.mar"
    # Nothing of port_map is in the YAML; one log line per stage says so.
    assert "29500" not in (tmp_path / "pipeline.yaml").read_text()
    dropped = [r.getMessage() for r in caplog.records if "port_map" in r.getMessage()]
    assert len(dropped) == 2 and all("\n" not in m for m in dropped)
    assert "role 'train'" in dropped[0] and "'c10d': 29500" in dropped[0]
    assert "role 'worker'" in dropped[1] and "'model-download': 8222" in dropped[1]


def test_ddp_on_two_nodes_is_one_clear_line() -> None:
    with pytest.raises(KfpAdapterError) as info:
        component_from_app(dist.ddp(script="train.py", j="2x2"))
    msg = str(info.value)
    assert "\n" not in msg
    assert "num_replicas: got 2" in msg and "e.g. dist.ddp j='1xN'" in msg and "kubernetes" in msg
