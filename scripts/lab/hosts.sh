# shellcheck shell=bash
# The two-host lab (scripts/rdma-lab --hosts 2): a second guest, the peer,
# joined to the first by three virtual cables; sourced by scripts/rdma-lab.
#
# Each cable is a virtio NIC in each guest whose frames qemu carries as UDP
# datagrams between two ports on 127.0.0.1 (the "dgram" backend: no host
# networking, no tap device, no root; nothing leaves this machine):
#   rxe  10.78.0.H/24  rxe0 is bound to it
#   siw  10.78.1.H/24  siw0 is bound to it
#   ctl  10.78.9.H/24  the peer agent (scripts/lab/on-peer), never impaired
# H is 1 or 2. Every address is on one NIC with one RDMA device, so rdma_cm,
# which picks the device by the address's interface, maps each address to
# exactly one device. A packet rxe0 sends to 10.78.0.2 really crosses the
# cable (in a one-host lab rxe loops it back inside the kernel), so tc netem
# on a NIC impairs RDMA traffic.

LAB_HOSTS=1
LAB_LINKS=(rxe siw ctl)
LAB_AGENT_PORT=7790
LAB_PORT_BASE=
LAB_PEER_RUN=
LAB_PEER_QPID=

lab_link_subnet() {
    case $1 in
        rxe) echo 10.78.0 ;;
        siw) echo 10.78.1 ;;
        ctl) echo 10.78.9 ;;
    esac
}

# Host H's address on a cable.
lab_host_addr() { echo "$(lab_link_subnet "$1").$2"; }

# Six free UDP ports on 127.0.0.1 (two per cable), in a row from a random base.
lab_pick_ports() {
    local used base p ok
    used=$(ss -Hlun 2>/dev/null | awk '{ n = split($4, a, ":"); print a[n] }')
    for _ in $(seq 50); do
        base=$((20000 + RANDOM % 40000))
        ok=1
        for ((p = base; p < base + 2 * ${#LAB_LINKS[@]}; p++)); do
            grep -qx "$p" <<<"$used" && { ok=0; break; }
        done
        ((ok)) && { LAB_PORT_BASE=$base; return 0; }
    done
    lab_die "found no six free UDP ports on 127.0.0.1 for the two-host lab's cables"
}

# qemu options for host H's end of every cable; the MAC says which cable a NIC is.
lab_link_args() {
    local host=$1 k=0 l me them
    for l in "${LAB_LINKS[@]}"; do
        me=$((LAB_PORT_BASE + 2 * k + host - 1))
        them=$((LAB_PORT_BASE + 2 * k + 2 - host))
        LAB_QEMU+=(-netdev "dgram,id=$l,local.type=inet,local.host=127.0.0.1,local.port=$me,remote.type=inet,remote.host=127.0.0.1,remote.port=$them"
            -device "virtio-net-pci,netdev=$l,mac=52:54:00:78:0$k:0$host,romfile=") # no iPXE: -kernel boots
        k=$((k + 1))
    done
}

# The per-host facts guest-run reads, beyond the one-host ones.
lab_write_hosts_config() {
    local host=$1 peer=$((3 - $1))
    printf 'HOSTS=%q\nHOST=%q\nAGENT_PORT=%q\nPEER_CTL=%q\n' 2 "$host" "$LAB_AGENT_PORT" \
        "$(lab_host_addr ctl "$peer")"
}

# The addresses as CMD (host 1) and on-peer commands (host 2) see them: their own and the peer's.
lab_hosts_env() {
    local host=$1 peer=$((3 - $1))
    printf '%s\0' RDMA_LAB_HOSTS=2 "RDMA_LAB_HOST=$host" "RDMA_LAB_ADDR=$(lab_host_addr rxe "$host")" \
        "RDMA_LAB_ADDR_RXE0=$(lab_host_addr rxe "$host")" "RDMA_LAB_ADDR_SIW0=$(lab_host_addr siw "$host")" \
        "RDMA_LAB_PEER_ADDR_RXE0=$(lab_host_addr rxe "$peer")" "RDMA_LAB_PEER_ADDR_SIW0=$(lab_host_addr siw "$peer")" \
        "RDMA_LAB_PEER_CTL=$(lab_host_addr ctl "$peer"):$LAB_AGENT_PORT" \
        "RDMA_LAB_PIN1=taskset -c 0" # one vCPU per host
}

# Boots the peer (host 2) in the background; it runs the agent until it is stopped.
lab_start_peer() {
    local run=$1 timeout=$2 t0=$3
    LAB_PEER_RUN=$run/peer
    mkdir -p "$LAB_PEER_RUN/share"
    printf '%s' "$LAB_REPO" >"$LAB_PEER_RUN/share/repo-path"
    cp "$LAB_SCRIPTS/lab/guest-run" "$LAB_PEER_RUN/share/guest-run"
    { lab_write_config; lab_write_hosts_config 2; } >"$LAB_PEER_RUN/share/config"
    { lab_write_env; lab_hosts_env 2; } >"$LAB_PEER_RUN/share/env"
    printf '%s\0' "$LAB_REPO/scripts/lab/peer-agent" "$(lab_host_addr ctl 2)" "$LAB_AGENT_PORT" \
        >"$LAB_PEER_RUN/share/argv"
    touch "$LAB_PEER_RUN/out" "$LAB_PEER_RUN/err" "$LAB_PEER_RUN/ctl" "$LAB_PEER_RUN/console.log"
    local -a saved=("${LAB_QEMU[@]}")
    lab_qemu_cmd "$LAB_PEER_RUN" 2
    timeout -k 10 "$timeout" "${LAB_QEMU[@]}" </dev/null >"$LAB_PEER_RUN/qemu.log" 2>&1 &
    LAB_PEER_QPID=$!
    LAB_QEMU=("${saved[@]}")
    # The agent's own messages (not the commands', which on-peer relays) and the peer's ready time.
    tail -c +1 -s 0.1 -f --pid="$LAB_PEER_QPID" "$LAB_PEER_RUN/err" 2>/dev/null | sed -u 's/^/rdma-lab: peer: /' >&2 &
    LAB_RELAYS+=($!)
    tail -c +1 -s 0.1 -f --pid="$LAB_PEER_QPID" "$LAB_PEER_RUN/ctl" 2>/dev/null | while read -r line; do
        [[ $line == ready ]] && lab_log "peer (host 2) ready in $(lab_elapsed "$t0") s"
    done &
    LAB_RELAYS+=($!)
}

lab_stop_peer() {
    [[ -n $LAB_PEER_QPID ]] || return 0
    kill -TERM "$LAB_PEER_QPID" 2>/dev/null || true
    for _ in $(seq 50); do
        kill -0 "$LAB_PEER_QPID" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$LAB_PEER_QPID" $(pgrep -P "$LAB_PEER_QPID" || true) 2>/dev/null || true
    wait "$LAB_PEER_QPID" 2>/dev/null || true
    LAB_PEER_QPID=
    cp "$LAB_PEER_RUN/console.log" "$LAB_CACHE/last-boot-peer.log" 2>/dev/null || true
}
