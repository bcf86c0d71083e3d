"""The tracker contract on every backend: put/get/[] forms, mapping behaviour, format."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from torchx.runtime.tracking import (
    FsspecResultTracker,
    InvalidKeyError,
    ResultNotFoundError,
    ResultTooLargeError,
    ResultTracker,
)

if TYPE_CHECKING:
    from conftest import Backend


def write_raw(tracker: FsspecResultTracker, path: str, data: bytes) -> None:
    """Put bytes on the store the way another tool would, bypassing the tracker."""
    tracker.fs.makedirs(path.rpartition("/")[0], exist_ok=True)
    tracker.fs.pipe_file(path, data)


def test_put_and_item_assignment_are_equivalent(backend: Backend) -> None:
    tracker = backend.tracker()
    tracker.put("foo", l2norm=1.2)
    tracker["bar"] = {"l2norm": 1.2}
    assert tracker.get("foo") == tracker["bar"] == {"l2norm": 1.2}
    assert tracker["foo"]["l2norm"] == 1.2


def test_values_round_trip_with_their_types(backend: Backend) -> None:
    tracker = backend.tracker()
    results = {"epochs": 10, "loss": 0.125, "name": "résumé ✓", "big": 2**70, "neg": -3}
    tracker["run"] = results
    back = backend.tracker()["run"]
    assert back == results
    assert [type(v) for v in back.values()] == [int, float, str, int, int]


def test_another_tracker_on_the_same_base_reads_results(backend: Backend) -> None:
    backend.tracker()["attempt_1/out"] = {"accuracy": 0.233}
    assert backend.tracker()["attempt_1/out"]["accuracy"] == 0.233


def test_int_key_and_its_text_name_the_same_results(backend: Backend) -> None:
    tracker = backend.tracker()
    tracker[7] = {"x": 1}
    assert tracker["7"] == {"x": 1}
    assert 7 in tracker
    assert list(tracker) == ["7"]


def test_slash_in_field_names_is_kept(backend: Backend) -> None:
    tracker = backend.tracker()
    tracker["k"] = {"l2norm/mean": 1.2, "l2norm/sem": 3.4}
    assert tracker["k"]["l2norm/mean"] == 1.2
    assert tracker["k"]["l2norm/sem"] == 3.4


def test_field_named_key_can_be_passed_to_put(backend: Backend) -> None:
    tracker = backend.tracker()
    tracker.put("k", key="value", self=1)
    assert tracker["k"] == {"key": "value", "self": 1}
    tracker.put(key="k2", acc=0.5)  # pytorch/torchx 0.7's form
    assert tracker["k2"] == {"acc": 0.5}


def test_put_replaces_previous_results(backend: Backend) -> None:
    tracker = backend.tracker()
    tracker["k"] = {"a": 1, "b": 2}
    tracker["k"] = {"c": 3}
    assert tracker["k"] == {"c": 3}
    assert len(tracker) == 1


def test_empty_results_are_stored(backend: Backend) -> None:
    tracker = backend.tracker()
    tracker.put("nothing")
    assert "nothing" in tracker
    assert tracker["nothing"] == {}


def test_mapping_behaviour(backend: Backend) -> None:
    tracker = backend.tracker()
    assert len(tracker) == 0
    assert list(tracker) == []
    assert "a" not in tracker
    tracker["b"] = {"v": 2}
    tracker["a"] = {"v": 1}
    tracker["a/x"] = {"v": 3}  # key "a" and folder "a" live side by side
    tracker[10] = {"v": 4}
    assert len(tracker) == 4
    assert list(tracker) == ["10", "a", "a/x", "b"]
    assert "a" in tracker and "a/x" in tracker and 10 in tracker
    assert "a/y" not in tracker and "x" not in tracker
    assert dict(tracker.items()) == {
        "10": {"v": 4},
        "a": {"v": 1},
        "a/x": {"v": 3},
        "b": {"v": 2},
    }


def test_missing_key_raises_key_error_naming_key_and_base(backend: Backend) -> None:
    tracker = backend.tracker()
    tracker["present"] = {"v": 1}
    with pytest.raises(KeyError) as caught:
        tracker["absent"]
    assert isinstance(caught.value, ResultNotFoundError)
    assert str(caught.value) == f"no results for key 'absent' in tracker base {backend.base!r}"
    assert caught.value.key == "absent"
    assert caught.value.tracker_base == backend.base
    with pytest.raises(ResultNotFoundError, match="'absent/deeper'"):
        tracker.get("absent/deeper")
    with pytest.raises(ResultNotFoundError, match="'present/below'"):
        tracker.get("present/below")


def test_returned_results_are_a_copy(backend: Backend) -> None:
    tracker = backend.tracker()
    results = {"v": 1}
    tracker["k"] = results
    results["v"] = 2
    got = tracker["k"]
    got["v"] = 3
    assert tracker["k"] == {"v": 1}


def test_documents_are_plain_json_at_the_key_path(backend: Backend) -> None:
    tracker = backend.tracker()
    tracker["attempt_1/out"] = {"accuracy": 0.233, "note": "ok"}
    path = tracker.path_of("attempt_1/out")
    assert path.endswith(
        "runs/123/attempt_1/out.json" if backend.name == "s3" else "/attempt_1/out.json"
    )
    raw = tracker.fs.cat_file(path)
    assert json.loads(raw) == {"accuracy": 0.233, "note": "ok"}


def test_documents_written_by_other_tools_are_read(backend: Backend) -> None:
    tracker = backend.tracker()
    write_raw(tracker, tracker.path_of("external"), b'{\n  "score": 3, "label": "x"\n}\n')
    assert tracker["external"] == {"score": 3, "label": "x"}
    assert "external" in tracker


def test_listing_skips_temporary_and_foreign_files(backend: Backend) -> None:
    tracker = backend.tracker()
    tracker["real"] = {"v": 1}
    folder = tracker.path_of("real").rpartition("/")[0]
    write_raw(tracker, f"{folder}/.real.json.0123abcd.tmp", b'{"v": 2}')
    write_raw(tracker, f"{folder}/notes.txt", b"not a result")
    write_raw(tracker, f"{folder}/.hidden/x.json", b"{}")
    assert list(tracker) == ["real"]


def test_trackers_on_different_bases_do_not_share_keys(backend: Backend) -> None:
    other = FsspecResultTracker(backend.base + "-other", **backend.storage_options)
    backend.tracker()["1"] = {"l2norm": 1.2}
    other["1"] = {"l2norm": 3.4}
    assert backend.tracker()["1"] == {"l2norm": 1.2}
    assert other["1"] == {"l2norm": 3.4}
    assert list(backend.tracker()) == ["1"]


def test_base_with_trailing_slash_is_the_same_base(backend: Backend) -> None:
    backend.tracker()["k"] = {"v": 1}
    again = FsspecResultTracker(backend.base + "/", **backend.storage_options)
    assert again["k"] == {"v": 1}


def test_file_url_and_plain_path_are_the_same_base(tmp_path: object) -> None:
    base = f"{tmp_path}/t"
    FsspecResultTracker(base)["k"] = {"v": 1}
    assert FsspecResultTracker(f"file://{base}")["k"] == {"v": 1}


def test_path_like_base_is_accepted(tmp_path: object) -> None:
    from pathlib import Path

    tracker = FsspecResultTracker(Path(str(tmp_path)) / "t")
    tracker["k"] = {"v": 1}
    assert (Path(str(tmp_path)) / "t" / "k.json").read_text() == '{"v": 1}'


def test_memory_base_at_the_root() -> None:
    tracker = FsspecResultTracker("memory://")
    tracker["root-level-key-for-test"] = {"v": 1}
    try:
        assert "root-level-key-for-test" in list(tracker)
        assert FsspecResultTracker("memory:///")["root-level-key-for-test"] == {"v": 1}
    finally:
        tracker.fs.rm(tracker.path_of("root-level-key-for-test"))


@pytest.mark.parametrize("base", ["", "   ", None, 3])
def test_bad_tracker_base_is_refused(base: object) -> None:
    with pytest.raises(
        ValueError, match="tracker_base must be a non-empty local path or fsspec URL"
    ) as caught:
        FsspecResultTracker(base)  # type: ignore[arg-type]
    assert repr(base) in str(caught.value)


def test_repr_names_the_base() -> None:
    assert repr(FsspecResultTracker("memory://x")) == "FsspecResultTracker('memory://x')"


def test_is_a_result_tracker() -> None:
    assert isinstance(FsspecResultTracker("memory://x"), ResultTracker)


def test_base_class_can_be_subclassed_with_four_hooks() -> None:
    from torchx.runtime.tracking import Results

    class DictTracker(ResultTracker):
        def __init__(self) -> None:
            self.data: dict[str, Results] = {}

        def _store(self, key: str, results: Results) -> None:
            self.data[key] = results

        def _load(self, key: str) -> Results:
            if key not in self.data:
                raise ResultNotFoundError(key, "dict")
            return dict(self.data[key])

        def _has(self, key: str) -> bool:
            return key in self.data

        def _list(self) -> list[str]:
            return sorted(self.data)

    tracker = DictTracker()
    tracker.put(1, a=1)
    tracker["b/c"] = {"x": "y"}
    assert list(tracker) == ["1", "b/c"] and len(tracker) == 2 and 1 in tracker
    assert tracker.get("1") == {"a": 1}
    with pytest.raises(ValueError, match=re.escape("'a/../b'")):
        tracker["a/../b"] = {"x": 1}
    with pytest.raises(ValueError, match="field 'x'"):
        tracker.put("k", x=float("nan"))
    assert list(tracker) == ["1", "b/c"]


def test_a_tracker_written_for_07_with_put_and_get_still_works() -> None:
    from torchx.runtime.tracking import Result, Results

    class DictTracker(ResultTracker):  # as pytorch/torchx 0.7 documented subclassing
        def __init__(self) -> None:
            self.data: dict[str, Results] = {}

        def put(self, key: int | str, **results: Result) -> None:
            self.data[str(key)] = dict(results)

        def get(self, key: int | str) -> Results:
            return dict(self.data.get(str(key), {}))

    tracker = DictTracker()
    tracker["foo"] = {"l2norm": 1.2}
    tracker.put("bar", l2norm=3.4)
    assert tracker["foo"] == {"l2norm": 1.2} and tracker["bar"]["l2norm"] == 3.4
    assert tracker[7] == {}
    with pytest.raises(ValueError, match="field 'x'"):
        tracker["k"] = {"x": float("nan")}
    assert "k" not in tracker.data
    with pytest.raises(NotImplementedError, match=r"DictTracker .*implement _has\(key\)"):
        "foo" in tracker  # noqa: B015


def test_a_07_tracker_gets_the_key_as_given_through_brackets_too() -> None:
    """0.7's ``[]`` handed put and get the key as given, so ``t[7]`` is ``t.get(7)``."""
    from torchx.runtime.tracking import InvalidKeyError, Result, Results

    class RawKeys(ResultTracker):  # keeps keys as given: an int and its text differ
        def __init__(self) -> None:
            self.data: dict[int | str, Results] = {}

        def put(self, key: int | str, **results: Result) -> None:
            self.data[key] = dict(results)

        def get(self, key: int | str) -> Results:
            return dict(self.data.get(key, {}))

    tracker = RawKeys()
    tracker.put(7, a=1)
    assert tracker[7] == {"a": 1} == tracker.get(7)
    tracker[8] = {"b": 2}
    assert tracker.data == {7: {"a": 1}, 8: {"b": 2}}
    with pytest.raises(InvalidKeyError, match="'a//b'"):  # still checked first
        tracker["a//b"] = {"c": 3}
    assert list(tracker.data) == [7, 8]


def test_a_tracker_calling_super_put_and_get_is_told_what_to_implement() -> None:
    from torchx.runtime.tracking import Result, Results

    class Logged(ResultTracker):  # wraps put/get, but stores nowhere: there are no hooks
        def put(self, key: int | str = "k", /, **results: Result) -> None:
            super().put(key, **results)

        def get(self, key: int | str) -> Results:
            return super().get(key)

    expected = (
        r"^Logged\.{0} calls ResultTracker\.{0} \(super\(\)\.{0}\), which needs the hook"
        r" {1}: implement _store, _load, _has and _list, or make put and get store and read"
        r" on their own, as 0.7 trackers did$"
    )
    for write in (lambda t: t.put("k", a=1), lambda t: t.__setitem__("k", {"a": 1})):
        with pytest.raises(NotImplementedError, match=expected.format("put", "_store")):
            write(Logged())
    for read in (lambda t: t.get("k"), lambda t: t["k"]):
        with pytest.raises(NotImplementedError, match=expected.format("get", "_load")):
            read(Logged())


def test_a_tracker_missing_its_methods_is_told_both_ways_to_finish_it() -> None:
    from torchx.runtime.tracking import Result, Results

    class Empty(ResultTracker):
        pass

    class PutOnly(ResultTracker):
        def put(self, key: int | str = "k", /, **results: Result) -> None:
            pass

    class GetOnly(ResultTracker):
        def get(self, key: int | str) -> Results:
            return {}

    hooks = "_has, _list, _load, _store"
    with pytest.raises(TypeError) as caught:
        Empty()
    assert str(caught.value) == (
        f"Empty cannot be instantiated: implement the hooks {hooks}, or put and get"
        " (as 0.7 trackers did)"
    )
    with pytest.raises(TypeError) as caught:
        PutOnly()
    assert str(caught.value) == (
        f"PutOnly implements put but not get: implement get too (as 0.7 trackers did),"
        f" or the hooks {hooks}"
    )
    with pytest.raises(TypeError, match=r"^GetOnly implements get but not put: implement put"):
        GetOnly()


def test_errors_survive_pickling_between_processes() -> None:
    import pickle

    from torchx.runtime.tracking import (
        CorruptResultError,
        InvalidKeyError,
        InvalidResultError,
        ResultTooLargeError,
    )

    errors: list[Exception] = [
        InvalidKeyError("../x", "no"),
        InvalidResultError("k", "f", "bad"),
        InvalidResultError("k", None, "bad"),
        ResultNotFoundError("k", "s3://b/base"),
        CorruptResultError("/p/k.json", "empty file"),
        ResultTooLargeError("/p/k.json", 9000, 500),
        ResultTooLargeError("/p/k.json", None, 500),
    ]
    for error in errors:
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is type(error)
        assert str(copy) == str(error)
        assert vars(copy) == vars(error)
    assert ResultNotFoundError.__module__ == "torchx.runtime.tracking"


class _UsersKeyError(InvalidKeyError):
    """A user's own subclass: one more parameter, kept under another name."""

    def __init__(self, key: object, reason: str, extra: str = "default") -> None:
        super().__init__(key, reason)
        self._extra = extra


class _UsersTooLargeError(ResultTooLargeError):
    def __init__(self, path: str, size: int | None, limit: int, hint: str = "h") -> None:
        super().__init__(path, size, limit)
        self.the_hint = hint


def test_a_users_subclass_with_its_own_parameters_still_pickles() -> None:
    import pickle

    # Rebuilt from its built-in class's arguments, as each error's own reduce did in 0.7:
    # an extra parameter kept under another name takes its default again.
    key_error = _UsersKeyError("../x", "no", extra="set")
    copy = pickle.loads(pickle.dumps(key_error))
    assert type(copy) is _UsersKeyError and str(copy) == str(key_error)
    assert (copy.key, copy.reason, copy._extra) == ("../x", "no", "default")
    too_large = _UsersTooLargeError("/p/k.json", 9000, 500, hint="x")
    copy_large = pickle.loads(pickle.dumps(too_large))
    assert type(copy_large) is _UsersTooLargeError and str(copy_large) == str(too_large)
    assert (copy_large.size, copy_large.limit, copy_large.the_hint) == (9000, 500, "h")


def test_listing_sees_writes_made_through_another_filesystem_instance(backend: Backend) -> None:
    """Another process's writes: a separate fsspec instance, so no shared listing cache."""
    reader = backend.tracker()
    reader["first"] = {"v": 1}
    assert list(reader) == ["first"] and "second" not in reader  # listings now cached
    writer = FsspecResultTracker(backend.base, skip_instance_cache=True, **backend.storage_options)
    assert writer.fs is not reader.fs or backend.name == "memory"
    writer["second"] = {"v": 2}
    writer["deeper/third"] = {"v": 3}
    assert "second" in reader and "deeper/third" in reader
    assert len(reader) == 3
    assert list(reader) == ["deeper/third", "first", "second"]
    assert reader["deeper/third"] == {"v": 3}


def test_listing_skips_files_whose_names_are_not_keys(tmp_path: Path) -> None:
    tracker = FsspecResultTracker(str(tmp_path))
    tracker["ok"] = {"v": 1}
    (tmp_path / "back\\slash.json").write_text("{}")
    (tmp_path / ("x" * 220 + ".json")).write_text("{}")
    (tmp_path / "r.json").mkdir()
    (tmp_path / "r.json" / "inner.json").write_text("{}")
    assert list(tracker) == ["ok"]
