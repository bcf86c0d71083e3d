"""local_cwd's log files: where pytorch/torchx 0.7 put them, and read with bounded memory."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from torchx.schedulers import Stream
from torchx.schedulers.local_scheduler import LocalScheduler, create_scheduler
from torchx.specs import AppDef, AppState, Role


def sh(name: str, script: str) -> Role:
    return Role(name, image="", entrypoint="bash", args=["-c", script])


def test_replica_logs_are_where_0_7_put_them(state_dir: Path, tmp_path: Path) -> None:
    from torchx.schedulers.local_scheduler import COMBINED_LOG, STDERR_LOG, STDOUT_LOG

    s = create_scheduler("torchx", state_dir=state_dir)
    log_dir = tmp_path / "logs"
    app = AppDef("echo", [sh("echo", "echo out; echo err >&2")])
    app_id = s.schedule(s.submit_dryrun(app, {"log_dir": str(log_dir)}))
    desc = s.wait(app_id, timeout=60)
    assert desc is not None and desc.state == AppState.SUCCEEDED
    # `<log_dir>/<session>/<app_id>/<role>/<replica>/`, as 0.7 printed and wrote it
    replica = log_dir / "torchx" / app_id / "echo" / "0"
    assert (STDOUT_LOG, STDERR_LOG, COMBINED_LOG) == ("stdout.log", "stderr.log", "combined.log")
    assert (replica / STDOUT_LOG).read_text() == "out\n"
    assert (replica / STDERR_LOG).read_text() == "err\n"
    assert sorted((replica / COMBINED_LOG).read_text().splitlines()) == ["err", "out"]
    assert desc.ui_url == f"file://{log_dir / 'torchx' / app_id}"
    assert list(s.log_iter(app_id, "echo", streams=Stream.STDOUT)) == ["out\n"]


def test_migrating_names_the_log_files_the_scheduler_writes() -> None:
    """MIGRATING.md tells 0.7 users which files to tail: the names the test above finds."""
    from torchx.schedulers.local_scheduler import COMBINED_LOG, STDERR_LOG, STDOUT_LOG

    text = (Path(__file__).resolve().parents[3] / "MIGRATING.md").read_text()
    bullet = next(b for b in text.split("\n- ") if "`STDOUT_LOG`" in b)
    named = set(re.findall(r"`((?:stdout|stderr|combined)[^`]*)`", bullet))
    assert named == {STDOUT_LOG, STDERR_LOG, COMBINED_LOG}


def test_session_name_that_is_no_directory_name_is_refused(state_dir: Path) -> None:
    from torchx.specs import SpecsError

    s = LocalScheduler("../up", state_dir=state_dir)
    with pytest.raises(SpecsError, match="session name") as e:
        s.submit_dryrun(AppDef("a", [sh("w", "true")]), {})
    assert "'../up'" in str(e.value) and "letters, digits" in str(e.value)


def test_logs_of_an_app_started_with_the_older_file_names_still_read(
    scheduler: LocalScheduler,
) -> None:
    app_id = scheduler.schedule(scheduler.submit_dryrun(AppDef("o", [sh("w", "echo hi")]), {}))
    assert scheduler.wait(app_id, timeout=60) is not None
    found = scheduler._app_dir(app_id)
    assert found is not None
    replica = Path(found) / "w" / "0"
    for name in ("stdout", "combined"):
        (replica / f"{name}.log").rename(replica / name)
    assert list(scheduler.log_iter(app_id, "w")) == ["hi\n"]


def test_long_lines_come_in_pieces_of_the_cap_cut_between_characters() -> None:
    from torchx.schedulers._bounded_lines import LineSplitter

    s = LineSplitter(max_line=8)
    data = "abcdefgé€xyzwv\nshort\n".encode() + b"tail"
    got = [piece for chunk in (data[:5], data[5:11], data[11:]) for piece in s.feed(chunk)]
    got += list(s.flush())
    pieces = [p for _, p in got]
    assert b"".join(pieces) == data
    assert all(len(p.rstrip(b"\n")) <= 8 for p in pieces)
    # every piece is whole UTF-8: no character is split between two lines
    assert [p.decode() for p in pieces] == ["abcdefg", "é€xyz", "wv\n", "short\n", "tail"]
    assert [o for o, _ in got] == [0, 7, 15, 18, 24]


READER = textwrap.dedent(
    """
    import json, resource, sys
    from torchx.schedulers import Stream
    from torchx.schedulers.local_scheduler import LocalScheduler
    s = LocalScheduler("test", state_dir=sys.argv[1])
    app_id, tail = sys.argv[2], sys.argv[3] == "tail"
    assert s.describe(app_id) is not None  # warm: imports, the request's cache
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    count = size = longest = 0
    for line in s.log_iter(app_id, "w", should_tail=tail, streams=Stream.STDOUT):
        count += 1
        size += len(line)
        longest = max(longest, len(line))
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"count": count, "size": size, "longest": longest,
                      "grew_kib": after - before}))
    """
)


@pytest.mark.parametrize("tail", ["once", "tail"])
def test_a_log_without_newlines_is_read_in_bounded_memory(
    scheduler: LocalScheduler, state_dir: Path, tail: str
) -> None:
    size = 48 * 1024 * 1024
    app = AppDef("big", [sh("w", f"head -c {size} /dev/zero | tr '\\0' x")])
    app_id = scheduler.schedule(scheduler.submit_dryrun(app, {}))
    desc = scheduler.wait(app_id, timeout=120)
    assert desc is not None and desc.state == AppState.SUCCEEDED, desc
    out = subprocess.run(
        [sys.executable, "-c", READER, str(state_dir), app_id, tail],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["size"] == size
    # reading the whole log at once would hold it (48 MiB) several times over
    assert got["grew_kib"] < 16 * 1024, got
    from torchx.schedulers._bounded_lines import MAX_LINE_BYTES

    assert got["longest"] == MAX_LINE_BYTES
    assert got["count"] == size // MAX_LINE_BYTES
