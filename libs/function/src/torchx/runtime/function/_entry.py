"""The job's side: ``python -m torchx.runtime.function CALL_URL``.

Loads the call from ``CALL_URL``, runs it, and writes this rank's outcome there. The rank
is ``RANK`` from the environment (torchrun sets it; 0 without). Exits 0 when the function
returned, 1 when it raised (the outcome still says what it raised), 2 on bad usage.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

from torchx.runtime.function._call import (
    CALL_META,
    CALL_PICKLE,
    DEFAULT_MAX_RESULT_BYTES,
    CallFormatError,
    _say,
    format_remote_traceback,
    read_call_meta,
    record_raise,
    record_return,
    result_limit,
)
from torchx.runtime.function._store import Store

USAGE = "usage: python -m torchx.runtime.function CALL_URL"


def _rank() -> int:
    text = os.environ.get("RANK", "0")
    try:
        return int(text)
    except ValueError:
        return 0


def _load(store: Store) -> tuple[Any, int]:
    """The call (``(fn, args, kwargs)``) and its result limit."""
    import cloudpickle  # type: ignore[import-untyped]

    limit = result_limit(read_call_meta(store))
    # As root (a container's default user) the files were written by the launching user.
    return cloudpickle.loads(store.read(CALL_PICKLE, any_owner=os.geteuid() == 0)), limit


def _folder_missing(store: Store) -> bool:
    try:
        return not store.exists(CALL_META)
    except OSError:
        return False  # cannot tell: say why the outcome was not written


def run_call(url: str, rank: int | None = None) -> int:
    """Run the call in folder ``url`` as rank ``rank`` (default: ``$RANK``); the exit code."""
    rank = _rank() if rank is None else rank
    store = Store(url)
    # The outcome is written before anything is printed: a broken stderr must not cost
    # the launcher the outcome.
    try:
        (fn, args, kwargs), limit = _load(store)
    except Exception as e:
        # A call folder that is missing or not a call is the launcher's mistake, said in
        # one line; anything else (an import the call needs, a Python version apart) keeps
        # its traceback.
        bad_call = isinstance(e, CallFormatError)
        text = f"{type(e).__name__}: {e}\n" if bad_call else format_remote_traceback(e)
        unwritten = None
        try:
            record_raise(store, rank, e, text, DEFAULT_MAX_RESULT_BYTES)
        except OSError as unwritable:
            # Without its folder there is nowhere to write, as the line below says; any
            # other failure to write is why the launcher will find no outcome.
            if not (bad_call and _folder_missing(store)):
                unwritten = unwritable
        _say(text.rstrip("\n"))
        if unwritten is not None:
            _say(f"torchx.runtime.function: {unwritten}")
        return 1
    try:
        value = fn(*args, **kwargs)
    except BaseException as e:
        # The first frame is this function's own: the user's traceback starts below it.
        text = format_remote_traceback(e, skip_frames=1)
        record_raise(store, rank, e, text, limit)
        _say(text.rstrip("\n"))
        return 1
    return 0 if record_return(store, rank, value, limit) else 1


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1 or args[0].startswith("-"):
        print(USAGE, file=sys.stderr)
        return 2
    return run_call(args[0])
