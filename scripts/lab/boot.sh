# shellcheck shell=bash
# Boots the lab guest and relays CMD's output and exit status; sourced by
# scripts/rdma-lab after lab_setup.
#
# Channels: qemu writes three virtio-serial ports (CMD's stdout, its stderr, a
# control port that says "ready") and the serial console to files in a per-run
# directory, and `tail -f` streams them while the guest runs. virtio ports are
# not ttys, so there is no \n -> \r\n translation and CMD sees pipes. The
# command, its environment and its exit status travel through a writable 9p
# share of that directory.

# One interface and address per device: rdma_cm picks the device by the
# address, so with a netdev each both are reachable through it in one boot.
LAB_ADDR_RXE=10.77.0.1
LAB_ADDR_SIW=10.77.1.1
LAB_PASS_ENV=(JAVA_HOME PATH LANG HOME MAVEN_OPTS)
LAB_RUN=
LAB_QPID=
LAB_RELAYS=()
LAB_WATCHDOG=

# qemu splits option values at commas; a literal comma is written twice.
lab_q() { printf '%s' "${1//,/,,}"; }

# CMD's environment as NUL-separated NAME=VALUE (later entries win).
lab_write_env() {
    local -A exported=()
    local -a names=("${LAB_PASS_ENV[@]}") extra=()
    local n
    for n in $(compgen -e); do exported[$n]=1; done
    for n in "${!exported[@]}"; do [[ $n == RDMA_* ]] && names+=("$n"); done
    read -ra extra <<<"${RDMA_LAB_ENV:-}"
    names+=("${extra[@]}")
    for n in "${names[@]}"; do
        if [[ ! $n =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]]; then
            lab_log "ignoring invalid name in RDMA_LAB_ENV: $n"
        elif [[ -n ${exported[$n]:-} ]]; then
            printf '%s=%s\0' "$n" "${!n}"
        fi
    done
    [[ -n ${exported[PATH]:-} ]] || printf 'PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin\0'
    printf '%s\0' RDMA_LAB=1 "RDMA_LAB_ADDR=$LAB_ADDR_RXE" \
        "RDMA_LAB_ADDR_RXE0=$LAB_ADDR_RXE" "RDMA_LAB_ADDR_SIW0=$LAB_ADDR_SIW" \
        "RDMA_LAB_PIN0=taskset -c 0" "RDMA_LAB_PIN1=taskset -c 1"
}

# Facts for scripts/lab/guest-run, sourced there.
lab_write_config() {
    printf 'KVER=%q\nMODDIR=%q\nSIW=%q\nREPO=%q\nADDR_RXE=%q\nADDR_SIW=%q\n' \
        "$LAB_KVER" "$LAB_MODDIR" "$LAB_SIW" "$LAB_REPO" "$LAB_ADDR_RXE" "$LAB_ADDR_SIW"
}

# qemu for the guest whose run dir is $1; $2 is its host number in a two-host lab (1 or 2).
lab_qemu_cmd() {
    # The kernel finds TCG's TSCs "unsynchronized" and falls back to the HPET, which makes every
    # clock_gettime a trapped MMIO read (~2 us: System.nanoTime, not perftest's rdtsc). TCG derives
    # every vCPU's TSC from the same host clock, so they do agree.
    local run=$1 host=${2:-1} append="console=ttyS0 panic=-1 rdinit=/init tsc=reliable clocksource=tsc"
    [[ ${RDMA_LAB_VERBOSE:-0} == 1 ]] || append+=" quiet"
    # Two hosts: one vCPU each, so the two guests' vCPU threads have a host core each.
    local smp=2 mem=${RDMA_LAB_MEM:-4G}
    ((LAB_HOSTS == 1)) || { smp=1 mem=${RDMA_LAB_MEM:-3G}; }
    LAB_QEMU=(qemu-system-x86_64 -accel tcg -cpu max -smp "$smp" -m "$mem"
        -nographic -no-reboot -nic none -nodefaults -monitor none
        -kernel "$(lab_kernel_image)" -initrd "$LAB_INITRD" -append "$append"
        -chardev "file,id=con,path=$(lab_q "$run/console.log")" -serial chardev:con
        -virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
        -virtfs "local,path=$(lab_q "$LAB_REPO"),mount_tag=repo,security_model=none,multidevs=remap"
        -virtfs "local,path=$(lab_q "$run/share"),mount_tag=labrun,security_model=none"
        -device virtio-serial-pci)
    local port
    for port in out err ctl; do
        LAB_QEMU+=(-chardev "file,id=$port,path=$(lab_q "$run/$port"),append=on"
            -device "virtserialport,chardev=$port,name=lab.$port")
    done
    ((LAB_HOSTS == 1)) || lab_link_args "$host"
}

# Streams a file that qemu writes until qemu is gone (tail reads to the end then).
lab_follow() { tail -c +1 -s 0.1 -f --pid="$LAB_QPID" "$1" 2>/dev/null; }

lab_start_relays() {
    local run=$1 t0=$2
    lab_follow "$run/out" &
    LAB_RELAYS+=($!)
    lab_follow "$run/err" >&2 &
    LAB_RELAYS+=($!)
    lab_follow "$run/ctl" | while read -r line; do
        [[ $line == ready ]] && lab_log "guest ready in $(lab_elapsed "$t0") s"
    done &
    LAB_RELAYS+=($!)
    local main=$BASHPID # expanded here: in "cmd &" it would be the child's
    lab_watchdog "$main" 2>/dev/null &
    LAB_WATCHDOG=$!
    if [[ ${RDMA_LAB_VERBOSE:-0} == 1 ]]; then
        lab_follow "$run/console.log" >&2 &
        LAB_RELAYS+=($!)
    fi
}

lab_stop_watchdog() {
    [[ -n $LAB_WATCHDOG ]] || return 0
    pkill -P "$LAB_WATCHDOG" 2>/dev/null || true # its sleep
    kill "$LAB_WATCHDOG" 2>/dev/null || true
    wait "$LAB_WATCHDOG" 2>/dev/null || true # reaped here, bash's "Terminated" note goes nowhere
    LAB_WATCHDOG=
}

# Stops qemu if rdma-lab itself is killed with SIGKILL (no trap runs then).
lab_watchdog() {
    while kill -0 "$1" 2>/dev/null; do
        kill -0 "$LAB_QPID" 2>/dev/null || exit 0
        sleep 1
    done
    kill -TERM "$LAB_QPID" ${LAB_PEER_QPID:-} 2>/dev/null
    while kill -0 "$LAB_QPID" 2>/dev/null; do sleep 0.2; done
    rm -rf "$LAB_RUN"
}

# Stops qemu (through its timeout wrapper, which passes the signal on).
lab_stop_qemu() {
    [[ -n $LAB_QPID ]] || return 0
    local kids
    kids=$(pgrep -P "$LAB_QPID" || true)
    kill -TERM "$LAB_QPID" 2>/dev/null || true
    for _ in $(seq 50); do
        kill -0 "$LAB_QPID" 2>/dev/null || break
        sleep 0.1
    done
    # shellcheck disable=SC2086 # kids is a list of pids
    kill -KILL "$LAB_QPID" $kids 2>/dev/null || true
    wait "$LAB_QPID" 2>/dev/null || true
    LAB_QPID=
}

lab_cleanup() {
    lab_stop_watchdog
    lab_stop_qemu
    lab_stop_peer
    if ((${#LAB_RELAYS[@]})); then
        kill "${LAB_RELAYS[@]}" 2>/dev/null || true
    fi
    wait 2>/dev/null || true # reap all (the ctl pipeline's tail too): no zombies left behind
    [[ -z $LAB_RUN ]] || rm -rf "$LAB_RUN"
}

lab_on_signal() {
    trap '' INT TERM HUP # once is enough (e.g. a signal sent to the pid and its group)
    lab_log "got SIG$1: stopping the guest"
    lab_stop_qemu
    lab_stop_peer
    exit "$2"
}

lab_show_console() {
    lab_log "last lines of the guest console ($LAB_CACHE/last-boot.log):"
    tail -n "${2:-25}" "$1" | sed 's/^/    /' >&2
}

# Boots the guest, runs "$@" in it and exits with its status.
lab_boot() {
    local timeout=${RDMA_LAB_TIMEOUT:-1800} run t0 rc=0 status
    [[ $timeout =~ ^[0-9]+$ ]] || lab_die "RDMA_LAB_TIMEOUT must be a whole number of seconds"
    run=$(mktemp -d "${TMPDIR:-/tmp}/rdma-lab.XXXXXX")
    LAB_RUN=$run
    trap lab_cleanup EXIT
    trap 'lab_on_signal INT 130' INT
    trap 'lab_on_signal TERM 143' TERM
    trap 'lab_on_signal HUP 129' HUP
    mkdir "$run/share"
    printf '%s' "$LAB_REPO" >"$run/share/repo-path"
    cp "$LAB_SCRIPTS/lab/guest-run" "$run/share/guest-run"
    lab_write_config >"$run/share/config"
    lab_write_env >"$run/share/env"
    printf '%s\0' "$@" >"$run/share/argv"
    touch "$run/out" "$run/err" "$run/ctl" "$run/console.log"
    t0=$EPOCHREALTIME
    if ((LAB_HOSTS == 2)); then
        lab_pick_ports
        lab_write_hosts_config 1 >>"$run/share/config"
        lab_hosts_env 1 >>"$run/share/env"
        lab_start_peer "$run" "$timeout" "$t0"
    fi
    lab_qemu_cmd "$run" 1

    timeout -k 10 "$timeout" "${LAB_QEMU[@]}" </dev/null >"$run/qemu.log" 2>&1 &
    LAB_QPID=$!
    lab_start_relays "$run" "$t0"
    wait "$LAB_QPID" || rc=$?
    LAB_QPID=
    lab_stop_watchdog
    lab_stop_peer
    wait "${LAB_RELAYS[@]}" 2>/dev/null || true
    LAB_RELAYS=()
    cp "$run/console.log" "$LAB_CACHE/last-boot.log" 2>/dev/null || true

    if ((rc == 124)); then
        lab_log "timeout: the guest ran longer than RDMA_LAB_TIMEOUT=$timeout s and was killed"
        exit 124
    fi
    status=$(cat "$run/share/status" 2>/dev/null || true)
    case $status in
        '' | *[!0-9]*)
            if [[ $status == lab-error ]]; then
                lab_log "the guest could not set up the lab"
            else
                lab_log "the guest died without reporting an exit status (qemu exit $rc)"
                sed 's/^/    qemu: /' "$run/qemu.log" >&2
            fi
            lab_show_console "$run/console.log"
            exit 125
            ;;
    esac
    lab_log "command exited with status $status after $(lab_elapsed "$t0") s"
    exit "$status"
}
