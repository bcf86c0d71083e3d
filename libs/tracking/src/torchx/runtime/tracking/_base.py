"""The backend-independent tracker contract: key and value checks, mapping behaviour."""

from __future__ import annotations

import abc
from collections.abc import Iterator, Mapping

from ._keys import normalize_key
from ._results import Result, Results, validate_results

# typing is not imported at run time (see the README's Cost section); Self is only an
# annotation here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Self

Key = int | str
"""A tracker key: an int, or a str that may use '/' to make subfolders."""

# ``put``'s key when none is given first (0.7's ``put(key=k, **results)``).
_KEY_BY_NAME = "\0"


class ResultTracker(abc.ABC):
    """Stores small results of an app under a key, for other apps to read back.

    ``put``/``get`` and item access are two spellings of the same thing::

        tracker.put("foo", l2norm=1.2)
        tracker["foo"] = {"l2norm": 1.2}
        tracker.get("foo")["l2norm"] == 1.2
        tracker["foo"]["l2norm"] == 1.2

    Keys are ``int`` or ``str``; an int is stored as its decimal text, so ``1`` and
    ``"1"`` name the same results. A str key may contain '/' to group results into
    subfolders (``"attempt_1/out"``), but it stays relative to the tracker: ``..``,
    ``.``-prefixed, empty or over-long parts, absolute paths, backslashes, NUL and
    control characters raise :class:`InvalidKeyError`.

    Values are ``int`` (below 2**3300), ``float`` (finite: NaN and infinities are
    refused so stored documents stay strict JSON) or ``str`` of at most 1 KiB in
    UTF-8. ``bool``,
    ``bytes``, ``None``, lists and nested mappings raise :class:`InvalidResultError`
    naming the key and field, and nothing is written. By convention a '/' inside a
    field name marks a statistic, e.g. ``{"l2norm/mean": 1.2, "l2norm/sem": 3.4}``.

    A tracker behaves like a mapping from keys to results: ``key in tracker``,
    ``for key in tracker`` (keys come back as str), ``len(tracker)`` and
    ``tracker.items()``. ``get`` is an alias of ``tracker[key]``: a missing key raises
    :class:`ResultNotFoundError` (a ``KeyError``) naming the key and the tracker base,
    unlike ``dict.get``, which returns None.

    A tracker is not a central service: it promises no more ordering between
    ``put`` and ``get`` on one key, from one or many processes, than its backing
    store does. Use a unique key per writer (a job id, ``f"{experiment}/{trial}"``,
    ``f"{job}/{rank}"``) rather than having several writers race on one key.

    Subclasses implement the four storage hooks ``_store``, ``_load``, ``_has`` and
    ``_list``; they receive keys and results already checked by this class. A subclass
    written for pytorch/torchx 0.7, which implements ``put`` and ``get`` instead, still
    works: ``[]`` reaches them with the key as given (as 0.7's did), once the key and
    results are checked as here.
    """

    def __new__(cls, *args: object, **kwargs: object) -> Self:
        # Python's own error names only the abstract hooks; a tracker written for 0.7
        # that lacks get (or put) is told that those two are a contract too.
        if cls.__abstractmethods__:
            raise TypeError(_unimplemented(cls))
        return super().__new__(cls)

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        # 0.7 made put and get the abstract methods; a tracker written then implements
        # only them, and would otherwise not instantiate (the hooks are abstract here).
        if cls.put is not ResultTracker.put and cls.get is not ResultTracker.get:
            for hook, by_07 in _HOOKS_OF_07_TRACKERS.items():
                if getattr(cls, hook) is getattr(ResultTracker, hook):
                    setattr(cls, hook, by_07)

    def put(self, key: Key = _KEY_BY_NAME, /, **results: Result) -> None:
        """Store ``results`` under ``key``, replacing what was there.

        Given first, ``key`` leaves the name ``key`` free for a result (``put("k",
        key="v")``); pytorch/torchx 0.7's ``put(key="k", acc=0.9)`` works too.
        """
        if key == _KEY_BY_NAME:
            if "key" not in results:
                raise TypeError("put() needs a key: tracker.put(key, **results)")
            key = results.pop("key")  # type: ignore[assignment]  # normalize_key checks it
        name = normalize_key(key)
        if type(self)._store is _store_by_put:  # only a subclass's super().put gets here
            raise NotImplementedError(_super_called(self, "put", "_store"))
        self._store(name, validate_results(name, results))

    def get(self, key: Key) -> Results:
        """The results stored under ``key``; ResultNotFoundError if there are none."""
        if type(self)._load is _load_by_get:  # only a subclass's super().get gets here
            raise NotImplementedError(_super_called(self, "get", "_load"))
        return self._load(normalize_key(key))

    def __setitem__(self, key: Key, results: Mapping[str, Result]) -> None:
        name = normalize_key(key)
        checked = validate_results(name, results)
        if type(self)._store is _store_by_put:
            self.put(key, **checked)  # 0.7's put got the key as given, so t[7] is t.put(7)
        else:
            self._store(name, checked)

    def __getitem__(self, key: Key) -> Results:
        name = normalize_key(key)
        if type(self)._load is _load_by_get:
            return self.get(key)  # as given, as 0.7 did: what put(7) stored, get(7) finds
        return self._load(name)

    def __contains__(self, key: object) -> bool:
        return self._has(normalize_key(key))

    def __iter__(self) -> Iterator[str]:
        return iter(self._list())

    def __len__(self) -> int:
        return len(self._list())

    def items(self) -> Iterator[tuple[str, Results]]:
        """Each stored key with its results, in key order."""
        for name in self._list():
            yield name, self._load(name)

    @abc.abstractmethod
    def _store(self, key: str, results: Results) -> None:
        """Write ``results`` under ``key`` so that no reader sees a partial write."""

    @abc.abstractmethod
    def _load(self, key: str) -> Results:
        """Read ``key``'s results; ResultNotFoundError if absent."""

    @abc.abstractmethod
    def _has(self, key: str) -> bool:
        """Whether results are stored under ``key``."""

    @abc.abstractmethod
    def _list(self) -> list[str]:
        """Every stored key, sorted."""


def _store_by_put(self: ResultTracker, key: str, results: Results) -> None:
    self.put(key, **results)


def _load_by_get(self: ResultTracker, key: str) -> Results:
    return self.get(key)


def _super_called(tracker: ResultTracker, method: str, hook: str) -> str:
    return (
        f"{type(tracker).__name__}.{method} calls ResultTracker.{method} (super().{method}),"
        f" which needs the hook {hook}: implement _store, _load, _has and _list, or make put"
        " and get store and read on their own, as 0.7 trackers did"
    )


def _unimplemented(cls: type[ResultTracker]) -> str:
    missing = ", ".join(sorted(cls.__abstractmethods__))
    has_put, has_get = cls.put is not ResultTracker.put, cls.get is not ResultTracker.get
    if has_put != has_get:
        have, lack = ("put", "get") if has_put else ("get", "put")
        return (
            f"{cls.__name__} implements {have} but not {lack}: implement {lack} too"
            f" (as 0.7 trackers did), or the hooks {missing}"
        )
    if has_put:  # put and get filled the hooks; a subclass added abstract methods of its own
        return f"{cls.__name__} cannot be instantiated: implement {missing}"
    return (
        f"{cls.__name__} cannot be instantiated: implement the hooks {missing},"
        " or put and get (as 0.7 trackers did)"
    )


def _not_listed(self: ResultTracker, *key: str) -> bool | list[str]:
    raise NotImplementedError(
        f"{type(self).__name__} implements put and get (as pytorch/torchx 0.7 trackers did);"
        " implement _has(key) and _list() too to use `in`, iteration and len()"
    )


_HOOKS_OF_07_TRACKERS = {
    "_store": _store_by_put,
    "_load": _load_by_get,
    "_has": _not_listed,
    "_list": _not_listed,
}
