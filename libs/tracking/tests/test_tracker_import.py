"""`import torchx.tracker` stays light: no fsspec, no mlflow, no dataclasses machinery."""

from __future__ import annotations

import subprocess
import sys


def modules_after(code: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", f"import sys\n{code}\nprint(*sorted(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return set(done.stdout.split())


def test_import_loads_no_backend_library() -> None:
    loaded = modules_after("import torchx.tracker, torchx.tracker.api")
    heavy = {"fsspec", "mlflow", "torch", "dataclasses", "typing", "json"}
    assert not {m for m in loaded if m.split(".")[0] in heavy}


def test_mlflow_module_imports_mlflow_only_when_a_tracker_is_made() -> None:
    loaded = modules_after("import torchx.tracker.mlflow")
    assert not {m for m in loaded if m.split(".")[0] == "mlflow"}
