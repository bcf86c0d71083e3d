"""Importing the package stays cheap: fsspec loads with the first tracker, not before."""

from __future__ import annotations

import subprocess
import sys
import types

import torchx.runtime.tracking as tracking


def modules_after(code: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", f"import sys\n{code}\nprint(*sorted(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return set(done.stdout.split())


def test_import_does_not_load_fsspec() -> None:
    loaded = modules_after("import torchx.runtime.tracking")
    assert "torchx.runtime.tracking" in loaded
    assert not {m for m in loaded if m.split(".")[0] in {"fsspec", "s3fs", "torch"}}


def test_first_tracker_loads_fsspec() -> None:
    loaded = modules_after(
        "from torchx.runtime.tracking import FsspecResultTracker\nFsspecResultTracker('memory://x')"
    )
    assert "fsspec" in loaded


def test_public_api_is_listed() -> None:
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
