"""A call's files: what the launcher writes before the job starts, what each rank writes back.

In the call's folder:

- ``call.json``: ``{"format": "torchx-function-call", "version": 1, "world_size": N,
  "max_result_bytes": LIMIT}`` (a call without ``max_result_bytes`` has the default limit);
- ``call.pkl``: ``(fn, args, kwargs)`` pickled with cloudpickle;
- ``rank-R.pkl``: rank R's return value, or the exception it raised, pickled;
- ``rank-R.json``: rank R's outcome, written last, so its presence means the rank finished:
  ``{"version": 1, "rank": R, "raised": bool, "type": "module.Name", "message": str,
  "traceback": str, "pickled": bool, "pickle_error": str}``.

Only the function, its arguments and its outcome are pickled; the metadata is JSON.

Every file the launcher reads back has a bound, so reading one costs memory in proportion
to what the user allowed, never to what a job happened to write: a pickled outcome at most
the call's ``max_result_bytes`` (the job refuses to write more, the reader to read more),
an outcome's JSON at most ``MAX_RECORD_BYTES``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import traceback
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from torchx.runtime.function._store import Store

FORMAT = "torchx-function-call"
VERSION = 1
CALL_META = "call.json"
CALL_PICKLE = "call.pkl"
# The largest pickled result (or raised exception) a call may write back unless its
# submitter allows more (``Executor(max_result_bytes=...)``): the launcher holds the
# whole result in memory, so a function returning a huge object fails in the job, in
# one line, instead of filling the launcher's memory and the transport folder.
DEFAULT_MAX_RESULT_BYTES = 1 << 30
# The largest limit a reader can take: it asks for the limit and one byte more, and a read
# is of at most sys.maxsize bytes.
MAX_RESULT_LIMIT = sys.maxsize - 1
# What a bad result limit's line says to do.
RESULT_LIMIT_FIX = (
    f"expected an int of bytes from 1 to {MAX_RESULT_LIMIT}, "
    f"e.g. {4 * DEFAULT_MAX_RESULT_BYTES} for 4 GiB"
)
# The largest outcome JSON a reader accepts; the texts in it are cut to fit at writing.
MAX_RECORD_BYTES = 1 << 20
# How much of each of an exception's texts (type, message, traceback, pickling error) an
# outcome keeps, in bytes of its JSON: the JSON escapes each non-ASCII character (6 bytes,
# 12 for one outside the BMP such as an emoji), so a count of characters would not bound
# it. Four such texts stay well within MAX_RECORD_BYTES.
MAX_TEXT_BYTES = 64 * 1024


def outcome_names(rank: int) -> tuple[str, str]:
    """(pickle, json) file names of rank ``rank``'s outcome."""
    return f"rank-{rank}.pkl", f"rank-{rank}.json"


class CallFormatError(ValueError):
    """A call folder's metadata is missing, unreadable or of an unknown version."""


class ResultTooLargeError(ValueError):
    """A function's pickled result is larger than its call's ``max_result_bytes``: the job
    records this instead of the result, and a reader refuses a larger result file."""


def check_result_limit(value: object, field: str = "max_result_bytes") -> int:
    """``value`` as a result limit: an int from 1 to ``MAX_RESULT_LIMIT`` (not a bool); a
    one-line ValueError naming ``field`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_RESULT_LIMIT:
        raise ValueError(f"{field}={value!r}: {RESULT_LIMIT_FIX}")
    return value


def result_limit(meta: Mapping[str, Any]) -> int:
    """The result limit a call's metadata (``read_call_meta``) sets."""
    value = meta.get("max_result_bytes", DEFAULT_MAX_RESULT_BYTES)
    try:
        return check_result_limit(value)
    except ValueError as e:
        raise CallFormatError(f"{CALL_META}: {e}") from None


_by_value_lock = threading.Lock()


def _installed_roots() -> tuple[str, ...]:
    import sysconfig  # the launcher's side only: a job starts without it

    paths = sysconfig.get_paths()
    roots = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    return tuple(os.path.realpath(r) + os.sep for r in roots)


def _is_installed(module: types.ModuleType) -> bool:
    """Whether ``module`` comes from the standard library or site-packages (importable on any
    node with the same environment) rather than from the user's own files."""
    file = getattr(module, "__file__", None)
    if not file:
        return True  # builtin or frozen
    return bool(os.path.realpath(file).startswith(_installed_roots()))


def dumps_call(fn: Callable[..., Any], args: Sequence[Any], kwargs: Mapping[str, Any]) -> bytes:
    """``(fn, args, kwargs)`` pickled for a process that may not have the caller's files.

    A function from an installed module is pickled by reference (the job imports it); one
    from the caller's own files (a script, a notebook, a test module) by value, with the
    module's other functions and classes it uses, since the job may not find those files.
    The same holds for a ``functools.partial``'s function and for the modules that define
    the arguments' types.
    """
    import cloudpickle  # type: ignore[import-untyped]

    # The function's module (a partial's too) and those of the arguments' types.
    named = [fn, getattr(fn, "func", None), *(type(a) for a in (*args, *kwargs.values()))]
    modules = {sys.modules.get(getattr(o, "__module__", None) or "") for o in named}
    own = sorted(
        (m for m in modules if m is not None and m.__name__ != "__main__" and not _is_installed(m)),
        key=lambda m: m.__name__,
    )
    if not own:
        return bytes(cloudpickle.dumps((fn, tuple(args), dict(kwargs))))
    # cloudpickle's registry is process-wide: one registration at a time.
    with _by_value_lock:
        registered = cloudpickle.list_registry_pickle_by_value()
        added = [m for m in own if m.__name__ not in registered]
        for module in added:
            cloudpickle.register_pickle_by_value(module)
        try:
            return bytes(cloudpickle.dumps((fn, tuple(args), dict(kwargs))))
        finally:
            for module in added:
                cloudpickle.unregister_pickle_by_value(module)


def write_call(
    store: Store,
    payload: bytes,
    world_size: int,
    max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
) -> None:
    """Write the call's files: the pickle first, then the metadata that names it complete.

    ``max_result_bytes`` bounds each rank's pickled result (see ``ResultTooLargeError``).
    """
    check_result_limit(max_result_bytes)
    store.make_folder()
    store.write(CALL_PICKLE, payload)
    meta = {
        "format": FORMAT,
        "version": VERSION,
        "world_size": world_size,
        "max_result_bytes": max_result_bytes,
    }
    store.write(CALL_META, json.dumps(meta).encode())


def _read_json(store: Store, name: str) -> Any:
    """The JSON file ``name``, refused past ``MAX_RECORD_BYTES`` (FileNotFoundError passes)."""
    data = store.read(name, limit=MAX_RECORD_BYTES)
    if len(data) > MAX_RECORD_BYTES:
        raise CallFormatError(
            f"{store.path(name)}: over {MAX_RECORD_BYTES} bytes, not a file torchx wrote; "
            "remove the call's folder and submit the call again"
        )
    return json.loads(data)


def read_call_meta(store: Store) -> dict[str, Any]:
    where = store.path(CALL_META)
    try:
        meta = _read_json(store, CALL_META)
    except FileNotFoundError:
        raise CallFormatError(f"{where}: no such file; the call was never written there") from None
    except CallFormatError:
        raise
    except ValueError as e:
        raise CallFormatError(f"{where}: not JSON ({e})") from e
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CallFormatError(f"{where}: not a torchx function call")
    if meta.get("version") != VERSION:
        raise CallFormatError(
            f"{where}: version {meta.get('version')!r}, this torchx-runtime-function reads "
            f"version {VERSION}; install the same version on both sides"
        )
    result_limit(meta)
    return meta


class RemoteTraceback(Exception):
    """The traceback of an exception raised inside a job, as text.

    Set as the ``__cause__`` of the re-raised exception, so a local traceback shows the
    remote frames below the local ones.
    """

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return "\n\n" + self.text.rstrip("\n")


class RemoteError(Exception):
    """An exception raised inside a job whose type could not be rebuilt here."""

    def __init__(self, type_name: str, message: str, traceback_text: str) -> None:
        super().__init__(f"{type_name}: {message}")
        self.type_name = type_name
        self.message = message
        self.traceback_text = traceback_text


@dataclass
class Outcome:
    """What one rank's call gave: a value, or an exception with its remote traceback."""

    rank: int
    raised: bool
    value: Any = None
    exception: BaseException | None = None
    traceback_text: str = ""

    def unwrap(self) -> Any:
        """The value, or raise the exception (its remote traceback as its cause)."""
        if not self.raised:
            return self.value
        assert self.exception is not None
        raise self.exception


def _qualified(tp: type) -> str:
    return f"{tp.__module__}.{tp.__qualname__}"


class _CappedSink:
    """Where a pickle is written: its bytes kept up to ``limit``, past it only counted, so
    pickling a result larger than allowed still says its size without holding it."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self._parts: list[bytes] = []

    def write(self, data: bytes) -> int:
        # the pickler hands large buffers over as memoryviews: count their bytes
        size = memoryview(data).nbytes
        self.size += size
        if self.size <= self.limit:
            self._parts.append(bytes(data))
        elif self._parts:
            self._parts = []  # over the limit: what was kept is no use any more
        return size

    @property
    def over(self) -> bool:
        return self.size > self.limit

    def data(self) -> bytes:
        return b"".join(self._parts)


def _pickled(obj: object, limit: int) -> _CappedSink:
    import cloudpickle

    sink = _CappedSink(limit)
    cloudpickle.dump(obj, sink)
    return sink


def _too_large(what: str, size: int, limit: int) -> str:
    return (
        f"{what} pickles to {size} bytes, over the call's limit of {limit} bytes "
        f"(max_result_bytes); return less (write large data to a file or store and return "
        f"its path), or submit with Executor(max_result_bytes={size}) or more"
    )


def _say(text: str) -> None:
    """A line on stderr, after the outcome is written: a closed or broken stderr must not
    change what the call recorded or its exit code."""
    with contextlib.suppress(OSError, ValueError):
        print(text, file=sys.stderr)


def record_return(
    store: Store, rank: int, value: Any, limit: int = DEFAULT_MAX_RESULT_BYTES
) -> bool:
    """Write rank ``rank``'s return value; one that cannot be pickled, or pickles to more
    than ``limit`` bytes, is recorded as a raised TypeError or ``ResultTooLargeError``
    (and False returned)."""
    problem: Exception
    try:
        sink = _pickled(value, limit)
    except Exception as e:
        problem = TypeError(
            f"the function returned a {_qualified(type(value))} that cannot be pickled "
            f"({e}); return plain data (numbers, strings, lists, dicts, tensors)"
        )
    else:
        if not sink.over:
            pkl, meta = outcome_names(rank)
            store.write(pkl, sink.data())
            record = {"version": VERSION, "rank": rank, "raised": False}
            store.write(meta, json.dumps(record).encode())
            return True
        what = f"the function's result (a {_qualified(type(value))})"
        problem = ResultTooLargeError(_too_large(what, sink.size, limit))
    record_raise(store, rank, problem, "", limit)
    _say(f"torchx.runtime.function: {problem}")
    return False


def _text_of(exc: BaseException) -> str:
    """``str(exc)``, or a placeholder when the exception's own ``__str__`` fails: the
    outcome must still be written, or the launcher would only learn that the app died."""
    try:
        return str(exc)
    except Exception as e:
        return f"<str() of {type(exc).__name__} failed: {type(e).__name__}: {e}>"


def _json_size(text: str) -> int:
    """Bytes ``text`` takes in an outcome's JSON (without its quotes)."""
    return len(json.dumps(text)) - 2


def _cut(text: str, keep_end: bool) -> str:
    """``text`` within ``MAX_TEXT_BYTES`` of JSON; a traceback keeps its end, where it was
    raised."""
    if len(text) <= MAX_TEXT_BYTES and _json_size(text) <= MAX_TEXT_BYTES:
        return text
    budget = MAX_TEXT_BYTES - 64  # room for the note saying how much was cut
    # Each character takes a byte at least: only the first (last) ``budget`` can be kept,
    # so the work stays bounded however long the text. The JSON grows with each character
    # kept, so the longest part within budget is found by halving.
    window = text[-budget:] if keep_end else text[:budget]

    def part(n: int) -> str:
        return window[len(window) - n :] if keep_end else window[:n]

    low, high = 0, len(window)
    while low < high:
        middle = (low + high + 1) // 2
        if _json_size(part(middle)) <= budget:
            low = middle
        else:
            high = middle - 1
    note = f"[{len(text) - low} characters cut]"
    return f"{note}\n{part(low)}" if keep_end else f"{part(low)} {note}"


def record_raise(
    store: Store,
    rank: int,
    exc: BaseException,
    traceback_text: str,
    limit: int = DEFAULT_MAX_RESULT_BYTES,
) -> None:
    """Write the exception rank ``rank`` raised; the JSON keeps its type, message and
    traceback (cut to ``MAX_TEXT_BYTES`` of JSON each) even when the exception itself cannot be
    pickled or pickles to more than ``limit`` bytes."""
    pkl, meta = outcome_names(rank)
    record: dict[str, Any] = {
        "version": VERSION,
        "rank": rank,
        "raised": True,
        "type": _cut(_qualified(type(exc)), keep_end=False),
        "message": _cut(_text_of(exc), keep_end=False),
        "traceback": _cut(traceback_text, keep_end=True),
        "pickled": False,
    }
    try:
        sink = _pickled(exc, limit)
        if sink.over:
            record["pickle_error"] = _too_large("the exception", sink.size, limit)
        else:
            store.write(pkl, sink.data())
            record["pickled"] = True
    except Exception as e:
        record["pickle_error"] = _cut(_text_of(e), keep_end=False)
    store.write(meta, json.dumps(record).encode())


def has_outcome(store: Store, rank: int) -> bool:
    return store.exists(outcome_names(rank)[1])


def _read_pickle(store: Store, name: str, limit: int) -> Any:
    """Unpickle ``name``, reading at most ``limit`` + 1 bytes of it: a larger file is
    refused before anything is unpickled."""
    import cloudpickle

    data = store.read(name, limit=limit)
    if len(data) > limit:
        raise ResultTooLargeError(
            f"{store.path(name)}: over the call's limit of {limit} bytes (max_result_bytes), "
            "so it is not read; a job of an older torchx-runtime-function may have written "
            "it: submit again with the same version on both sides and "
            "Executor(max_result_bytes=...) large enough"
        )
    return cloudpickle.loads(data)


def read_outcome(store: Store, rank: int, limit: int = DEFAULT_MAX_RESULT_BYTES) -> Outcome | None:
    """Rank ``rank``'s outcome, or None while it has not finished.

    A raised exception comes back as its own type when it unpickles here, else as a
    ``RemoteError`` naming the type; either way with ``RemoteTraceback`` as its cause.
    A result file over ``limit`` bytes raises ``ResultTooLargeError`` unread.
    """
    pkl, meta_name = outcome_names(rank)
    try:
        meta = _read_json(store, meta_name)
    except FileNotFoundError:
        return None
    if not isinstance(meta, dict) or meta.get("version") != VERSION:
        raise CallFormatError(
            f"{store.path(meta_name)}: not a version {VERSION} outcome; install the same "
            "torchx-runtime-function version on both sides"
        )
    if not meta.get("raised"):
        return Outcome(rank, False, value=_read_pickle(store, pkl, limit))
    text = str(meta.get("traceback", ""))
    exc: BaseException | None = None
    if meta.get("pickled"):
        try:
            exc = _read_pickle(store, pkl, limit)
        except Exception:
            exc = None  # its class does not exist here, or too large: the recorded text
    if not isinstance(exc, BaseException):
        exc = RemoteError(str(meta.get("type")), str(meta.get("message", "")), text)
    if text:
        exc.__cause__ = RemoteTraceback(text)
    return Outcome(rank, True, exception=exc, traceback_text=text)


def format_remote_traceback(exc: BaseException, skip_frames: int = 0) -> str:
    tb = exc.__traceback__
    for _ in range(skip_frames):
        if tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb))
