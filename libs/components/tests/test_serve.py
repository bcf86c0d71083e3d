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
    # The role's program, with the host pinned to loopback (the only network here).
    proc = subprocess.run(
        [sys.executable, *role.args, "--host", "127.0.0.1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "registered" in proc.stdout
    ((query, body),) = registrations
    assert body == b"archive-bytes"
    assert query["url"][0].endswith("/resnet.mar")
    assert query["initial_workers"] == ["1"] and query["synchronous"] == ["true"]


def test_torchserve_unreachable_api_fails_with_one_line() -> None:
    from torchx.components import _torchserve_upload

    code = _torchserve_upload.main(
        ["--model_path", "http://127.0.0.1:9/m.mar", "--management_api", "http://127.0.0.1:9"]
    )
    assert code == 1


def test_torchserve_dryrun_prints_the_request(capsys: pytest.CaptureFixture[str]) -> None:
    from torchx.components import _torchserve_upload

    (role,) = serve.torchserve("http://h/m.mar", "http://ts:8081", dryrun=True).roles
    assert _torchserve_upload.main(role.args[2:]) == 0
    assert (
        capsys.readouterr().out.strip() == "POST http://ts:8081/models?url=http%3A%2F%2Fh%2Fm.mar"
    )


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
