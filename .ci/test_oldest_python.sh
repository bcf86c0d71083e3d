#!/usr/bin/env bash
# The launcher's unit tests on Python 3.10, the oldest Python that requires-python admits.
#
# A second environment, .venv-py310, holds what `pip install torchx` gives (no torch, no
# scheduler client library) plus pytest, at the lock's versions. The daemon-backed tests and
# the runtime libraries that need torch stay on the main environment's Python.
set -euo pipefail
cd "$(dirname "$0")/.."

version=3.10
python=$(uv python find --no-project "$version" 2>/dev/null || true)
if [ -z "$python" ]; then
    # pyenv installs are found by path: its shims answer only for the selected version
    for candidate in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$version".*/bin/python"$version"; do
        [ -x "$candidate" ] && python=$candidate
    done
fi
if [ -z "$python" ]; then
    uv python install --quiet "$version"
    python=$(uv python find --no-project "$version")
fi

UV_PROJECT_ENVIRONMENT=.venv-py310 uv sync --locked --quiet --python "$python" \
    --package torchx --no-default-groups --group test
# As in an activated environment: apps the tests launch find this Python and its torchx.
PATH="$PWD/.venv-py310/bin:$PATH" .venv-py310/bin/python -m pytest -q \
    libs/specs libs/components libs/runner libs/tracking apps/cli \
    libs/schedulers/tests/test_contract.py \
    libs/schedulers/tests/test_upstream_names.py \
    libs/schedulers/tests/test_registry.py \
    libs/schedulers/tests/test_local_scheduler.py \
    libs/schedulers/tests/test_slurm_dryrun.py
