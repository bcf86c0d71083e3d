"""The script an app's supervisor is started with: ``python -I -S _local_supervisor_start.py
APP_DIR [--go-on-stdin]`` (see ``_local_supervisor``).

A few lines on purpose: Python compiles the script it is given from its source at every
start, and keeps compiled bytecode only for modules imported from it. Run as the script
itself, the supervisor's module cost milliseconds of compiling before each app's first
replica could start.
"""

import os
import sys

if __name__ == "__main__":
    # Run with ``-I -S``, nothing of torchx is on the path: add the directory that holds
    # ``torchx/`` (torchx.schedulers imports nothing when loaded). Appended, so the
    # standard library still comes first.
    sys.path.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    from torchx.schedulers._local_supervisor import main

    code = main(sys.argv)
    sys.stdout.flush()
    sys.stderr.flush()
    # Everything is written and closed; skipping interpreter teardown lets waiters,
    # who watch for this exit, see the end of the app sooner.
    os._exit(code)
