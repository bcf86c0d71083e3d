"""The size of what a workspace ships, and the warning past LARGE_WORKSPACE_BYTES.

Large files are sparse (``truncate``): their size is counted, no disk is used.
"""

from __future__ import annotations

from pathlib import Path

from torchx.workspace.size import (
    LARGE_WORKSPACE_BYTES,
    human_size,
    large_workspace_warning,
    measure_workspace,
)


def _sparse(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        f.truncate(size)


def test_a_large_workspace_names_its_size_largest_entries_and_the_fix(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("print('hi')\n")
    _sparse(tmp_path / ".venv" / "lib" / "torch.so", 150 << 20)
    _sparse(tmp_path / "data" / "a.bin", 40 << 20)
    _sparse(tmp_path / "data" / "b.bin", 20 << 20)
    _sparse(tmp_path / "ckpt.pt", 10 << 20)
    _sparse(tmp_path / "notes.bin", 5 << 20)

    size = measure_workspace(str(tmp_path))
    assert size.total == (225 << 20) + len("print('hi')\n")
    assert size.files == 6
    assert size.largest() == [(".venv", 150 << 20), ("data", 60 << 20), ("ckpt.pt", 10 << 20)]

    warning = large_workspace_warning(str(tmp_path))
    assert warning == (
        f"torchx: warning: the workspace {tmp_path} ships 225.0 MiB (6 files), over "
        "100.0 MiB; largest: .venv/ 150.0 MiB, data/ 60.0 MiB, ckpt.pt 10.0 MiB; add them "
        'to .torchxignore, or --workspace "" to skip'
    )


def test_what_torchxignore_leaves_out_is_not_counted(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("print('hi')\n")
    _sparse(tmp_path / "data" / "big.bin", 200 << 20)
    assert large_workspace_warning(str(tmp_path)) is not None
    (tmp_path / ".torchxignore").write_text("data\n")
    assert large_workspace_warning(str(tmp_path)) is None
    assert measure_workspace(str(tmp_path)).by_entry == {"train.py": len("print('hi')\n")}


def test_the_limit_is_exclusive_and_a_file_url_is_measured(tmp_path: Path) -> None:
    _sparse(tmp_path / "exact.bin", LARGE_WORKSPACE_BYTES)
    assert large_workspace_warning(str(tmp_path)) is None
    _sparse(tmp_path / "one_more", 1)
    assert large_workspace_warning(f"file://{tmp_path}") is not None
    assert large_workspace_warning(str(tmp_path), limit=2 << 30) is None


def test_human_size() -> None:
    assert human_size(0) == "0 B"
    assert human_size(1023) == "1023 B"
    assert human_size(1536) == "1.5 KiB"
    assert human_size(5 << 30) == "5.0 GiB"
    assert human_size(3 << 40) == "3.0 TiB"
