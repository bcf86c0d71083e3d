"""pytorch/torchx 0.7's components API: component_test_base, utils.booth, dist helpers."""

from __future__ import annotations

import unittest
from pathlib import Path

import pytest

from torchx.components import dist, serve, utils
from torchx.components.component_test_base import ComponentTestCase
from torchx.specs import AppState, Resource, SpecsError, macros, validate_app


@pytest.fixture(autouse=True)
def _state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


def test_component_test_case_validates_and_runs_components(tmp_path: Path) -> None:
    results: dict[str, object] = {}

    class EchoTest(ComponentTestCase):
        def test_validate(self) -> None:
            self.validate(utils, "echo")
            self.validate(dist, "ddp")

        def test_run(self) -> None:
            results["status"] = self.run_component(
                utils.touch, {"file": str(tmp_path / "ran.txt")}, timeout=60
            )
            results["test_dir"] = Path(self.test_dir)
            assert Path(self.test_dir).is_dir()

        def test_validate_fails_for_a_non_component(self) -> None:
            with self.assertRaises(AssertionError):
                self.validate(dist, "parse_j")

    outcome = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(EchoTest).run(outcome)
    assert outcome.errors == [] and outcome.failures == [], outcome.errors + outcome.failures
    assert outcome.testsRun == 3
    status = results["status"]
    assert status is not None and status.state == AppState.SUCCEEDED  # type: ignore[attr-defined]
    assert (tmp_path / "ran.txt").exists()
    assert not results["test_dir"].exists()  # type: ignore[attr-defined]


def test_booth_evaluates_and_records_the_result(tmp_path: Path) -> None:
    from torchx.runner import get_runner
    from torchx.runtime.tracking import FsspecResultTracker

    app = utils.booth(1.0, 3.0, trial_idx=2, tracker_base=str(tmp_path / "tracker"))
    validate_app(app)
    assert app.name == app.roles[0].name == "torchx-utils-booth"
    assert app.roles[0].resource == Resource(cpu=1, gpu=0, memMB=1024)
    with get_runner() as runner:
        status = runner.wait(runner.run(app), wait_interval=0.1)
    assert status is not None and status.state == AppState.SUCCEEDED, status
    assert FsspecResultTracker(str(tmp_path / "tracker"))[2] == {"booth_eval": 0.0}
    with get_runner() as runner:
        app = utils.booth(0.0, 0.0, tracker_base=str(tmp_path / "tracker"))
        status = runner.wait(runner.run(app), wait_interval=0.1)
    assert FsspecResultTracker(str(tmp_path / "tracker"))[0] == {"booth_eval": 74.0}


@pytest.mark.parametrize(
    ("j", "expected"),
    [("4", (1, 1, 4, "1")), ("2x8", (2, 2, 8, "2")), ("1:3x2", (1, 3, 2, "1:3"))],
)
def test_parse_nnodes(j: str, expected: tuple[int, int, int, str]) -> None:
    assert dist.parse_nnodes(j) == expected


def test_parse_nnodes_rejects_bad_text() -> None:
    with pytest.raises(SpecsError, match="expected M, NxM or MIN:NxM"):
        dist.parse_nnodes("2x")


@pytest.mark.parametrize(
    ("name", "app_name", "experiment"),
    [
        ("exp/run", "run", "exp"),
        ("exp/", "train", "exp"),
        ("/run", "run", dist.DEFAULT_EXPERIMENT),
        ("/", "train", dist.DEFAULT_EXPERIMENT),
        ("run", "run", dist.DEFAULT_EXPERIMENT),
        (None, "train", dist.DEFAULT_EXPERIMENT),
    ],
)
def test_ddp_and_spmd_split_the_name_into_experiment_and_run(
    name: str | None, app_name: str, experiment: str
) -> None:
    for app in (
        dist.ddp(script="path/train.py", name=name),
        dist.spmd(script="path/train.py", name=name, h="gpu.small"),
    ):
        assert app.name == app_name
        (role,) = app.roles
        assert role.name == "train"  # the role is named after the program, as upstream
        assert role.env["TORCHX_TRACKING_EXPERIMENT_NAME"] == experiment


def test_single_node_ddp_rendezvous_takes_a_free_port() -> None:
    (role,) = dist.ddp(script="t.py", j="1x4", rdzv_port=29501).roles
    endpoint = role.args[role.args.index("--rdzv_endpoint") + 1]
    assert endpoint == "localhost:0"
    (multi,) = dist.ddp(script="t.py", j="2x4", rdzv_port=29501).roles
    assert ":29501" in multi.args[1]
    assert "--tee 3" in multi.args[1]
    with pytest.raises(SpecsError, match="--tee"):
        dist.ddp(script="t.py", tee=7)


def test_torchserve_app_has_upstreams_shape() -> None:
    app = serve.torchserve("s3://bucket/model.mar", "http://torchserve:8081")
    assert app.name == "torchx-torchserve"
    (role,) = app.roles
    assert role.name == "worker" and role.entrypoint == "python"
    assert role.port_map == {"model-download": 8222}
    assert role.resource == Resource(cpu=1, gpu=0, memMB=1024)


def test_structured_name_and_j_arguments() -> None:
    from torchx.components.structured_arg import StructuredJArgument, StructuredNameArgument

    parse = StructuredNameArgument.parse_from
    assert parse("foo/bar", script="a/baz.py") == StructuredNameArgument("foo", "bar")
    assert parse("foo/", m="a.b.baz") == StructuredNameArgument("foo", "baz")
    assert parse("/bar", m="x") == StructuredNameArgument("default-experiment", "bar")
    assert str(parse("run", script="t.py", default_experiment_name="mine")) == "mine/run"
    with pytest.raises(SpecsError, match="exactly one of m and script"):
        parse("foo/bar")
    assert str(StructuredJArgument.parse_from("aws_p4d.24xlarge", "2")) == "2x8"
    with pytest.warns(UserWarning, match="8 GPU"):
        assert str(StructuredJArgument.parse_from("aws_p4d.24xlarge", "2x4")) == "2x4"
    with pytest.raises(SpecsError, match="no GPU"):
        StructuredJArgument.parse_from("aws_trn1.32xlarge", "2")
    with pytest.raises(SpecsError, match="NNODESxNPROC"):
        StructuredJArgument.parse_from("gpu.small", "2y")


@pytest.mark.parametrize("backend", ["c10d", "etcd"])
def test_multi_node_ddp_passes_node_rank_only_for_static_rendezvous(backend: str) -> None:
    # 0.7 passed --node_rank for static rendezvous only: torchrun ignores it for the
    # others and warns about it on every node but the first
    (role,) = dist.ddp(script="t.py", j="2x1", rdzv_backend=backend).roles
    assert "--node_rank" not in role.args[1]
    (static,) = dist.ddp(script="t.py", j="2x1", rdzv_backend="static").roles
    assert f"--node_rank {macros.replica_id} t.py" in static.args[1]


@pytest.mark.parametrize(
    ("launcher", "debug", "env", "expected"),
    [
        (None, False, None, "WARNING"),  # 0.7's default
        ("INFO", False, None, "INFO"),  # the launcher's own, passed on as 0.7 did
        (None, True, None, "INFO"),  # --debug asks for more than WARNING
        ("ERROR", True, None, "ERROR"),  # the launcher's explicit level beats --debug's
        ("INFO", True, {"LOGLEVEL": "DEBUG"}, "DEBUG"),  # --env beats all, as 0.7's setdefault
    ],
)
def test_ddp_and_spmd_set_torchruns_loglevel_as_0_7_did(
    monkeypatch: pytest.MonkeyPatch,
    launcher: str | None,
    debug: bool,
    env: dict[str, str] | None,
    expected: str,
) -> None:
    if launcher is None:
        monkeypatch.delenv("LOGLEVEL", raising=False)
    else:
        monkeypatch.setenv("LOGLEVEL", launcher)
    for app in (
        dist.ddp(script="t.py", j="2x1", debug=debug, env=env),
        dist.spmd(script="t.py", debug=debug, env=env),
    ):
        assert app.roles[0].env["LOGLEVEL"] == expected


@pytest.mark.parametrize(
    ("launcher", "env", "expected"),
    [
        (None, None, {"LOGLEVEL": "WARNING"}),  # 0.7's default
        ("DEBUG", None, {"LOGLEVEL": "DEBUG"}),  # the launcher's own, reaching a container
        ("DEBUG", {"LOGLEVEL": "ERROR", "A": "1"}, {"LOGLEVEL": "ERROR", "A": "1"}),  # --env's
    ],
)
def test_sh_sets_loglevel_as_0_7_did(
    monkeypatch: pytest.MonkeyPatch,
    launcher: str | None,
    env: dict[str, str] | None,
    expected: dict[str, str],
) -> None:
    if launcher is None:
        monkeypatch.delenv("LOGLEVEL", raising=False)
    else:
        monkeypatch.setenv("LOGLEVEL", launcher)
    assert utils.sh("echo", "hi", env=env).roles[0].env == expected


def test_python_m_sets_hydra_main_module_as_0_7_did() -> None:
    # how a Hydra app run as `python -m` finds its config module
    assert utils.python(m="pkg.train").roles[0].env == {"HYDRA_MAIN_MODULE": "pkg.train"}
    assert utils.python(script="train.py").roles[0].env == {}
    assert utils.python(c="print(1)").roles[0].env == {}
    # the user's --env is kept, and an explicit HYDRA_MAIN_MODULE of theirs wins
    env = utils.python(m="pkg.train", env={"A": "1"}).roles[0].env
    assert env == {"HYDRA_MAIN_MODULE": "pkg.train", "A": "1"}
    mine = utils.python(m="pkg.train", env={"HYDRA_MAIN_MODULE": "pkg.cfg"}).roles[0].env
    assert mine == {"HYDRA_MAIN_MODULE": "pkg.cfg"}


def test_python_and_binary_roles_keep_0_7s_names_whatever_the_app_name() -> None:
    # 0.7 scripts address the replicas as HANDLE/python/0 and HANDLE/binary/0
    for app, role in [
        (utils.python(c="pass"), "python"),
        (utils.python(c="pass", name="mine"), "python"),
        (utils.binary(entrypoint="ls"), "binary"),
        (utils.binary(entrypoint="ls", name="mine"), "binary"),
    ]:
        assert [r.name for r in app.roles] == [role]
    assert utils.python(c="pass").name == "torchx_utils_python"
    assert utils.binary(entrypoint="ls", name="mine").name == "mine"


def test_copy_runs_the_program_0_7s_image_has_with_0_7s_name_and_size() -> None:
    # the default image is 0.7's: it has torchx.apps.utils.copy_main, nothing newer
    app = utils.copy("s3://bucket/a", "/tmp/b")
    assert app.name == "torchx-utils-copy"
    (role,) = app.roles
    assert role.name == "torchx-utils-copy" and role.image == "ghcr.io/pytorch/torchx:0.7.0"
    assert role.entrypoint == "python"
    assert role.args == [
        "-m", "torchx.apps.utils.copy_main", "--src", "s3://bucket/a", "--dst", "/tmp/b",
    ]  # fmt: skip
    assert role.resource == Resource(cpu=1, gpu=0, memMB=1024)


def test_builtins_env_takes_a_value_holding_commas_as_0_7_did() -> None:
    from torchx.specs import materialize_appdef

    argv = ["--env", "CUDA_VISIBLE_DEVICES=0,1,NCCL_SOCKET_IFNAME=eth0,eth1"]
    expected = {"CUDA_VISIBLE_DEVICES": "0,1", "NCCL_SOCKET_IFNAME": "eth0,eth1"}
    for fn, rest in [
        (dist.ddp, ["--script", "t.py"]),
        (dist.spmd, ["--script", "t.py"]),
        (utils.python, ["--c", "pass"]),
        (utils.binary, ["--entrypoint", "ls"]),
        (utils.sh, ["true"]),
    ]:
        env = materialize_appdef(fn, [*argv, *rest]).roles[0].env
        assert {k: env[k] for k in expected} == expected, fn.__name__
