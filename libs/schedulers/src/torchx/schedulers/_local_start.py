"""The script the local scheduler starts its own processes with:

- ``python -I -S _local_start.py _local_supervisor APP_DIR [--go-on-stdin]``: an app's
  supervisor (``_local_supervisor``);
- ``python -I -S _local_start.py _local_group PARALLEL NAME``: a supervised group of apps
  (``_local_group``), its apps' directories on stdin.

A few lines on purpose: Python compiles the script it is given from its source at every
start, and keeps compiled bytecode only for modules imported from it. Run as scripts
themselves, those modules cost milliseconds of compiling at each start, before the first
replica could.
"""

import gc
import os
import sys

if __name__ == "__main__":
    # No cyclic garbage collection while the process starts: what it allocates until its
    # replicas (or a group's workers) are started lives as long as it does, and each
    # collection would only walk it again. It is frozen and collection turned back on
    # then (``_local_processes.collect_from_now_on``).
    gc.disable()
    # Run with ``-I -S``, nothing of torchx is on the path: add the directory that holds
    # ``torchx/`` (torchx.schedulers imports nothing when loaded). Appended, so the
    # standard library still comes first.
    sys.path.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    if what == "_local_supervisor":
        from torchx.schedulers._local_supervisor import main
    elif what == "_local_group":
        from torchx.schedulers._local_group import main
    else:
        print(f"usage: {sys.argv[0]} _local_supervisor|_local_group ARGS...", file=sys.stderr)
        os._exit(2)
    # the module's name stands as the program's in its usage line
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    # Everything is written and closed; skipping interpreter teardown lets waiters,
    # who watch for this exit, see the end of the app sooner.
    os._exit(code)
