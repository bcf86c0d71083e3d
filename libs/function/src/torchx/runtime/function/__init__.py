"""torchx.runtime.function: run a pickled Python call inside a job, write its outcome back.

The launcher (``torchx.runner.Executor``) writes a call into a folder; the job runs
``python -m torchx.runtime.function FOLDER``; the launcher reads the outcome back::

    from torchx.runtime.function import Store, dumps_call, write_call, run_call, read_outcome

    store = Store("/tmp/calls/1")
    write_call(store, dumps_call(pow, (2, 10), {}), world_size=1)
    run_call("/tmp/calls/1")            # what the job does
    read_outcome(store, 0).unwrap()     # 1024

Importing nothing else of torchx, it installs alone into a job's image
(``pip install torchx-runtime-function``: cloudpickle and fsspec).
"""

from torchx.runtime.function._call import (
    CALL_META,
    CALL_PICKLE,
    DEFAULT_MAX_RESULT_BYTES,
    MAX_RECORD_BYTES,
    MAX_RESULT_LIMIT,
    MAX_TEXT_BYTES,
    RESULT_LIMIT_FIX,
    CallFormatError,
    Outcome,
    RemoteError,
    RemoteTraceback,
    ResultTooLargeError,
    check_result_limit,
    dumps_call,
    has_outcome,
    outcome_names,
    read_call_meta,
    read_outcome,
    record_raise,
    record_return,
    result_limit,
    write_call,
)
from torchx.runtime.function._entry import main, run_call
from torchx.runtime.function._store import (
    Store,
    UntrustedFileError,
    check_private,
    child_name,
    is_local,
)

__all__ = [
    "CALL_META",
    "CALL_PICKLE",
    "DEFAULT_MAX_RESULT_BYTES",
    "MAX_RECORD_BYTES",
    "MAX_RESULT_LIMIT",
    "MAX_TEXT_BYTES",
    "RESULT_LIMIT_FIX",
    "CallFormatError",
    "Outcome",
    "RemoteError",
    "RemoteTraceback",
    "ResultTooLargeError",
    "Store",
    "UntrustedFileError",
    "check_private",
    "check_result_limit",
    "child_name",
    "dumps_call",
    "has_outcome",
    "is_local",
    "main",
    "outcome_names",
    "read_call_meta",
    "read_outcome",
    "record_raise",
    "record_return",
    "result_limit",
    "run_call",
    "write_call",
]
