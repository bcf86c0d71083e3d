"""`import torchx.tracker` stays light: no fsspec, no mlflow, no dataclasses machinery."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torchx_test_fixtures_imports import ModulesAfter


def test_import_loads_no_backend_library(modules_after: ModulesAfter) -> None:
    loaded = modules_after("import torchx.tracker, torchx.tracker.api")
    heavy = {"fsspec", "mlflow", "torch", "dataclasses", "typing", "json"}
    assert not {m for m in loaded if m.split(".")[0] in heavy}


def test_mlflow_module_imports_mlflow_only_when_a_tracker_is_made(
    modules_after: ModulesAfter,
) -> None:
    loaded = modules_after("import torchx.tracker.mlflow")
    assert not {m for m in loaded if m.split(".")[0] == "mlflow"}
