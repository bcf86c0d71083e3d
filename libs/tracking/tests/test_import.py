"""Importing the package stays cheap: fsspec loads with the first tracker, not before,
and typing not at all."""

from __future__ import annotations

import types
from typing import TYPE_CHECKING

import torchx.runtime.tracking as tracking

if TYPE_CHECKING:
    from torchx_test_fixtures_imports import ModulesAfter


def test_import_does_not_load_fsspec(modules_after: ModulesAfter) -> None:
    loaded = modules_after("import torchx.runtime.tracking")
    assert "torchx.runtime.tracking" in loaded
    assert not {m for m in loaded if m.split(".")[0] in {"fsspec", "s3fs", "torch"}}
    assert "typing" not in loaded  # as the README says


def test_first_tracker_loads_fsspec(modules_after: ModulesAfter) -> None:
    loaded = modules_after(
        "from torchx.runtime.tracking import FsspecResultTracker\nFsspecResultTracker('memory://x')"
    )
    assert "fsspec" in loaded


def test_public_api_is_listed(modules_after: ModulesAfter) -> None:
    # submodules (``tracking.api`` once imported) are attributes too, not names of the API
    assert sorted(tracking.__all__) == sorted(
        name
        for name, value in vars(tracking).items()
        if not name.startswith("_")
        and name != "annotations"
        and not isinstance(value, types.ModuleType)
    )
    for name in tracking.__all__:
        assert getattr(tracking, name) is not None
