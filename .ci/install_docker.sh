#!/usr/bin/env bash
# Installs Debian's Docker engine (and debootstrap, used by the tests to build a local base
# image) when they are absent. Idempotent, quiet, non-interactive; meant to run as root.
set -euo pipefail

missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
[ -x /bin/busybox ] || missing+=(busybox-static)
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
