#!/usr/bin/env bash
# Runs the torch libraries' tests against the oldest torch that each one declares.
#
# CI installs only the lock's torch, so nothing there shows that a lower bound such as
# `torch>=2.4` in libs/layers/pyproject.toml still holds. This script does. For each library
# (devices, layers) it reads X.Y from that bound, makes an environment outside the repository
# with torch==X.Y.* (the last patch release of the floor), the lock's versions of everything
# that is not torch's own, the workspace libraries installed editable, and runs there the
# tests of every torch library whose floor is not above X.Y. A library whose floor is above
# it is left out, as pip would leave it out, so its tests skip where another library's tests
# use it.
#
# Each floor downloads torch and its CUDA libraries (some GB; uv's cache keeps them), far too
# much for every CI run: run it by hand when a bound changes, when tests of these libraries
# start using newer torch, and before a release. Then update the "last passed" note by the
# bound in the library's pyproject.toml.
#
# Usage: .ci/check_torch_floor.sh [LIBRARY...]     (default: devices layers)
# TORCH_FLOOR_ENVS: where the environments go (default: ${TMPDIR:-/tmp}/torchx-torch-floor)
# TORCH_FLOOR_PYTHON: their Python (default: 3.11, the Python CI runs these libraries on)
set -euo pipefail
cd "$(dirname "$0")/.."

torch_libraries=(devices layers)
envs=${TORCH_FLOOR_ENVS:-${TMPDIR:-/tmp}/torchx-torch-floor}
python=${TORCH_FLOOR_PYTHON:-3.11}

floor_of() {  # X.Y of the line `"torch>=X.Y",` in libs/$1/pyproject.toml
    local floor
    floor=$(sed -n 's/^ *"torch>=\([0-9][0-9.]*\)",$/\1/p' "libs/$1/pyproject.toml")
    if [ -z "$floor" ]; then
        echo "libs/$1/pyproject.toml: no \"torch>=X.Y\" dependency line to read the floor from" >&2
        exit 2
    fi
    echo "$floor"
}

older_or_same() {  # is version $1 <= version $2?
    [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n 1)" = "$1" ]
}

mkdir -p "$envs"
# The lock's versions of what our libraries and the tests need, so that a failure here is
# torch's floor and not a newer release of something else. torch's own dependencies are left
# to torch: an old torch pins some of them (sympy) and was built against numpy 1.
constraints="$envs/constraints.txt"
uv export --frozen --no-hashes --no-emit-workspace --all-packages --no-default-groups \
    --group test --quiet |
    grep -vE '^(#|torch==|triton==|nvidia-|cuda-|numpy==|sympy==|mpmath==|setuptools==)' \
        >"$constraints"

launcher=(-e libs/specs -e libs/components -e libs/schedulers -e libs/runner -e libs/tracking
    -e libs/function -e libs/preemption -e apps/cli)
libraries=("$@")
[ $# -gt 0 ] || libraries=("${torch_libraries[@]}")
status=0
for library in "${libraries[@]}"; do
    if [[ " ${torch_libraries[*]} " != *" $library "* ]]; then
        echo "$library: not a torch library here; name one of: ${torch_libraries[*]}" >&2
        exit 2
    fi
    floor=$(floor_of "$library")
    installed=()
    tests=()
    for other in "${torch_libraries[@]}"; do
        if older_or_same "$(floor_of "$other")" "$floor"; then
            installed+=(-e "libs/$other")
            tests+=("libs/$other/tests")
        fi
    done
    venv="$envs/torch-$floor"
    echo "== torchx-$library: torch>=$floor, in $venv"
    [ -x "$venv/bin/python" ] || uv venv --quiet --python "$python" "$venv"
    # setuptools: inductor (torch.compile's default backend) imports it and torch before 2.5
    # does not declare it; numpy<2: torch before 2.4 was built against numpy 1.
    uv pip install --quiet --python "$venv/bin/python" -c "$constraints" \
        "torch==$floor.*" "numpy<2" setuptools pytest pytest-timeout \
        "${launcher[@]}" "${installed[@]}"
    "$venv/bin/python" -c 'import torch; print("torch", torch.__version__)'
    if ! "$venv/bin/python" -m pytest -q -p no:cacheprovider "${tests[@]}"; then
        echo "FAILED: torchx-$library's tests on torch $floor" >&2
        status=1
    fi
done
exit $status
