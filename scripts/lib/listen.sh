# shellcheck shell=bash
# Sourced by the lab's scripts (and run on a peer as scripts/lab/await-listen): whether a
# server listens yet, and the one bounded wait for it that every client start uses.

# listening PORT [ADDR]: something listens on PORT (bound to ADDR, if given): a TCP socket
# (perftest's exchange port 18515, siw's rdma_cm listener) or an rdma_cm id in state LISTEN
# (rdma_cm on RoCE has no socket; `rdma res show cm_id` shows it with its src-addr:port).
listening() {
    local port=$1 addr=${2:-}
    if [[ -n $addr ]]; then
        ss -Hltn "src $addr:$port" 2>/dev/null | grep -q . && return 0
        rdma res show cm_id 2>/dev/null | grep -Eq "state LISTEN .*src-addr ${addr//./\\.}:$port( |$)"
    else
        ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && return 0
        rdma res show cm_id 2>/dev/null | grep -Eq "state LISTEN .*src-addr [^ ]*:$port( |$)"
    fi
}

# await_listen [-t SECONDS] [-p PID] [-a ADDR] [-i INTERVAL] [-r] PORT
# Polls every INTERVAL (default 0.1) s until something listens on PORT (at ADDR). Returns 1, saying why on
# stderr, when PID (the server, if given) exits first or SECONDS pass: default
# RDMA_BENCH_LISTEN_TIMEOUT, else 120 (a cold JVM under the lab's emulation is slow to listen).
# -r asks the peer of a two-host lab (scripts/lab/on-peer) instead of this host.
await_listen() {
    local limit=${RDMA_BENCH_LISTEN_TIMEOUT:-120} pid='' addr='' remote=0 interval=0.1 opt OPTIND=1
    while getopts :t:p:a:i:r opt; do
        case $opt in
            t) limit=$OPTARG ;;
            i) interval=$OPTARG ;;
            p) pid=$OPTARG ;;
            a) addr=$OPTARG ;;
            r) remote=1 ;;
            *) echo "await_listen: bad option -$OPTARG; usage: await_listen [-t SECONDS] [-p PID] [-a ADDR] [-i INTERVAL] [-r] PORT" >&2; return 2 ;;
        esac
    done
    shift $((OPTIND - 1))
    local port=${1:?await_listen: PORT missing} where="port $1${addr:+ at $addr}" end=$((SECONDS + limit)) step rc
    ((remote)) && where="$where on the peer"
    while :; do
        if ((remote)); then
            # One on-peer call costs a process start on each guest: the peer polls for a few seconds itself.
            step=$((end - SECONDS < 5 ? end - SECONDS : 5))
            ((step < 1)) && step=1
            "${BASH_SOURCE[0]%/*}/../lab/on-peer" "${BASH_SOURCE[0]%/*}/../lab/await-listen" -t "$step" \
                ${addr:+-a "$addr"} "$port" 2>/dev/null
            rc=$?
            ((rc == 0)) && return 0
            ((rc == 125)) && { echo "cannot ask the peer whether $where listens (on-peer failed)" >&2; return 1; }
        else
            listening "$port" "$addr" && return 0
        fi
        if [[ -n $pid ]] && ! kill -0 "$pid" 2>/dev/null; then
            echo "the server exited before it listened on $where" >&2
            return 1
        fi
        if ((SECONDS >= end)); then
            echo "the server did not listen on $where within $limit s" >&2
            return 1
        fi
        ((remote)) || sleep "$interval"
    done
}
