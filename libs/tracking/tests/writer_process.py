"""A writer process for the concurrency tests (run as a script, not collected by pytest).

    python writer_process.py TRACKER_BASE WRITER_ID COUNT GO_FILE

It prints "ready" and waits until GO_FILE exists, so that all writers start together.
Then it puts COUNT keys of its own, ``writer_<id>/result_<i>``, and then puts the key
``shared`` COUNT times, racing the other writers. S3 settings come from the
FSSPEC_S3_* environment variables.
"""

from __future__ import annotations

import os
import sys
import time

from torchx.runtime.tracking import FsspecResultTracker

FIELDS = 10
FIELD_CHARS = 1000


def shared_document(writer: int, i: int) -> dict[str, int | str]:
    """About 10 KB, every field derived from the writer, so a mix is detectable."""
    letter = chr(ord("a") + writer)
    document: dict[str, int | str] = {"writer": writer, "i": i}
    for field in range(FIELDS):
        document[f"payload/{field}"] = letter * FIELD_CHARS
    return document


def main() -> None:
    base, writer_text, count_text, go_file = sys.argv[1:]
    writer, count = int(writer_text), int(count_text)
    tracker = FsspecResultTracker(base)
    print("ready", flush=True)
    deadline = time.monotonic() + 120
    while not os.path.exists(go_file):
        if time.monotonic() > deadline:
            sys.exit("never told to start")
        time.sleep(0.005)
    for i in range(count):
        tracker[f"writer_{writer}/result_{i}"] = {"writer": writer, "i": i}
    for i in range(count):
        tracker["shared"] = shared_document(writer, i)


if __name__ == "__main__":
    main()
