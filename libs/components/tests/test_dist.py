from __future__ import annotations

from typing import Any

import pytest

from torchx.components import dist, function, get_component, utils
from torchx.components.dist import DEBUG_ENV, Topology, parse_j
from torchx.specs import SpecsError, macros, validate_app


@pytest.mark.parametrize(
    ("j", "topology", "nnodes_arg"),
    [
        ("2", Topology(1, 1, 2), "1"),
        ("3x4", Topology(3, 3, 4), "3"),
        ("1:3x4", Topology(1, 3, 4), "1:3"),
    ],
)
def test_parse_j(j: str, topology: Topology, nnodes_arg: str) -> None:
    assert parse_j(j) == topology
    assert topology.nnodes_arg == nnodes_arg


@pytest.mark.parametrize(
    ("j", "why"),
    [("", "expected M, NxM"), ("2x", "expected M"), ("0x2", "at least 1"), ("3:2x1", "exceeds")],
)
def test_parse_j_rejects(j: str, why: str) -> None:
    with pytest.raises(SpecsError, match=why) as info:
        parse_j(j)
    assert info.value.field == "dist.ddp -j" and info.value.value == j


@pytest.mark.parametrize(
    ("argv", "start"),
    [
        (["--j", "2xtwo"], "dist.ddp --j: got '2xtwo'; expected M, NxM"),
        (["-j", "2xtwo"], "dist.ddp -j: got '2xtwo'; expected M, NxM"),
        (["--h=nope"], "dist.ddp --h (named resource): got 'nope'; known: "),
        (["-h", "nope"], "dist.ddp -h (named resource): got 'nope'; known: "),
        # the same text given to two flags: the error names the one it is about
        (["--h", "nope", "--j", "nope"], "dist.ddp --j: got 'nope'"),
        (["--h", "1x2", "--j", "1x2"], "dist.ddp --h (named resource): got '1x2'"),
    ],
)
def test_the_components_own_errors_name_the_argument_as_written(
    argv: list[str], start: str
) -> None:
    with pytest.raises(SpecsError) as info:
        get_component("dist.ddp").call(["--script", "t.py", *argv])
    assert str(info.value).startswith(start)


@pytest.mark.parametrize(
    ("component", "argv"),
    [
        (dist.ddp, {"script": "a.py"}),
        (dist.spmd, {"script": "a.py"}),
        (utils.sh, {}),
        (utils.python, {"script": "a.py"}),
        (utils.binary, {"entrypoint": "a"}),
        (function.call, {"url": "/tmp/x"}),
    ],
)
def test_an_unknown_h_names_the_components_flag_and_stays_a_key_error(
    component: Any, argv: dict[str, str]
) -> None:
    name = f"{component.__module__.rpartition('.')[2]}.{component.__name__}"
    args = ("x",) if component is utils.sh else ()
    with pytest.raises(KeyError) as info:
        component(*args, h="gpu.smal", **argv)
    assert isinstance(info.value, SpecsError)
    assert str(info.value).startswith(
        f"{name} --h (named resource): got 'gpu.smal'; did you mean 'gpu.small'"
    )


def test_single_node_ddp_runs_torchrun_on_a_free_loopback_port(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("LOGLEVEL", raising=False)
    app = get_component("dist.ddp").call(
        ["--script", "path/train.py", "--j", "2", "--rdzv_port", "29611", "--", "--epochs", "1"]
    )
    validate_app(app)
    (role,) = app.roles
    assert app.name == role.name == "train"
    assert role.entrypoint == "torchrun"
    assert role.args == [
        "--nnodes", "1", "--nproc_per_node", "2", "--rdzv_backend", "c10d",
        "--rdzv_id", macros.app_id, "--tee", "3", "--role", "", "--rdzv_endpoint", "localhost:0",
        "path/train.py", "--epochs", "1",
    ]  # fmt: skip
    assert role.num_replicas == 1 and role.min_replicas is None
    assert role.env == {
        "TORCHX_TRACKING_EXPERIMENT_NAME": "default-experiment",
        "LOGLEVEL": "WARNING",
    }


def test_static_rendezvous_names_the_node_rank_on_one_node_too() -> None:
    (one,) = dist.ddp(script="train.py", j="1x2", rdzv_backend="static").roles
    assert one.entrypoint == "torchrun"
    assert one.args[-3:] == ["--node_rank", "0", "train.py"]
    (two,) = dist.ddp(script="train.py", j="2x2", rdzv_backend="static").roles
    assert f"--node_rank {macros.replica_id} train.py" in two.args[1]


def test_multi_node_elastic_ddp_meets_at_replica_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LOGLEVEL", raising=False)
    app = dist.ddp(
        "--lr", "0.1", m="trainer.main", j="1:4x8", max_retries=3, debug=True,
        env={"FOO": "bar"}, h="gpu.large", mounts=["type=volume,src=ckpt,dst=/ckpt"],
    )  # fmt: skip
    (role,) = app.roles
    assert app.name == "main"
    assert (role.num_replicas, role.min_replicas, role.max_retries) == (4, 1, 3)
    assert role.entrypoint == "bash" and role.args[0] == "-c"
    line = role.args[1]
    assert "--nnodes 1:4 --nproc_per_node 8" in line
    # After the scheduler fills the macros, the shell reads the address of replica 0.
    filled = macros.Values(img_root="", app_id="app1", replica_id="2").substitute(line)
    assert "--rdzv_endpoint ${TORCHX_RANK0_HOST:=localhost}:29500" in filled
    assert "--rdzv_id app1" in filled
    assert filled.endswith("-m trainer.main --lr 0.1")
    assert role.env == {
        "TORCHX_TRACKING_EXPERIMENT_NAME": "default-experiment",
        **DEBUG_ENV,
        "FOO": "bar",
    }
    assert role.resource.gpu == 4
    assert role.mounts[0].dst_path == "/ckpt"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({}, "^dist.ddp program: not given; give exactly one of --script, --m$"),
        ({"script": "a.py", "m": "b"}, "exactly one of"),
        ({"script": "a.py", "rdzv_port": 0}, "rdzv_port"),
        ({"script": "a.py", "max_retries": -1}, "max_retries"),
        ({"script": "a.py", "mounts": ["src=/a"]}, "type=bind"),
        ({"script": "a.py", "h": "gpu.huge"}, "named resource"),
    ],
)
def test_ddp_bad_input(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(SpecsError, match=match):
        dist.ddp(**kwargs)  # type: ignore[arg-type]


def test_spmd_runs_one_process_per_gpu_of_the_named_resource() -> None:
    (role,) = dist.spmd(script="s.py", h="gpu.medium", j="2").roles
    assert role.num_replicas == 2 and role.resource.gpu == 2
    assert "--nproc_per_node 2" in role.args[1]
    (cpu_role,) = dist.spmd(script="s.py", h="cpu.small").roles
    assert cpu_role.args[:4] == ["--nnodes", "1", "--nproc_per_node", "1"]
    # NxM sets the processes per node too, as with pytorch/torchx
    (explicit,) = dist.spmd(script="s.py", h="gpu.medium", j="2x4").roles
    assert explicit.num_replicas == 2 and "--nproc_per_node 4" in explicit.args[1]
    with pytest.raises(SpecsError, match=r"dist\.spmd -j"):
        dist.spmd(script="s.py", j="2y2")


def test_spmd_without_j_runs_one_process_as_upstream() -> None:
    # -j 1x1 is pytorch/torchx's default: a bigger -h alone does not start more processes
    (role,) = dist.spmd(script="s.py", h="gpu.medium").roles
    assert role.num_replicas == 1
    assert role.args[:4] == ["--nnodes", "1", "--nproc_per_node", "1"]


def test_spmd_help_and_readme_say_the_default_is_one_process() -> None:
    # what `torchx run dist.spmd --help` and the README table tell a user must match the
    # default above, not the per-GPU count that -j N gives
    from pathlib import Path

    assert dist.spmd.__doc__ is not None and dist.__doc__ is not None
    summary = dist.spmd.__doc__.split("\n\n")[0]
    assert "one process by default (-j 1x1)" in summary and "-j N" in summary
    assert "one process per GPU" not in dist.__doc__.splitlines()[0]
    readme = Path(__file__).parents[1] / "README.md"
    (row,) = [line for line in readme.read_text().splitlines() if line.startswith("| `dist.spmd`")]
    assert "default `-j 1x1`, one process" in row and "`-j N`" in row


def test_ddp_and_spmd_name_defaults_to_upstreams_slash() -> None:
    defaults = {dist.ddp.__kwdefaults__["name"], dist.spmd.__kwdefaults__["name"]}
    assert defaults == {"/"}
    assert dist.ddp(script="path/train.py").name == dist.ddp(script="path/train.py", name=None).name
