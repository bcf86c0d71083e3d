"""``torchx run --dryrun`` with an absurd replica count stops at once, naming the limit."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

TORCHX = str(Path(sys.executable).with_name("torchx"))
# room for the CLI itself; a request built per replica for 10^8 replicas needs gigabytes
MEMORY_CAP = 1 << 30


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def test_a_hundred_million_replicas_are_refused_with_the_limit(isolated: Path) -> None:
    proc = subprocess.run(
        [TORCHX, "run", "--dryrun", "utils.sh", "--num_replicas", "100000000", "true"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=dict(os.environ),
        preexec_fn=_capped,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "torchx: error: role 'sh' num_replicas: got 100000000; the local_cwd scheduler takes "
        "at most 10000 replicas per app (its max_replicas); lower --num_replicas or split the app"
    ]
    assert proc.stdout == ""
