#!/usr/bin/env bash
# Installs Debian's Docker engine and a static busybox (the tests import it as their base
# image) when absent. Idempotent, quiet, non-interactive; meant to run as root. When the
# packages cannot be installed the engine tests skip with the reason, so a failure here is
# reported but does not stop CI.
set -uo pipefail

missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
[ -x /bin/busybox ] || missing+=(busybox-static)
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }; then
    echo "install_docker: could not install ${missing[*]}; Docker engine tests will skip" >&2
fi
exit 0
