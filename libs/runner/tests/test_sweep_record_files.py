"""A sweep record on disk: written whole under a fresh temp name, private to its owner, and
saved into a shared state folder the user may write to but does not own."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from torchx.runner._sweep_record import SweepRecord, load, record_path, save
from torchx.schedulers.atomic_files import write_atomic
from torchx.specs import SpecsError


def _record(**extra: object) -> SweepRecord:
    data = {
        "sweep_id": "sweep-abcd2345",
        "component": "utils.echo",
        "scheduler": "local",
        "session": "torchx",
        "base_args": [],
        "parallel": 2,
        "mode": "group",
        "trials": [{"index": 0, "args": {"msg": "a"}, "attempts": ["echo-x"]}],
        "version": 2,
        "scheduler_params": {"token": "s3cret"},
        **extra,
    }
    return SweepRecord.from_json(data, "r.json")


def test_a_temp_file_left_by_a_killed_save_blocks_no_later_save() -> None:
    record = _record()
    path = record_path(record.sweep_id)
    path.parent.mkdir(parents=True)
    # What a save killed between its open and its rename leaves: this process's pid in the
    # name, and a random one.
    left = [
        path.with_name(f".{path.name}.{os.getpid()}.tmp"),
        path.with_name(f".{path.name}.x.tmp"),
    ]
    for p in left:
        p.write_text("")
    save(record)
    loaded = load(record.sweep_id)
    assert loaded is not None and loaded.scheduler_params == {"token": "s3cret"}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in path.parent.iterdir()) == sorted(
        [path.name, *(p.name for p in left)]
    )


def test_a_failed_save_leaves_no_temp_file_and_the_previous_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    save(_record())
    path = record_path("sweep-abcd2345")

    def full_disk(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patched:
        patched.setattr(os, "replace", full_disk)
        with pytest.raises(OSError, match="No space left"):
            save(_record(parallel=5))
    assert [p.name for p in path.parent.iterdir()] == [path.name]
    loaded = load("sweep-abcd2345")
    assert loaded is not None and loaded.parallel == 2


def test_write_atomic_gives_the_mode_asked(tmp_path: Path) -> None:
    tmp_path = tmp_path / "files"
    tmp_path.mkdir()
    old = os.umask(0o077)
    try:
        write_atomic(str(tmp_path / "a.json"), {"a": 1}, 0o640)
        write_atomic(str(tmp_path / "b.json"), {"b": 1}, 0o600)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.json").stat().st_mode) == 0o640
    assert stat.S_IMODE((tmp_path / "b.json").stat().st_mode) == 0o600
    assert (tmp_path / "a.json").read_text() == '{"a":1}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.json"]


def test_a_writable_sweeps_folder_of_another_user_is_used_as_it_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A shared state folder, group-writable, that another uid made: it may not be chmod'ed.
    folder = record_path("sweep-abcd2345").parent
    folder.mkdir(parents=True)
    os.chmod(folder, 0o775)
    someone_else = os.geteuid() + 1
    monkeypatch.setattr(os, "geteuid", lambda: someone_else)
    save(_record())
    assert stat.S_IMODE(folder.stat().st_mode) == 0o775  # left as its owner made it
    assert load("sweep-abcd2345") is not None


def test_a_sweeps_folder_of_another_user_not_writable_is_named_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = record_path("sweep-abcd2345").parent
    folder.mkdir(parents=True)
    owner = os.stat(folder).st_uid
    monkeypatch.setattr(os, "geteuid", lambda: owner + 1)
    monkeypatch.setattr(os, "access", lambda path, how: False)
    with pytest.raises(SpecsError) as info:
        save(_record())
    text = str(info.value)
    assert str(folder) in text and f"uid {owner}" in text and "XDG_STATE_HOME" in text
    assert "\n" not in text


def test_the_sweeps_folder_is_checked_at_every_save() -> None:
    # A driver saves at each submission; between two saves the folder may change.
    folder = record_path("sweep-abcd2345").parent
    save(_record(parallel=1))
    os.chmod(folder, 0o755)  # loosened after the first save
    save(_record(parallel=2))
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    # removed meanwhile (a user clearing the state folder): made again, private
    for p in folder.iterdir():
        p.unlink()
    folder.rmdir()
    save(_record(parallel=3))
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    loaded = load("sweep-abcd2345")
    assert loaded is not None and loaded.parallel == 3


def test_a_file_put_where_the_sweeps_folder_was_is_named_in_one_line() -> None:
    folder = record_path("sweep-abcd2345").parent
    save(_record())
    for p in folder.iterdir():
        p.unlink()
    folder.rmdir()
    folder.write_text("not a folder\n")
    with pytest.raises(SpecsError) as info:
        save(_record(parallel=5))
    text = str(info.value)
    assert str(folder) in text and "not a folder" in text and "\n" not in text
    assert folder.read_text() == "not a folder\n"  # left as it was


def test_a_sweeps_folder_turned_another_users_after_a_save_is_named_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = record_path("sweep-abcd2345").parent
    save(_record())
    owner = os.stat(folder).st_uid
    monkeypatch.setattr(os, "geteuid", lambda: owner + 1)
    monkeypatch.setattr(os, "access", lambda path, how: False)
    with pytest.raises(SpecsError) as info:
        save(_record(parallel=5))
    text = str(info.value)
    assert f"uid {owner}" in text and "XDG_STATE_HOME" in text and "\n" not in text
    loaded = load("sweep-abcd2345")
    assert loaded is not None and loaded.parallel == 2  # the saved record is kept


# both reach the sweeps folder, and both name a file in its way the same
_SAVE_AND_LOAD: tuple[Callable[[], object], ...] = (
    lambda: save(_record()),
    lambda: load("sweep-abcd2345"),
)


def test_a_file_where_the_sweeps_folder_goes_is_named_in_one_line() -> None:
    folder = record_path("sweep-abcd2345").parent
    folder.parent.mkdir(parents=True)
    folder.write_text("not a folder\n")
    for call in _SAVE_AND_LOAD:
        with pytest.raises(SpecsError) as info:
            call()
        text = str(info.value)
        assert str(folder) in text and "not a folder" in text and "XDG_STATE_HOME" in text
        assert "\n" not in text
    assert folder.read_text() == "not a folder\n"  # left as it was


def test_a_file_where_the_state_folder_goes_is_named_in_one_line() -> None:
    state = record_path("sweep-abcd2345").parent.parent
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text("not a folder\n")
    for call in _SAVE_AND_LOAD:
        with pytest.raises(SpecsError) as info:
            call()
        text = str(info.value)
        assert f"got '{state}'" in text and "it is a file, not a folder" in text
        assert "XDG_STATE_HOME" in text and "\n" not in text
    assert state.read_text() == "not a folder\n"  # left as it was


@pytest.mark.parametrize("where", ["sweeps", "state"])
def test_a_link_to_nothing_where_a_folder_goes_is_named_with_its_target(
    where: str, tmp_path: Path
) -> None:
    folder = record_path("sweep-abcd2345").parent
    link = folder if where == "sweeps" else folder.parent
    link.parent.mkdir(parents=True, exist_ok=True)
    gone = tmp_path / "gone"
    link.symlink_to(gone)
    with pytest.raises(SpecsError) as info:
        save(_record())
    assert str(info.value) == (
        f"{where} folder: got '{link}'; it is a symbolic link to {gone}, which does not exist;"
        " make that folder, remove the link, or set XDG_STATE_HOME to a folder of your own"
    )
    assert link.is_symlink() and not gone.exists()  # nothing made, the link left as it was
    assert load("sweep-abcd2345") is None  # a read finds no record there, as before
