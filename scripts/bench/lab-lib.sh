# shellcheck shell=bash
# Sourced by scripts/bench/lab-run, interop-lab-run and scale-lab-run inside the lab
# guest: what a device is and where it listens, asked of the device itself, the
# perftest flags its transport needs, and bounded waits for a server.

# The device's transport as the kernel reports it: iWARP, RoCEv2, RoCEv1 or InfiniBand.
device_transport() {
    local dev=$1 sys=/sys/class/infiniband/$1 node ll
    node=$(cat "$sys/node_type" 2>/dev/null) || { echo "no RDMA device $dev ($sys)" >&2; return 1; }
    ll=$(cat "$sys/ports/1/link_layer" 2>/dev/null)
    case "$node,$ll" in
        *RNIC*) echo iWARP ;;
        *CA*,Ethernet)
            if grep -qx "RoCE v2" "$sys"/ports/1/gid_attrs/types/* 2>/dev/null; then echo RoCEv2; else echo RoCEv1; fi ;;
        *CA*,InfiniBand) echo InfiniBand ;;
        *) echo "$dev: unknown node type '$node' with link layer '$ll'" >&2; return 1 ;;
    esac
}

# The IPv4 address of the device's network interface (rdma_cm picks the device by it).
device_addr() {
    local dev=$1 netdev addr
    netdev=$(rdma link show "$dev/1" 2>/dev/null | sed -n 's/.* netdev \([^ ]*\).*/\1/p')
    [[ -n $netdev ]] || { echo "$dev: 'rdma link show $dev/1' names no netdev" >&2; return 1; }
    addr=$(ip -4 -o addr show dev "$netdev" | awk '{ sub(/\/.*/, "", $4); print $4; exit }')
    [[ -n $addr ]] || { echo "$dev: its netdev $netdev has no IPv4 address" >&2; return 1; }
    echo "$addr"
}

# The index of the RoCE v2 GID that maps an IPv4 address (perftest without rdma_cm needs -x).
roce_v2_ipv4_gid() {
    local dev=$1 t i
    for t in /sys/class/infiniband/"$dev"/ports/1/gid_attrs/types/*; do
        [[ $(cat "$t" 2>/dev/null) == "RoCE v2" ]] || continue
        i=${t##*/}
        [[ $(cat "/sys/class/infiniband/$dev/ports/1/gids/$i") == 0000:0000:0000:0000:0000:ffff:* ]] && { echo "$i"; return 0; }
    done
    echo "$dev has no RoCE v2 GID with an IPv4 address (/sys/class/infiniband/$dev/ports/1/gid_attrs/types)" >&2
    return 1
}

# Something listens on PORT: a TCP socket (perftest's exchange, iWARP's rdma_cm
# socket) or an rdma_cm id in LISTEN (rdma_cm on RoCE has no socket).
listening() {
    local port=$1
    ss -Hltn "sport = :$port" | grep -q . && return 0
    rdma res show cm_id 2>/dev/null | grep -Eq "state LISTEN .*src-addr [^ ]*:$port( |$)"
}

# Waits until the server PID listens on PORT, at most RDMA_BENCH_LISTEN_TIMEOUT
# seconds (default 120: a JVM starts slowly under TCG). Fails, saying why, when
# the server exits first or the time is up.
await_server() {
    local port=$1 pid=$2 limit=${RDMA_BENCH_LISTEN_TIMEOUT:-120} i
    for ((i = 0; i < limit * 10; i++)); do
        listening "$port" && return 0
        kill -0 "$pid" 2>/dev/null || { echo "the server exited before it listened on port $port" >&2; return 1; }
        sleep 0.1
    done
    echo "the server did not listen on port $port within $limit s" >&2
    return 1
}

# The flags perftest (and rdma-bench's perftest commands) need to connect over the
# device's TRANSPORT, one per line: -R on iWARP (rdma_cm only), -x GID on RoCE v2
# (the GID mapping its IPv4 address), none on InfiniBand. Fails, saying why, otherwise.
perftest_flags() {
    local dev=$1 transport=$2 gid
    case $transport in
        iWARP) echo -R ;;
        RoCEv2) gid=$(roce_v2_ipv4_gid "$dev") || return 1; printf '%s\n' -x "$gid" ;;
        InfiniBand) ;;
        *) echo "$dev: no perftest flags for transport '$transport'" >&2; return 1 ;;
    esac
}

# Waits up to SECONDS (default 60) for a server whose client is done to exit, then
# kills it; returns its status.
reap_server() {
    local pid=$1 limit=${2:-60}
    timeout "$limit" tail --pid="$pid" -f /dev/null || kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
}
