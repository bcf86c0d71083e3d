"""Many writers at once: real processes on shared stores, threads on the memory store."""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from torchx.runtime.tracking import (
    CorruptResultError,
    FsspecResultTracker,
    ResultNotFoundError,
    Results,
)

if TYPE_CHECKING:
    from conftest import Backend, StartTogether

WRITER = Path(__file__).with_name("writer_process.py")
FIELDS = 10
FIELD_CHARS = 1000


def expected_shared(writer: int, i: int) -> Results:
    """What writer_process.py puts under "shared" (about 10 KB, all from one writer)."""
    letter = chr(ord("a") + writer)
    document: Results = {"writer": writer, "i": i}
    for field in range(FIELDS):
        document[f"payload/{field}"] = letter * FIELD_CHARS
    return document


def assert_complete(document: Results, writers: int, count: int) -> None:
    writer, i = document["writer"], document["i"]
    assert isinstance(writer, int) and 0 <= writer < writers
    assert isinstance(i, int) and 0 <= i < count
    assert document == expected_shared(writer, i)


def leftover_temporaries(tracker: FsspecResultTracker) -> list[str]:
    root = tracker.path_of("x").rpartition("/")[0]
    return [p for p in tracker.fs.find(root) if "/." in p]


@dataclass
class WriterRun:
    """What several writer processes left behind, and what was read while they wrote."""

    backend: Backend
    writers: int
    count: int
    reads_during_run: list[Results | CorruptResultError]


@pytest.fixture(scope="module", params=["local", "s3"])
def writer_run(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    backend_maker: Callable[[str, Path, pytest.FixtureRequest], Backend],
    start_together: StartTogether,
) -> WriterRun:
    """Writer processes racing on a store they share; run once per backend, as each
    process pays for its own interpreter and client start-up."""
    tmp_path = tmp_path_factory.mktemp(f"writers-{request.param}")
    backend = backend_maker(request.param, tmp_path, request)
    writers, count = (6, 40) if backend.name == "local" else (3, 12)
    go_file = tmp_path / "go"
    commands = [
        [sys.executable, str(WRITER), backend.base, str(w), str(count), str(go_file)]
        for w in range(writers)
    ]
    processes = start_together(commands, backend.child_env(), go_file)
    tracker = backend.tracker()
    reads: list[Results | CorruptResultError] = []
    while any(p.poll() is None for p in processes):
        try:
            reads.append(tracker["shared"])
        except ResultNotFoundError:
            pass
        except CorruptResultError as partial:  # a torn write; the test reports it
            reads.append(partial)
    for process in processes:
        _, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, stderr
    return WriterRun(backend, writers, count, reads)


def test_processes_writing_distinct_keys_lose_nothing(writer_run: WriterRun) -> None:
    tracker = writer_run.backend.tracker()
    writers, count = writer_run.writers, writer_run.count
    expected = {f"writer_{w}/result_{i}" for w in range(writers) for i in range(count)}
    assert set(tracker) == expected | {"shared"}
    assert len(tracker) == writers * count + 1
    for w in range(writers):
        for i in range(count):
            assert tracker[f"writer_{w}/result_{i}"] == {"writer": w, "i": i}
    assert leftover_temporaries(tracker) == []


def test_processes_writing_one_key_leave_one_complete_document(writer_run: WriterRun) -> None:
    tracker = writer_run.backend.tracker()
    writers, count = writer_run.writers, writer_run.count
    final = tracker["shared"]
    assert_complete(final, writers, count)
    assert final["i"] == count - 1  # whichever writer won, its last put was its final one
    # Every read taken while they raced was one whole document from one writer.
    for document in writer_run.reads_during_run:
        assert not isinstance(document, CorruptResultError), (
            f"a reader saw a partial write: {document}"
        )
        assert_complete(document, writers, count)
    assert leftover_temporaries(tracker) == []


def run_threads(target: Callable[[int], None], writers: int) -> None:
    errors: list[BaseException] = []

    def guarded(writer: int) -> None:
        try:
            target(writer)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=guarded, args=(w,)) for w in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_threads_on_memory_store(make_backend: Callable[[str], Backend]) -> None:
    """The memory store lives inside one process, so its writers are threads."""
    backend = make_backend("memory")
    writers, count = 6, 50

    def write_distinct(writer: int) -> None:
        tracker = backend.tracker()
        for i in range(count):
            tracker[f"writer_{writer}/result_{i}"] = {"writer": writer, "i": i}

    def write_shared(writer: int) -> None:
        tracker = backend.tracker()
        for i in range(count):
            tracker["shared"] = expected_shared(writer, i)

    stop = threading.Event()
    reads: list[Results] = []

    def read_shared() -> None:
        tracker = backend.tracker()
        while not stop.is_set():
            with contextlib.suppress(ResultNotFoundError):
                reads.append(tracker["shared"])

    reader = threading.Thread(target=read_shared)
    reader.start()
    try:
        run_threads(write_distinct, writers)
        run_threads(write_shared, writers)
    finally:
        stop.set()
        reader.join()
    tracker = backend.tracker()
    assert len(tracker) == writers * count + 1
    for document in [*reads, tracker["shared"]]:
        assert_complete(document, writers, count)
    for w in range(writers):
        for i in range(count):
            assert tracker[f"writer_{w}/result_{i}"] == {"writer": w, "i": i}


def test_a_failed_local_write_leaves_no_temporary(tmp_path: Path) -> None:
    tracker = FsspecResultTracker(str(tmp_path))
    (tmp_path / "k.json").mkdir()  # a folder where the document should go: the rename fails
    with pytest.raises(IsADirectoryError):
        tracker["k"] = {"v": 2}
    assert sorted(os.listdir(tmp_path)) == ["k.json"]
    assert os.listdir(tmp_path / "k.json") == []


def test_generic_backend_moves_a_temporary_into_place(tmp_path: Path) -> None:
    """The strategy for backends without a special case (temporary file, then fs.mv),
    exercised on local disk, including a move that fails."""
    from fsspec.implementations.local import LocalFileSystem

    from torchx.runtime.tracking._stores import RenameStore

    class MoveRefusingFileSystem(LocalFileSystem):  # type: ignore[misc]
        def mv(self, *args: Any, **kwargs: Any) -> None:
            raise PermissionError("moves are refused here")

    store = RenameStore(LocalFileSystem())
    target = f"{tmp_path}/a/k.json"
    store.write(target, b'{"v": 1}')
    store.write(target, b'{"v": 2}')
    assert store.read(target) == b'{"v": 2}'
    assert os.listdir(tmp_path / "a") == ["k.json"]

    refusing = RenameStore(MoveRefusingFileSystem(skip_instance_cache=True))
    with pytest.raises(PermissionError, match="moves are refused here"):
        refusing.write(target, b'{"v": 3}')
    assert store.read(target) == b'{"v": 2}'
    assert os.listdir(tmp_path / "a") == ["k.json"]


@pytest.mark.parametrize(
    "interruption", [KeyboardInterrupt(), OSError(errno.ENOSPC, "No space left on device")]
)
def test_an_upload_cut_short_leaves_no_temporary(
    tmp_path: Path, interruption: BaseException
) -> None:
    """Ctrl-C or a full disk part way through the generic backend's upload: the partial
    temporary is removed and the document keeps its old results."""
    from fsspec.implementations.local import LocalFileSystem

    from torchx.runtime.tracking._stores import RenameStore

    class CutShortFileSystem(LocalFileSystem):  # type: ignore[misc]
        def pipe_file(self, path: str, value: bytes, **kwargs: Any) -> None:
            with open(path, "wb") as handle:
                handle.write(value[: len(value) // 2])
            raise interruption

    target = f"{tmp_path}/a/k.json"
    RenameStore(LocalFileSystem()).write(target, b'{"v": 1}')
    with pytest.raises(type(interruption)):
        RenameStore(CutShortFileSystem(skip_instance_cache=True)).write(target, b'{"v": 2}')
    assert os.listdir(tmp_path / "a") == ["k.json"]
    assert (tmp_path / "a" / "k.json").read_bytes() == b'{"v": 1}'


def test_ctrl_c_as_the_temporary_opens_leaves_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C can arrive after open() has made the file but before it returns."""
    from torchx.runtime.tracking import _stores

    tracker = FsspecResultTracker(str(tmp_path))
    tracker["k"] = {"v": 1}

    def open_then_interrupted(path: str, mode: str) -> Any:
        open(path, mode).close()
        raise KeyboardInterrupt

    monkeypatch.setattr(_stores, "open", open_then_interrupted, raising=False)
    with pytest.raises(KeyboardInterrupt):
        tracker["k"] = {"v": 2}
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["k.json"]
    assert tracker["k"] == {"v": 1}
