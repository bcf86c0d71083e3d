"""The tracker's documented code blocks, run exactly as the documentation writes them.

Blocks that use a ``tracker`` (or ``key``) without creating it get one per backend;
bare expressions are evaluated like a REPL would, so ``tracker["foo"]["l2norm"] == 1.2``
is checked, not just executed.
"""

from __future__ import annotations

import ast
import contextlib
import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from torchx.runtime.tracking import FsspecResultTracker

if TYPE_CHECKING:
    from conftest import Backend

PUT_GET_FORMS = """\
# get and put APIs can be used directly or in map-like API
# the following are equivalent
tracker.put("foo", l2norm=1.2)
tracker["foo"] = {"l2norm": 1.2}

# so are these
tracker.get("foo")["l2norm"] == 1.2
tracker["foo"]["l2norm"] == 1.2
"""

STATISTICS = """\
tracker[key] = {"l2norm/mean" : 1.2, "l2norm/sem": 3.4}
tracker[key]["l2norm/mean"] # returns 1.2
tracker[key]["l2norm/sem"] # returns 3.4
"""

SAME_KEY_DIFFERENT_BASES = """\
# same key, different backing directory -> results are not overwritten
FsspecResultTracker("/tmp/foo")["1"] = {"l2norm":1.2}
FsspecResultTracker("/tmp/bar")["1"] = {"l2norm":3.4}
"""

CONSISTENCY = """\
tracker[1] = {"l2norm":1.2}
tracker[1] = {"l2norm":3.4}
tracker[1] # NOT GUARANTEED TO BE 3.4!
sleep(1*MIN)
tracker[1] # more likely to be 3.4 but still not guaranteed!
"""

FSSPEC_USAGE = """\
from torchx.runtime.tracking import FsspecResultTracker

# PUT: in trainer.py
tracker_base = "/tmp/foobar" # also supports URIs (e.g. "s3://bucket/trainer/123")
tracker = FsspecResultTracker(tracker_base)
tracker["attempt_1/out"] = {"accuracy": 0.233}

# GET: anywhere outside trainer.py
tracker = FsspecResultTracker(tracker_base)
print(tracker["attempt_1/out"]["accuracy"])
"""


def run_block(source: str, namespace: dict[str, Any]) -> list[object]:
    """Execute ``source``; return the value of each bare expression, in order."""
    values: list[object] = []
    for statement in ast.parse(source).body:
        if isinstance(statement, ast.Expr):
            values.append(
                eval(compile(ast.Expression(statement.value), "<doc>", "eval"), namespace)
            )
        else:
            exec(compile(ast.Module([statement], []), "<doc>", "exec"), namespace)
    return values


def test_put_and_get_forms(backend: Backend) -> None:
    assert run_block(PUT_GET_FORMS, {"tracker": backend.tracker()}) == [None, True, True]


def test_statistics_convention(backend: Backend) -> None:
    values = run_block(STATISTICS, {"tracker": backend.tracker(), "key": "trial_7"})
    assert values == [1.2, 3.4]


def test_consistency_example(backend: Backend) -> None:
    slept: list[float] = []
    namespace = {"tracker": backend.tracker(), "sleep": slept.append, "MIN": 60}
    # Within one process every backend here reads its own latest write.
    assert run_block(CONSISTENCY, namespace) == [{"l2norm": 3.4}, None, {"l2norm": 3.4}]
    assert slept == [60]


@contextlib.contextmanager
def removed_afterwards(*documents: Path) -> Any:
    """Clean up the fixed /tmp paths the documentation uses, keeping what was there."""
    created = [d for d in documents if not d.exists()]
    folders = [f for d in documents for f in (d.parent, *d.parent.parents) if not f.exists()]
    try:
        yield
    finally:
        for document in created:
            document.unlink(missing_ok=True)
        for folder in sorted(set(folders), key=lambda p: len(p.parts), reverse=True):
            with contextlib.suppress(OSError):
                folder.rmdir()


def test_same_key_on_different_bases_as_written() -> None:
    with removed_afterwards(Path("/tmp/foo/1.json"), Path("/tmp/bar/1.json")):
        run_block(SAME_KEY_DIFFERENT_BASES, {"FsspecResultTracker": FsspecResultTracker})
        assert FsspecResultTracker("/tmp/foo")["1"] == {"l2norm": 1.2}
        assert FsspecResultTracker("/tmp/bar")[1] == {"l2norm": 3.4}


def test_fsspec_usage_as_written() -> None:
    with removed_afterwards(Path("/tmp/foobar/attempt_1/out.json")):
        output = io.StringIO()
        with contextlib.redirect_stdout(output):
            run_block(FSSPEC_USAGE, {})
        assert output.getvalue() == "0.233\n"


def test_fsspec_usage_on_s3(s3_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same block with the base its comment suggests; the server is configured the
    way the FSSPEC_S3_* environment variables would, so the block itself is unchanged."""
    import fsspec.config
    import s3fs  # type: ignore[import-untyped]

    s3fs.S3FileSystem(**s3_server.storage_options).mkdir("bucket", exist_ok=True)
    monkeypatch.setitem(fsspec.config.conf, "s3", s3_server.storage_options)
    source = FSSPEC_USAGE.replace('"/tmp/foobar"', '"s3://bucket/trainer/123"')
    assert source != FSSPEC_USAGE
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        run_block(source, {})
    assert output.getvalue() == "0.233\n"
    reader = FsspecResultTracker("s3://bucket/trainer/123", **s3_server.storage_options)
    assert reader.fs.cat_file(reader.path_of("attempt_1/out")) == b'{"accuracy": 0.233}'
