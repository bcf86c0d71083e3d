from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from torchx.components import get_component, serve
from torchx.specs import SpecsError


def test_torchserve_role_uploads_a_local_archive(
    management_api: str, registrations: list[tuple[dict[str, list[str]], bytes]], tmp_path: Path
) -> None:
    mar = tmp_path / "resnet.mar"
    mar.write_bytes(b"archive-bytes")
    app = get_component("serve.torchserve").call(
        [
            "--model_path", str(mar), "--management_api", management_api,
            "--params", "initial_workers=1,synchronous=true", "--port", "0",
        ]
    )  # fmt: skip
    (role,) = app.roles
    assert role.args[:2] == ["-m", "torchx.apps.serve.serve"]
    # The role's program, as the scheduler runs it (the management API is on loopback, so
    # the model is served at 127.0.0.1).
    proc = subprocess.run([sys.executable, *role.args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "registered" in proc.stdout
    ((query, body),) = registrations
    assert body == b"archive-bytes"
    assert query["url"][0].startswith("http://127.0.0.1:")
    assert query["url"][0].endswith("/resnet.mar")
    assert query["initial_workers"] == ["1"] and query["synchronous"] == ["true"]


def test_torchserve_runs_the_0_7_program_with_its_arguments() -> None:
    """pytorch/torchx 0.7's image has ``torchx.apps.serve.serve`` too, so the default image
    runs this app; each parameter is the program's own flag."""
    app = serve.torchserve(
        "s3://b/m.mar", "http://ts:8081", params={"initial_workers": "1"}, dryrun=True
    )
    assert app.roles[0].args == [
        "-m", "torchx.apps.serve.serve", "--model_path", "s3://b/m.mar",
        "--management_api", "http://ts:8081", "--initial_workers", "1", "--dryrun",
    ]  # fmt: skip
    (other_port,) = serve.torchserve("m.mar", "http://ts:8081", port=9000).roles
    assert other_port.args[-2:] == ["--port", "9000"]
    assert other_port.port_map == {"model-download": 9000}


def test_torchserve_unknown_param_names_the_ones_it_takes() -> None:
    with pytest.raises(SpecsError, match="--params: got 'workers'; expected one of model_name"):
        serve.torchserve("m.mar", "http://ts:8081", params={"workers": "1"})


def test_an_unknown_param_is_blamed_on_params_even_when_another_flag_has_its_text() -> None:
    # --model_path's text is the key at fault: the error still names --params
    with pytest.raises(SpecsError) as info:
        get_component("serve.torchserve").call(
            ["--model_path", "foo", "--management_api", "http://x", "--params", "foo=1"]
        )
    assert (info.value.field, info.value.value) == ("serve.torchserve --params", "foo")
    assert str(info.value).startswith("serve.torchserve --params: got 'foo'; expected one of ")


def test_torchserve_unreachable_api_fails_with_exit_1() -> None:
    (role,) = serve.torchserve("http://127.0.0.1:9/m.mar", "http://127.0.0.1:9").roles
    proc = subprocess.run([sys.executable, *role.args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.startswith("cannot reach http://127.0.0.1:9")


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"management_api": "ts:8081"}, "--management_api"),
        ({"management_api": "http://ts", "port": 70000}, "--port"),
    ],
)
def test_torchserve_bad_input(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(SpecsError, match=field):
        serve.torchserve(model_path="m.mar", **kwargs)  # type: ignore[arg-type]
