# shellcheck shell=bash
# Sourced by the project's scripts: repo root, JDK 25, and package installs.

# Builtins where a script starts a JVM: under the lab's emulation each exec costs ~0.1 s.
RDMA_ROOT=$(cd "${BASH_SOURCE[0]%/*}/../.." && pwd)
export RDMA_ROOT

log() { printf '%s: %s\n' "${RDMA_SCRIPT:-$(basename "$0")}" "$*" >&2; }
die() { log "$*"; exit "${RDMA_DIE_STATUS:-2}"; }

# JDK 25 or newer: $JAVA_HOME if it is one, else Temurin 25 where this
# workplace installs it, else any /usr/lib/jvm/*25* .
use_jdk25() {
    local c v line
    for c in "${JAVA_HOME:-}" /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/temurin-25-jdk /usr/lib/jvm/*-25-* /usr/lib/jvm/*25*; do
        [[ -n "$c" && -x "$c/bin/java" && -r "$c/release" ]] || continue
        v=
        while IFS= read -r line; do
            [[ $line =~ ^JAVA_VERSION=\"([0-9]+) ]] && v=${BASH_REMATCH[1]}
        done <"$c/release"
        if [[ -n "$v" && "$v" -ge 25 ]]; then
            export JAVA_HOME="$c"
            export PATH="$JAVA_HOME/bin:$PATH"
            return 0
        fi
    done
    die "no JDK 25 found (JAVA_HOME=${JAVA_HOME:-unset}); install Temurin 25 or set JAVA_HOME to a JDK 25+"
}

# apt_ensure PKG... installs the Debian packages that are missing, quietly.
apt_ensure() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    ((${#missing[@]} == 0)) && return 0
    log "installing ${missing[*]} (apt-get)"
    [[ $(id -u) -eq 0 ]] || die "need root to install ${missing[*]}; install them and run again"
    apt-get update -qq >/dev/null || die "apt-get update failed"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
        || die "apt-get install ${missing[*]} failed"
}

# What building and the host tests need.
# fontconfig and a font: rdma-bench report draws its PNG with Java2D (headless), and a host test does too.
BUILD_PACKAGES=(maven gcc libc6-dev libibverbs-dev librdmacm-dev rdma-core ibverbs-providers fontconfig fonts-dejavu-core)

# Maven 3.8 on JDK 25 warns about sun.misc.Unsafe on every run; it is Maven's, not ours.
export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow"

# Benchmarks want the machine to themselves: take the exclusive "quiet" lock
# (other lab users on this machine may hold it shared) and the build lock, so
# that nobody rebuilds the jars under a running benchmark. Held until exit.
quiet_machine() {
    exec 8>"${TMPDIR:-/tmp}/rdma-quiet.lock" 9>"${TMPDIR:-/tmp}/rdma-build.lock"
    flock 8 && flock 9
}
