# shellcheck shell=bash
# Sourced by the lab runners inside the lab guest: what a device is (asked of rdma-bench,
# which knows it from the runtime's device selection), the value in perftest's result row,
# why a run failed, and reaping a server. Waiting for a server is scripts/lib/listen.sh's.
# shellcheck source-path=SCRIPTDIR source=../lib/listen.sh
source "${BASH_SOURCE[0]%/*}/../lib/listen.sh"

# Per device, filled by device_facts: the transport (RoCEv2, iWARP, RoCEv1, InfiniBand), the
# IPv4 address rdma_cm picks it by, the flags perftest needs for the transport (-R, -x GID or
# none; words), or why the device cannot be used. The runners read them.
# shellcheck disable=SC2034
declare -gA DEV_TRANSPORT=() DEV_ADDR=() DEV_FLAGS=() DEV_ERROR=()

# device_facts DEV: fills the arrays above for DEV the first time it is asked (a JVM start, seconds
# under the lab's emulation), from then on it answers from them. Call it in the runner's own shell,
# not in $(...): a subshell's answers are lost. Fails when the device is unknown or unusable.
device_facts() {
    local dev=$1 lines errf t0=$SECONDS
    [[ -n ${DEV_TRANSPORT[$dev]+set} ]] && return 0
    [[ -n ${DEV_ERROR[$dev]+set} ]] && return 1
    errf=$(mktemp)
    if lines=$("${BASH_SOURCE[0]%/*}/../rdma-bench" devices --transport "$dev" --address "$dev" \
        --perftest-flags "$dev" 2>"$errf"); then
        {
            read -r "DEV_TRANSPORT[$dev]"
            read -r "DEV_ADDR[$dev]"
            read -r "DEV_FLAGS[$dev]"
        } <<<"$lines"
        rm -f "$errf"
        printf 'lab: %s is %s at %s, perftest flags [%s] (rdma-bench devices, %d s)\n' "$dev" \
            "${DEV_TRANSPORT[$dev]}" "${DEV_ADDR[$dev]}" "${DEV_FLAGS[$dev]}" $((SECONDS - t0)) >&2
        return 0
    fi
    DEV_ERROR[$dev]=$(grep -v '^\s*$' "$errf" | tail -n 1)
    DEV_ERROR[$dev]=${DEV_ERROR[$dev]:-rdma-bench devices failed for $dev}
    rm -f "$errf"
    printf 'lab: %s: %s\n' "$dev" "${DEV_ERROR[$dev]}" >&2
    return 1
}

# The column of perftest's result row (rdma-bench's perftest commands print the same table)
# that holds METRIC: t_typical in a latency table, BW average or MsgRate in a bandwidth one.
perftest_column() {
    case $1 in
        t_typical | msg_rate) echo 5 ;;
        bw_average) echo 4 ;;
        *) echo "perftest_column: no perftest column for '$1'" >&2; return 1 ;;
    esac
}

# perftest_value LOG METRIC: METRIC's value in the first result row under perftest's header, or nothing.
perftest_value() {
    local col
    col=$(perftest_column "$2") || return 1
    awk -v col="$col" '/#bytes/ { hdr = 1; next } hdr && $1 ~ /^[0-9]+$/ { print $col; exit }' "$1"
}

# why_failed STATUS TIMEOUT LOG...: what failed, from the exit status and the sides' output (perftest's,
# cmtime's or rdma-bench's words), in a few words without commas (it is a CSV field).
why_failed() {
    local rc=$1 limit=$2 text
    shift 2
    text=$(cat "$@" 2>/dev/null)
    if ((rc == 124 || rc == 137)); then
        echo "time-out after $limit s"
    elif grep -qiE 'RETRY_EXC|retry counter|Failed status 12' <<<"$text"; then
        echo "retry counter exceeded (IBV_WC_RETRY_EXC_ERR)"
    elif grep -qiE 'RNR_RETRY|Failed status 13' <<<"$text"; then
        echo "RNR retry counter exceeded"
    elif grep -qiE 'WR_FLUSH|Failed status 5|left RTS|QPS_ERR|QP.* in error' <<<"$text"; then
        echo "QP in error (work requests flushed)"
    elif grep -qiE 'REJECTED|Connection refused' <<<"$text"; then
        echo "connection refused or rejected"
    elif grep -qiE 'UNREACHABLE|ADDR_ERROR|ROUTE_ERROR|ETIMEDOUT|timed out|timeout' <<<"$text"; then
        echo "connection set-up timed out or unreachable"
    else
        grep -v '^\s*$' "$@" 2>/dev/null | tail -n 1 | tr ',' ';' | cut -c1-120
    fi
}

# reap_server PID [SECONDS]: waits up to SECONDS (default 60; 0: not at all) for a server whose client
# is done to exit, then kills it (a server run through on-peer dies on the peer with it); returns its status.
reap_server() {
    local pid=$1 limit=${2:-60}
    if ((limit > 0)); then
        timeout "$limit" tail --pid="$pid" -f /dev/null || kill -9 "$pid" 2>/dev/null
    else
        kill -9 "$pid" 2>/dev/null
    fi
    wait "$pid" 2>/dev/null
}

# mmss SECONDS: 3m07s.
mmss() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# progress K N START: "elapsed 3m07s, about 12m40s left" after K of N runs begun at START (date +%s);
# before the first run is done, the elapsed time alone.
progress() {
    local k=$1 n=$2 elapsed=$(($(date +%s) - $3))
    if ((k > 0)); then
        printf 'elapsed %s, about %s left' "$(mmss "$elapsed")" "$(mmss $((elapsed * (n - k) / k)))"
    else
        printf 'elapsed %s' "$(mmss "$elapsed")"
    fi
}
