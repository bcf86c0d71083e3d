"""A call's files: what the launcher writes before the job starts, what each rank writes back.

In the call's folder:

- ``call.json``: ``{"format": "torchx-function-call", "version": 1, "world_size": N}``;
- ``call.pkl``: ``(fn, args, kwargs)`` pickled with cloudpickle;
- ``rank-R.pkl``: rank R's return value, or the exception it raised, pickled;
- ``rank-R.json``: rank R's outcome, written last, so its presence means the rank finished:
  ``{"version": 1, "rank": R, "raised": bool, "type": "module.Name", "message": str,
  "traceback": str, "pickled": bool, "pickle_error": str}``.

Only the function, its arguments and its outcome are pickled; the metadata is JSON.
"""

from __future__ import annotations

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


def outcome_names(rank: int) -> tuple[str, str]:
    """(pickle, json) file names of rank ``rank``'s outcome."""
    return f"rank-{rank}.pkl", f"rank-{rank}.json"


class CallFormatError(ValueError):
    """A call folder's metadata is missing, unreadable or of an unknown version."""


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


def write_call(store: Store, payload: bytes, world_size: int) -> None:
    """Write the call's files: the pickle first, then the metadata that names it complete."""
    store.make_folder()
    store.write(CALL_PICKLE, payload)
    meta = {"format": FORMAT, "version": VERSION, "world_size": world_size}
    store.write(CALL_META, json.dumps(meta).encode())


def read_call_meta(store: Store) -> dict[str, Any]:
    where = store.path(CALL_META)
    try:
        meta = json.loads(store.read(CALL_META))
    except FileNotFoundError:
        raise CallFormatError(f"{where}: no such file; the call was never written there") from None
    except ValueError as e:
        raise CallFormatError(f"{where}: not JSON ({e})") from e
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CallFormatError(f"{where}: not a torchx function call")
    if meta.get("version") != VERSION:
        raise CallFormatError(
            f"{where}: version {meta.get('version')!r}, this torchx-runtime-function reads "
            f"version {VERSION}; install the same version on both sides"
        )
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


def record_return(store: Store, rank: int, value: Any) -> bool:
    """Write rank ``rank``'s return value; one that cannot be pickled is recorded as a
    raised TypeError (and False returned)."""
    import cloudpickle

    try:
        data = cloudpickle.dumps(value)
    except Exception as e:
        problem = TypeError(
            f"the function returned a {_qualified(type(value))} that cannot be pickled "
            f"({e}); return plain data (numbers, strings, lists, dicts, tensors)"
        )
        print(f"torchx.runtime.function: {problem}", file=sys.stderr)
        record_raise(store, rank, problem, "")
        return False
    pkl, meta = outcome_names(rank)
    store.write(pkl, data)
    store.write(meta, json.dumps({"version": VERSION, "rank": rank, "raised": False}).encode())
    return True


def _text_of(exc: BaseException) -> str:
    """``str(exc)``, or a placeholder when the exception's own ``__str__`` fails: the
    outcome must still be written, or the launcher would only learn that the app died."""
    try:
        return str(exc)
    except Exception as e:
        return f"<str() of {type(exc).__name__} failed: {type(e).__name__}: {e}>"


def record_raise(store: Store, rank: int, exc: BaseException, traceback_text: str) -> None:
    """Write the exception rank ``rank`` raised; the JSON keeps its type, message and
    traceback even when the exception itself cannot be pickled."""
    import cloudpickle

    pkl, meta = outcome_names(rank)
    record: dict[str, Any] = {
        "version": VERSION,
        "rank": rank,
        "raised": True,
        "type": _qualified(type(exc)),
        "message": _text_of(exc),
        "traceback": traceback_text,
        "pickled": False,
    }
    try:
        store.write(pkl, cloudpickle.dumps(exc))
        record["pickled"] = True
    except Exception as e:
        record["pickle_error"] = str(e)
    store.write(meta, json.dumps(record).encode())


def has_outcome(store: Store, rank: int) -> bool:
    return store.exists(outcome_names(rank)[1])


def read_outcome(store: Store, rank: int) -> Outcome | None:
    """Rank ``rank``'s outcome, or None while it has not finished.

    A raised exception comes back as its own type when it unpickles here, else as a
    ``RemoteError`` naming the type; either way with ``RemoteTraceback`` as its cause.
    """
    import cloudpickle

    pkl, meta_name = outcome_names(rank)
    try:
        meta = json.loads(store.read(meta_name))
    except FileNotFoundError:
        return None
    if not isinstance(meta, dict) or meta.get("version") != VERSION:
        raise CallFormatError(
            f"{store.path(meta_name)}: not a version {VERSION} outcome; install the same "
            "torchx-runtime-function version on both sides"
        )
    if not meta.get("raised"):
        return Outcome(rank, False, value=cloudpickle.loads(store.read(pkl)))
    text = str(meta.get("traceback", ""))
    exc: BaseException | None = None
    if meta.get("pickled"):
        try:
            exc = cloudpickle.loads(store.read(pkl))
        except Exception:
            exc = None  # its class does not exist here: fall back to the recorded text
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
