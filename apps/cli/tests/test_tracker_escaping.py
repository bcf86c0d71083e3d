"""``torchx tracker list``: an id or value with newlines or terminal codes stays one row."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from torchx.cli._app import app
from torchx.tracker.backend.fsspec import create

HOSTILE = "local_cwd://torchx/a\nlocal_cwd://torchx/fake\x1b[2J\r"
SHOWN = "local_cwd://torchx/a\\nlocal_cwd://torchx/fake\\x1b[2J\\r"


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(app, ["tracker", "list", *args])
    assert result.exit_code == 0, result.stderr
    return result.stdout


def _recorded(isolated: Path) -> None:
    root = isolated / "runs"
    (isolated / ".torchxconfig").write_text(
        f"[torchx:tracker]\nfsspec=fsspec\n\n[tracker:fsspec]\nconfig={root}\n"
    )
    tracker = create(str(root))
    tracker.add_metadata(HOSTILE, **{"note\nfake_key": "line one\nline two\x1b[31m"})
    tracker.add_artifact(HOSTILE, "model\u2028x", "/ckpt\n/m.pt")
    tracker.add_source("local_cwd://torchx/child", HOSTILE, artifact_name="model\u2028x")


def test_one_run_is_one_row_and_escapes_show(isolated: Path) -> None:
    _recorded(isolated)
    assert _invoke("jobs").splitlines() == ["JOB ID", SHOWN, "local_cwd://torchx/child"]
    metadata = _invoke("metadata", HOSTILE).splitlines()
    assert metadata[1:] == ["note\\nfake_key  line one\\nline two\\x1b[31m"]
    artifacts = _invoke("artifacts", HOSTILE).splitlines()
    assert len(artifacts) == 2 and artifacts[1].split() == ["model\\u2028x", "/ckpt\\n/m.pt"]
    lineage = _invoke("lineage", HOSTILE).splitlines()
    assert lineage[1].split() == ["descendant", "local_cwd://torchx/child", "model\\u2028x"]
    for out in (metadata, artifacts, lineage):
        assert not any("\x1b" in line or "\r" in line for line in out)


def test_json_keeps_the_exact_values(isolated: Path) -> None:
    _recorded(isolated)
    assert {"job_id": HOSTILE} in json.loads(_invoke("jobs", "--json"))
    data = json.loads(_invoke("metadata", HOSTILE, "--json"))
    assert data["metadata"] == {"note\nfake_key": "line one\nline two\x1b[31m"}
