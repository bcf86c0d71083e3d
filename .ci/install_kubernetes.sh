#!/usr/bin/env bash
# A Kubernetes control plane for the tests: etcd and kubectl from Debian packages, and
# kube-apiserver, kube-controller-manager and kube-scheduler built from Debian's `kubernetes`
# source package (1.20). No kubelet is built or installed: the tests play its part.
#
# The three control-plane binaries are cached under ${XDG_CACHE_HOME:-~/.cache}/torchx-kubernetes/
# keyed by the source version, so only a fresh machine pays for the build (several minutes).
# Installs only what is missing: running it again is cheap. Meant to run as root. A failed
# build stops CI: the Kubernetes tests would otherwise all skip unnoticed.
set -euo pipefail

BIN_DIR=/usr/local/bin
COMPONENTS=(kube-apiserver kube-controller-manager kube-scheduler)
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/torchx-kubernetes"
export DEBIAN_FRONTEND=noninteractive
APT=(apt-get -o DPkg::Lock::Timeout=600)

log() { echo "install_kubernetes: $*" >&2; }

missing_packages() {
    local pkg
    for pkg in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
            echo "$pkg"
        fi
    done
}

updated=0
apt_update() {
    if [ "$updated" -eq 0 ]; then
        "${APT[@]}" update -qq
        updated=1
    fi
}

apt_install() {
    local missing
    mapfile -t missing < <(missing_packages "$@")
    [ "${#missing[@]}" -eq 0 ] && return 0
    apt_update
    # Package scripts would start a system-wide etcd; the tests start their own.
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    "${APT[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    rm -f /usr/sbin/policy-rc.d
}

# etcd from Debian. kubectl is convenient for people debugging the test cluster, but the
# tests talk to the API through the Python client, so an existing kubectl is kept.
apt_install etcd-server
if ! command -v kubectl >/dev/null 2>&1; then
    apt_install kubernetes-client
fi

all_installed() {
    local c
    for c in "${COMPONENTS[@]}"; do
        [ -x "$BIN_DIR/$c" ] || return 1
    done
}

# The source version is the cache key. The binary package kubernetes-client is built from the
# same source, so its candidate version names it without needing deb-src indexes.
source_version() {
    apt-cache policy kubernetes-client | awk '/Candidate:/ {print $2}' | sed 's/+b[0-9]*$//'
}

version="$(source_version)"
if [ -z "$version" ] || [ "$version" = "(none)" ]; then
    apt_update
    version="$(source_version)"
fi
cache="$CACHE_ROOT/$version"

link_binaries() {
    local c
    for c in "${COMPONENTS[@]}"; do
        ln -sfn "$cache/bin/$c" "$BIN_DIR/$c"
    done
}

if [ -f "$cache/bin/.complete" ]; then
    all_installed && [ "$(readlink -f "$BIN_DIR/kube-apiserver")" = "$cache/bin/kube-apiserver" ] && exit 0
    link_binaries
    exit 0
fi

log "building kube-apiserver, kube-controller-manager and kube-scheduler $version from source"
start=$(date +%s)

# deb-src entries mirroring the machine's Debian deb entries, so `apt-get source` works.
srcs=/etc/apt/sources.list.d/torchx-deb-src.sources
if [ ! -f "$srcs" ]; then
    tmp="$(mktemp)"
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        # One paragraph per stanza; keep only the stanzas of Debian's archive.
        awk -v RS= -v ORS='\n\n' '/URIs: *[^ ]*debian/ && /Types: *deb/' "$f" |
            sed -E 's/^Types:.*/Types: deb-src/' >>"$tmp"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        grep -E '^deb [^#]*debian' "$f" | sed -E 's/^deb /deb-src /' >>"${tmp}.list" || true
    done
    if [ -s "$tmp" ]; then
        install -m 644 "$tmp" "$srcs"
    fi
    if [ -s "${tmp}.list" ]; then
        install -m 644 "${tmp}.list" /etc/apt/sources.list.d/torchx-deb-src.list
    fi
    rm -f "$tmp" "${tmp}.list"
    updated=0
fi
apt_update

apt_install golang-go jq rsync golang-github-modern-go-reflect2-dev dpkg-dev make

work="$CACHE_ROOT/build-$version"
rm -rf "$work"
mkdir -p "$work"
(cd "$work" && apt-get source -qq "kubernetes=$version" >/dev/null)
src="$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'kubernetes-*' | head -n 1)"
[ -n "$src" ] || {
    log "apt-get source kubernetes=$version unpacked nothing"
    exit 1
}

# The vendored reflect2 1.0.1 crashes under Go >= 1.18 the first time a custom resource is
# served; Debian's 1.0.2 sources are API-compatible and work.
reflect2_src=/usr/share/gocode/src/github.com/modern-go/reflect2
rm -rf "$src/vendor/github.com/modern-go/reflect2"
mkdir -p "$src/vendor/github.com/modern-go/reflect2"
cp -a "$reflect2_src/." "$src/vendor/github.com/modern-go/reflect2/"
find "$src/vendor/github.com/modern-go/reflect2" -name '*_test.go' -delete

# The 1.20 tree builds in GOPATH mode from k8s.io/kubernetes.
gopath="$work/gopath"
mkdir -p "$gopath/src/k8s.io"
ln -sfn "$src" "$gopath/src/k8s.io/kubernetes"
(
    cd "$gopath/src/k8s.io/kubernetes"
    export GOPATH="$gopath" GOPROXY=off CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-}" GO111MODULE=off
    export GOCACHE="$work/gocache"
    make WHAT="cmd/kube-apiserver cmd/kube-controller-manager cmd/kube-scheduler"
)

mkdir -p "$cache/bin"
for c in "${COMPONENTS[@]}"; do
    built="$(find "$src/_output" -type f -name "$c" -perm -u+x | head -n 1)"
    [ -n "$built" ] || {
        log "$c was not built"
        exit 1
    }
    install -m 755 "$built" "$cache/bin/$c"
done
touch "$cache/bin/.complete"
link_binaries
rm -rf "$work"
log "built and installed in $(($(date +%s) - start))s"
