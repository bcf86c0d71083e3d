#!/usr/bin/env bash
# Runs the torch libraries' tests against the oldest torch that each one declares.
#
# CI installs only the lock's torch, so nothing there shows that a lower bound such as
# `torch>=2.4` in libs/layers/pyproject.toml still holds. This script does. For each library
# (devices, layers) it reads X.Y from that bound, makes a fresh environment outside the
# repository with torch==X.Y.0 (the oldest release the bound admits), the lock's versions of
# everything that is not torch's own, the workspace libraries installed editable, and runs the
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
    floor=$(sed -n 's/^ *"torch>=\([0-9]\{1,\}\.[0-9]\{1,\}\)",$/\1/p' "libs/$1/pyproject.toml")
    if [ -z "$floor" ] || [ "$(printf '%s\n' "$floor" | wc -l)" -ne 1 ]; then
        echo "libs/$1/pyproject.toml: expected one dependency line \"torch>=X.Y\", as" \
            "\"torch>=2.4\", to read the floor from (a patch release or another form is not read)" >&2
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

# Every floor, read before anything is installed: a bound that cannot be read stops the
# script here (a failing $(...) inside an `if` would not stop it under set -e).
declare -A floors
for library in "${torch_libraries[@]}"; do
    floors[$library]=$(floor_of "$library") || exit 2
done

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
    floor=${floors[$library]}
    installed=()
    tests=()
    for other in "${torch_libraries[@]}"; do
        if older_or_same "${floors[$other]}" "$floor"; then
            installed+=(-e "libs/$other")
            tests+=("libs/$other/tests")
        fi
    done
    venv="$envs/torch-$floor"
    echo "== torchx-$library: torch>=$floor, in $venv"
    # fresh each run: uv pip install never removes what an earlier run put there (a library
    # whose floor has since moved above this torch, say); uv's cache makes it cheap
    uv venv --quiet --clear --python "$python" "$venv"
    # setuptools: inductor (torch.compile's default backend) imports it and torch before 2.5
    # does not declare it. numpy<2 only where torch before 2.4 was built against numpy 1;
    # from 2.4 on, numpy as the resolver picks it for that torch (2.x), as users get it.
    pins=("torch==$floor.0" setuptools pytest pytest-timeout)
    older_or_same 2.4 "$floor" || pins+=("numpy<2")
    uv pip install --quiet --python "$venv/bin/python" -c "$constraints" \
        "${pins[@]}" "${launcher[@]}" "${installed[@]}"
    "$venv/bin/python" -c 'import torch; print("torch", torch.__version__)'
    if ! "$venv/bin/python" -m pytest -q -p no:cacheprovider "${tests[@]}"; then
        echo "FAILED: torchx-$library's tests on torch $floor" >&2
        status=1
    fi
done
exit $status
