#!/bin/bash
# Host a of scripts/two-host-tests: runs the fault tests against host b (scripts/lib/two-host/peer.sh)
# and writes one line per test to $LAB_DIR/results: "PASS name: what was measured" or "FAIL name: why".
# Every wait is bounded. TWO_HOST_TESTS (words) picks tests by name; default: all, always run in the order
# of $order below.
set -uo pipefail
here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd -P)
root=$(cd "$here/../../.." && pwd -P)
source "$here/common.sh"
lab_ctl=$root/scripts/lab-ctl
results=$LAB_DIR/results
: >"$results"

# The RC retry bound (docs/failure-semantics.md#a-peer-that-stops-answering): a requester whose packets
# are no longer acknowledged retries RETRY_COUNT times, each after the local ACK timeout 4.096 us x 2^t.
# rdma_cm on RoCE sets t = CMA_IBOE_PACKET_LIFETIME + 1 = 19 on Linux 6.1 (18 + 1; rxe's CA ACK delay
# of 15 does not raise it), so bound = (RETRY_COUNT + 1) x 4.096 us x 2^19 = 7 x 2.15 s = 15.0 s with
# the engine's default RETRY_COUNT 6.
retry_count=6 ack_timeout_exp=19
bound=$(awk -v r=$retry_count -v t=$ack_timeout_exp 'BEGIN { printf "%.2f", (r + 1) * 4.096e-6 * 2 ^ t }')
# Emulation: the JVMs and the VMs' timers run late under TCG on a loaded host (measured: bulk detection
# 0.8-1 s over the bound, the gateway's Spring application slower still).
slack=${TWO_HOST_SLACK_S:-8}

say() { printf 'two-host(a): %s\n' "$*" >&2; }
pass() { printf 'PASS %s: %s\n' "$1" "$2" | tee -a "$results" >&2; }
fail() { printf 'FAIL %s: %s\n' "$1" "$2" | tee -a "$results" >&2; }
ctl() { "$lab_ctl" "$@" >/dev/null || say "lab-ctl $* failed"; }
# applied_at SIDE ACTION: runs a partition/heal, prints when the agent applied it (that VM's clock)
applied_at() {
    local out
    out=$("$lab_ctl" "$@") || say "lab-ctl $* failed"
    out=$(sed -n 's/^applied_at=//p' <<<"$out")
    printf '%s\n' "${out:-$EPOCHREALTIME}"
}
counters() { "$lab_ctl" "$1" counters; }
# on_both ACTION... [; ACTION...]: the same lab-ctl request to a's and b's agents at once (one round trip,
# not two after each other); their outputs in $out_a and $out_b
on_both() {
    local fa=$LAB_DIR/on-both.a fb=$LAB_DIR/on-both.b pa pb
    "$lab_ctl" a "$@" >"$fa" & pa=$!
    "$lab_ctl" b "$@" >"$fb" & pb=$!
    wait "$pa" || say "lab-ctl a $* failed"
    wait "$pb" || say "lab-ctl b $* failed"
    out_a=$(<"$fa") out_b=$(<"$fb")
}
# counter_delta BEFORE AFTER: "name=+N" for each counter that changed
counter_delta() {
    awk -F= 'NR == FNR { b[$1] = $2; next } $2 != b[$1] { printf "%s=+%d ", $1, $2 - b[$1] }' \
        <(printf '%s\n' "$1") <(printf '%s\n' "$2")
}
# b runs JOB (a bash command line) in the background; its output goes to $LAB_DIR/jobs/NAME.log
b_job() { # name command
    mkdir -p "$LAB_DIR/jobs"
    printf 'source %q\n%s\n' "$here/common.sh" "$2" >"$LAB_DIR/jobs/$1.tmp" && mv "$LAB_DIR/jobs/$1.tmp" "$LAB_DIR/jobs/$1.job"
}
# rdma_count qp|mr PID: the RDMA resources a process holds. The kernel lists each with the id of the
# THREAD that made it (a JVM's poller and rdma_cm threads), so every thread id of the process counts.
rdma_count() {
    local tids
    tids=$(ls "/proc/$2/task" 2>/dev/null | tr '\n' ' ')
    rdma resource show "$1" 2>/dev/null | awk -v tids=" $tids" '
        { for (i = 1; i < NF; i++) if ($i == "pid" && index(tids, " " $(i + 1) " ")) { n++; break } }
        END { print n + 0 }'
}
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
# Before b boots again: its servers' logs move aside (b-receiver.log -> b-receiver.boot-N.log), so waits
# for the new servers' "listening" see only theirs and what the old ones said stays for the post-mortem.
b_boots=0
set_b_logs_aside() {
    b_boots=$((b_boots + 1))
    local f
    for f in b-receiver b-kv; do
        [[ -e $LAB_DIR/$f.log ]] && mv -f "$LAB_DIR/$f.log" "$LAB_DIR/$f.boot-$b_boots.log"
    done
    return 0
}

# ------------------------------------------------------------------------------------------ tests
# Bulk transfer to b's receiver with LOSS on both NICs (each direction loses that share of its
# packets): hashes must match; rate and both sides' retransmission counters are recorded.
# 64 KiB chunks (16 packets of 4096 B): rxe counts every NAK-triggered retransmission of a work request
# against its retry count, so 1 MiB chunks (256 packets) ran out of retries (RETRY_EXC_ERR) at 1% and
# 3% loss in the first runs (docs/failure-semantics.md#loss).
loss_test() { # mode percent size
    local name=loss-$1-${2%\%} before_a before_b t0 t1 rc=0 out_a out_b
    local log=$LAB_DIR/$name.log
    # Loss on both NICs, then each side's counters: both sides at once, each in one round trip.
    on_both netem loss "$2" \; counters
    before_a=$out_a before_b=$out_b
    t0=$EPOCHREALTIME
    timeout 300 "$here/run-sample" bulk send $LAB_B_IP -p 7472 --mode $1 --size $3 --chunk 64k --window 16 --timeout-ms 60000 >"$log" 2>&1 || rc=$?
    t1=$EPOCHREALTIME
    on_both clear \; counters
    out_a=${out_a#applied_at=*$'\n'} out_b=${out_b#applied_at=*$'\n'}   # clear's line, not a counter
    local da db rate
    da=$(counter_delta "$before_a" "$out_a"); db=$(counter_delta "$before_b" "$out_b")
    rate=$(grep -o 'sent [0-9]* bytes in [^)]*)' "$log" | head -n 1)
    if ((rc == 0)) && grep -q 'hashes match' "$log"; then
        pass "$name" "$3 in $(elapsed "$t0" "$t1") s wall ($rate); counters a: ${da:-none}; b: ${db:-none}"
    else
        fail "$name" "exit $rc after $(elapsed "$t0" "$t1") s: $(grep -E 'FAILED|ERROR|MISMATCH|Exception' "$log" | head -n 2 | tr '\n' ' ')"
    fi
}

# A partition shorter than the retry bound: the transfer goes on, nothing lost.
partition_short() {
    local name=partition-short log=$LAB_DIR/partition-short.log rc=0 t0
    local cut=${TWO_HOST_SHORT_CUT_S:-1.5} after=${TWO_HOST_SHORT_CUT_AFTER_S:-2}
    # Waits name the sender: a bare `wait` would also wait for the gateway, which runs in the background from
    # the lab's start (it hung CI's first run with the early gateway start here until the lab's timeout).
    # Stamped, as b's receiver log is: a failure can be laid beside the cut and b's side of it.
    ( timeout 300 "$here/run-sample" bulk send $LAB_B_IP -p 7472 --mode push --size 24m --timeout-ms 60000 2>&1 | stamp >"$log"; echo "${PIPESTATUS[0]}" >"$log.rc" ) &
    local sender=$!
    if ! wait_for "$log" 'connected to' 120 >/dev/null; then wait "$sender"; fail "$name" "the sender did not connect: $(tail -n 3 "$log" | tr '\n' ' ')"; return; fi
    nap "$after"
    local cut_at healed_at
    cut_at=$(applied_at a partition); nap "$cut"; healed_at=$(applied_at a heal)
    local lasted
    lasted=$(elapsed "$cut_at" "$healed_at")
    say "partitioned for $lasted s (bound $bound s)"
    wait "$sender"
    rc=$(cat "$log.rc")
    if ! awk -v l="$lasted" -v b="$bound" 'BEGIN { exit !(l < b) }'; then
        fail "$name" "the cut lasted $lasted s, not shorter than the bound $bound s (a slow agent): nothing shown"
    elif [[ $rc == 0 ]] && grep -q 'hashes match' "$log"; then
        pass "$name" "cut for $lasted s < bound $bound s: hashes match ($(grep -o 'sent [0-9]* bytes in [^)]*)' "$log"))"
    else
        fail "$name" "exit $rc: $(grep -E 'FAILED|ERROR|MISMATCH|Exception' "$log" | head -n 2 | tr '\n' ' ')"
    fi
}

# A partition longer than the bound: the sender fails typed within the bound, b's receiver fails that
# transfer typed, and after healing a new connection moves data.
partition_long() {
    local name=partition-long log=$LAB_DIR/partition-long.log rc t_cut t_fail line detect
    local cut=${TWO_HOST_LONG_CUT_S:-25}   # longer than the bound
    local receiver_failures_before
    receiver_failures_before=$(grep -c 'FAILED' "$LAB_DIR/b-receiver.log")
    ( timeout 300 "$here/run-sample" bulk send "$LAB_B_IP" -p 7472 --mode push --size 1g --timeout-ms 60000 2>&1 | stamp >"$log"; echo "${PIPESTATUS[0]}" >"$log.rc" ) &
    local sender=$!
    if ! wait_for "$log" 'connected to' 120 >/dev/null; then wait "$sender"; fail "$name" "the sender did not connect"; return; fi
    nap 2
    t_cut=$(applied_at a partition)
    line=$(wait_for "$log" 'Exception|FAILED|failed' "$((cut))")
    t_fail=${line%% *}
    nap "$(awk -v c="$cut" -v a="$t_cut" -v n="$EPOCHREALTIME" 'BEGIN { r = c - (n - a); print (r > 0 ? r : 0) }')"
    ctl a heal
    wait "$sender"
    rc=$(cat "$log.rc")
    local why=()
    [[ -n $line ]] || why+=("the sender reported nothing during the ${cut} s partition")
    if [[ -n $line ]]; then
        detect=$(elapsed "$t_cut" "$t_fail")
        awk -v d="$detect" -v b="$bound" -v s="$slack" 'BEGIN { exit !(d <= b + s) }' \
            || why+=("the sender took $detect s, more than the bound $bound s + $slack s")
    fi
    [[ $rc != 0 ]] || why+=("the sender exited 0 across a ${cut} s partition")
    grep -qE 'BulkTransferException|RdmaCompletionException|ConnectionClosedException|PEER_GONE|STALLED|went away' "$log" \
        || why+=("the sender's error is not typed: $(grep -iE 'error|exception' "$log" | head -n 1)")
    # b's receiver: RC's retries on its own post, its watchdog (45 s, peer.sh) or the DREQ that arrives after
    # healing ends the transfer, typed.
    local deadline=$((SECONDS + 40))
    while (( $(grep -c 'FAILED' "$LAB_DIR/b-receiver.log") <= receiver_failures_before && SECONDS < deadline )); do
        nap 0.5
    done
    (( $(grep -c 'FAILED' "$LAB_DIR/b-receiver.log") > receiver_failures_before )) \
        || why+=("b's receiver did not report the broken transfer within 40 s of healing")
    local b_line
    b_line=$(grep 'FAILED' "$LAB_DIR/b-receiver.log" | tail -n 1 | cut -c1-220)
    # After healing: a new connection works.
    local log2=$LAB_DIR/partition-after.log rc2=0
    timeout 300 "$here/run-sample" bulk send $LAB_B_IP -p 7472 --mode push --size 4m --timeout-ms 60000 >"$log2" 2>&1 || rc2=$?
    { ((rc2 == 0)) && grep -q 'hashes match' "$log2"; } || why+=("a new transfer after healing failed (exit $rc2)")
    if ((${#why[@]})); then fail "$name" "$(IFS=';'; echo "${why[*]}")"
    else pass "$name" "sender failed typed $detect s after the cut (bound $bound s + slack $slack s): $(cut -c1-200 <<<"${line#* }"); b: ${b_line#* }; new transfer after healing OK"; fi
}

# Host death: b sends to a's receiver in pull mode (a's receiver READs from b), b is powered off
# mid-transfer. a's receiver fails that transfer typed within the bound, releases its QP and memory,
# and serves a new sender. The receiver consumes a chunk every 200 ms (--delay-ms) and then sends FREE:
# a side learns of a dead peer only from work it posts (RC has no keepalive), and without the delay the
# receiver, waiting for the slower generating sender's next READY, had nothing posted when b died and
# only its watchdog noticed (60 s, first runs).
# When gateway-host-death runs too, both watch the same death of b (host_death_arm before its kill,
# host_death_judge after): one death and one boot of b fewer (about a minute of CI).
host_death() {
    host_death_arm || return
    local t_asked t_killed
    t_asked=$EPOCHREALTIME
    "$lab_ctl" host kill b >/dev/null
    t_killed=$EPOCHREALTIME
    host_death_judge "$t_asked" "$t_killed"
}
# Up to b's death: a's receiver listening and warmed up, b's transfer to it under way. Sets hd_pid and
# hd_mr_before; on a failure reports it (FAIL host-death) and returns 1.
hd_rlog=$LAB_DIR/a-receiver.log hd_pid= hd_mr_before=
host_death_arm() {
    local name=host-death
    if [[ ! -s $LAB_DIR/b.pid ]]; then   # b died in an earlier test: boot it again
        set_b_logs_aside
        "$lab_ctl" host boot b >/dev/null || { fail "$name" "cannot boot b again"; return 1; }
    fi
    "$here/run-sample" bulk receive --host "$RXE_IP" -p 7473 --timeout-ms 60000 --delay-ms 200 > >(stamp >"$hd_rlog") 2>&1 &
    wait_for "$hd_rlog" 'listening on' 120 >/dev/null || { fail "$name" "a's receiver did not start"; return 1; }
    hd_pid=$(pgrep -n -f 'java .*BulkTransfer receive .*-p 7473')
    # The engine keeps its buffer pool's registrations for the JVM's life: a first local transfer of the
    # same shape (pull, 1 MiB chunks, window 8) makes them, so the count after b's death must not exceed it.
    timeout 300 "$here/run-sample" bulk send "$RXE_IP" -p 7473 --mode pull --size 8m --timeout-ms 60000 \
        >"$LAB_DIR/host-death-warmup.log" 2>&1 || { fail "$name" "the warm-up transfer failed"; return 1; }
    hd_mr_before=$(rdma_count mr "$hd_pid")
    ((hd_mr_before > 0)) || { fail "$name" "no memory registration of the receiver (pid $hd_pid) is listed: cannot check"; return 1; }
    b_job death-sender "sample bulk send $LAB_A_IP -p 7473 --mode pull --size 1g --timeout-ms 60000"
    # b's transfer, not the warm-up's (both log "transfer from")
    if ! wait_for "$hd_rlog" "transfer from /$LAB_B_IP:" 180 >/dev/null; then fail "$name" "b's sender did not start a transfer"; return 1; fi
    nap 3
    (( $(rdma_count qp "$hd_pid") > 0 )) \
        || { fail "$name" "no QP of the receiver (pid $hd_pid) is listed during the transfer: cannot check"; return 1; }
}
# After b's death (killed between T_ASKED and T_KILLED; the host kills at once, it polls every 0.1 s, while
# this busy VM may see the answer seconds later: T_ASKED gives an upper bound of the detection).
host_death_judge() { # t_asked t_killed
    local name=host-death t_asked=$1 t_killed=$2 line t_fail detect detect_min why=()
    line=$(wait_for "$hd_rlog" 'FAILED' 60)
    [[ -n $line ]] || { fail "$name" "a's receiver reported nothing within 60 s of b's death"; kill "$hd_pid" 2>/dev/null; return; }
    t_fail=${line%% *}
    detect=$(elapsed "$t_asked" "$t_fail")
    detect_min=$(elapsed "$t_killed" "$t_fail")
    awk -v d="$detect" -v b="$bound" -v s="$slack" 'BEGIN { exit !(d <= b + s) }' \
        || why+=("detection took $detect s, more than the bound $bound s + $slack s")
    grep -qE 'FAILED: .*(PEER_GONE|went away|RETRY_EXC|RdmaCompletionException|ConnectionClosedException)' <<<"$line" \
        || why+=("untyped failure: $line")
    nap 1
    local qps mrs
    qps=$(rdma_count qp "$hd_pid")
    mrs=$(rdma_count mr "$hd_pid")
    ((qps == 0)) || why+=("$qps QP(s) of the receiver still exist after the failure")
    ((mrs <= hd_mr_before)) || why+=("the receiver holds $mrs memory registrations, $hd_mr_before before the transfer")
    # It keeps serving: a sender on a itself (rxe loops back) moves 4 MiB through it.
    local log2=$LAB_DIR/host-death-after.log rc2=0
    timeout 300 "$here/run-sample" bulk send $RXE_IP -p 7473 --mode push --size 4m --timeout-ms 60000 >"$log2" 2>&1 || rc2=$?
    { ((rc2 == 0)) && grep -q 'hashes match' "$log2"; } || why+=("the receiver did not serve a new sender (exit $rc2)")
    kill "$hd_pid" 2>/dev/null
    if ((${#why[@]})); then fail "$name" "$(IFS=';'; echo "${why[*]}")"
    else pass "$name" "a's receiver failed typed $detect_min-$detect s after b died (bound $bound s + slack $slack s; QPs left 0, MRs $mrs of $hd_mr_before): $(cut -c1-220 <<<"${line#* }"); served a new sender"; fi
}


# The WebFlux gateway on a, serving both gateway tests. Its Spring application takes minutes to start under
# TCG (204-400 s measured), so it starts with the lab, at the lowest CPU priority: it uses the time a is idle
# in the tests before it (b's JVMs starting, partitions, bounds waited for) and takes nothing from their
# timing; gateway_ready gives it normal priority back. The connect timeout is half the request timeout:
# with both at 10 s (the defaults) a reconnect attempt to the dead host and the request raced, and requests
# long after the death still answered 504 (first run).
gw=http://127.0.0.1:8080 glog=$LAB_DIR/a-gateway.log gateway_started=
gateway_timeout_s=${TWO_HOST_GATEWAY_TIMEOUT_S:-10}
gateway_start() {
    [[ -z $gateway_started ]] || return 0
    gateway_started=$EPOCHREALTIME
    TWO_HOST_CP=$TWO_HOST_GATEWAY_CP nice -n 19 "$here/run-sample" gateway --reactive-rdma.client.host="$LAB_B_IP" \
        --reactive-rdma.client.port=7474 --server.address=127.0.0.1 --server.port=8080 \
        --gateway.request-timeout="${gateway_timeout_s}s" \
        --reactive-rdma.client.connect-timeout="$((gateway_timeout_s / 2))s" \
        > >(stamp >"$glog") 2>&1 &
}
gateway_pid() { pgrep -n -f 'java .*GatewayApplication'; }
gateway_stop() { local pid; pid=$(gateway_pid) && kill "$pid" 2>/dev/null; return 0; }
# gateway_ready: the gateway's pid once /actuator/health answers 200 (connected); nothing after 420 s.
# gateway_start must have run in the main shell.
gateway_ready() {
    local pid t deadline=$((SECONDS + 420))   # Spring under TCG on a loaded host: up to 400 s to start
    pid=$(gateway_pid) || return 1
    for t in /proc/"$pid"/task/*; do renice -n 0 -p "${t##*/}" >/dev/null 2>&1; done
    until [[ $(curl -s -m 5 -o /dev/null -w '%{http_code}' "$gw/actuator/health") == 200 ]]; do
        ((SECONDS < deadline)) && kill -0 "$pid" 2>/dev/null || return 1
        nap 2
    done
    say "the gateway answers, $(elapsed "$gateway_started" "$EPOCHREALTIME") s after it was started"
    echo "$pid"
}
# A gauge of the gateway's actuator: its value as an integer, or nothing.
gateway_metric() { # name [tag]
    curl -s -m 15 "$gw/actuator/metrics/$1${2:+?tag=$2}" | grep -o '"value": *[0-9.eE+-]*' | head -n 1 | cut -d: -f2 |
        awk '{ printf "%.0f\n", $1 }'
}
# The gateway's heap after a full GC (jcmd GC.run, then the actuator's heap gauge), in bytes.
gateway_heap_after_gc() { # pid
    "${JAVA_HOME:+$JAVA_HOME/bin/}jcmd" "$1" GC.run >/dev/null 2>&1 || say "jcmd GC.run failed"
    gateway_metric jvm.memory.used area:heap
}

# The gateway while its key-value server flaps (issue 24): b's server process is killed (SIGKILL: a crash;
# b's kernel tears its connection down) and started again TWO_HOST_FLAPS times (default 3) while a PUT goes
# to the gateway every half second. Every request answers within the request timeout + slack: 204 while
# the server is up, 502/503/504 while it is down (each down window shows at least one), never a hang or
# another status; after each restart the gateway reconnects by itself (a 204 within 45 s of the server
# listening again: its backoff is at most 10 s, plus jitter and emulation); its registered memory
# (rdma.memory.registered) after the last flap is not above what it was after the first, and its heap
# after a full GC not more than 16 MiB above.
gateway_flapping_backend() {
    local name=gateway-flapping-backend flaps=${TWO_HOST_FLAPS:-3} why=() gpid i kpid t_kill t_up t_ok
    local reqlog=$LAB_DIR/gateway-flapping-requests.log stop=$LAB_DIR/gateway-flapping.stop
    local timeout_s=$gateway_timeout_s reg0= heap0= reg1= heap1= connects0 reconnects=() windows=()
    wait_for "$LAB_DIR/b-kv.log" 'listening' 240 >/dev/null || { fail "$name" "b's key-value server did not start"; return; }
    gpid=$(gateway_ready) || { fail "$name" "the gateway did not become healthy: $(tail -n 3 "$glog" | tr '\n' ' ')"; return; }
    connects0=$(grep -c 'connected to the key-value server' "$glog")
    rm -f "$stop"
    # The requests: "sent_at code seconds" per line, one every 0.5 s after the previous answered.
    (
        n=0
        while [[ ! -e $stop ]]; do
            t0=$EPOCHREALTIME
            code=$(curl -s -m $((timeout_s + 30)) -o /dev/null -w '%{http_code}' -X PUT --data-binary "v$n" "$gw/kv/flap")
            printf '%s %s %s\n' "$t0" "$code" "$(elapsed "$t0" "$EPOCHREALTIME")"
            n=$((n + 1))
            nap 0.5
        done
    ) >"$reqlog" &
    local reqpid=$!
    for ((i = 1; i <= flaps; i++)); do
        b_job "flap-kill-$i" "pid=\$(pgrep -n -f 'java .*KeyValue server .*-p 7474') && kill -9 \$pid && echo killed \$pid"
        wait_for "$LAB_DIR/jobs/flap-kill-$i.log" 'killed' 60 >/dev/null || { why+=("flap $i: b's key-value server was not killed"); break; }
        t_kill=$EPOCHREALTIME
        b_job "flap-kv-$i" "sample kv server --host \$RXE_IP -p 7474"
        wait_for "$LAB_DIR/jobs/flap-kv-$i.log" 'listening' 240 >/dev/null || { why+=("flap $i: b's key-value server did not start again"); break; }
        t_up=$EPOCHREALTIME
        # Reconnected: a PUT sent after the server listened again answered 204.
        t_ok=
        local deadline=$((SECONDS + 45))
        while [[ -z $t_ok ]] && ((SECONDS < deadline)); do
            t_ok=$(awk -v u="$t_up" '$1 > u && $2 == 204 { print $1; exit }' "$reqlog")
            [[ -n $t_ok ]] || nap 0.5
        done
        [[ -n $t_ok ]] || { why+=("flap $i: no PUT answered 204 within 45 s of the server listening again"); break; }
        reconnects+=("$(elapsed "$t_up" "$t_ok")s")
        windows+=("$t_kill:$t_up")
        if ((i == 1)); then reg0=$(gateway_metric rdma.memory.registered); heap0=$(gateway_heap_after_gc "$gpid"); fi
    done
    reg1=$(gateway_metric rdma.memory.registered); heap1=$(gateway_heap_after_gc "$gpid")
    touch "$stop"; wait "$reqpid"; rm -f "$stop"
    # Every request answered in time, with a status the gateway may give.
    local bad slow total
    total=$(wc -l <"$reqlog")
    bad=$(awk '$2 !~ /^(204|502|503|504)$/ { printf "%s ", $2 }' "$reqlog")
    slow=$(awk -v t="$timeout_s" -v s="$slack" '$3 > t + s { printf "%ss ", $3 }' "$reqlog")
    [[ -z $bad ]] || why+=("requests answered $bad(only 204, 502, 503, 504 allowed)")
    [[ -z $slow ]] || why+=("request(s) took $slow longer than the request timeout ${timeout_s} s + $slack s")
    local w down_codes=()
    for w in "${windows[@]}"; do
        local d
        d=$(awk -v a="${w%:*}" -v b="${w#*:}" '$1 >= a && $1 <= b && $2 ~ /^50[234]$/ { c[$2]++ } END { for (k in c) printf "%s x%d ", k, c[k] }' "$reqlog")
        [[ -n $d ]] || why+=("no request answered 502/503/504 while the server was down ($w)")
        down_codes+=("[${d% }]")
    done
    local connects=$(( $(grep -c 'connected to the key-value server' "$glog") - connects0 ))
    ((connects >= flaps)) || why+=("the gateway logged $connects reconnections for $flaps restarts")
    if [[ -z $reg0 || -z $reg1 || -z $heap0 || -z $heap1 ]]; then
        why+=("cannot read the gateway's memory (registered $reg0 -> $reg1, heap $heap0 -> $heap1)")
    else
        ((reg1 <= reg0)) || why+=("registered memory grew from $reg0 to $reg1 B")
        ((heap1 <= heap0 + 16 * 1024 * 1024)) || why+=("the heap after GC grew from $heap0 to $heap1 B")
    fi
    if ((${#why[@]})); then fail "$name" "$(IFS=';'; echo "${why[*]}")"
    else pass "$name" "$flaps restarts of b's key-value server under $total PUTs (each answered within ${timeout_s} s + $slack s; while down: ${down_codes[*]}); reconnected ${reconnects[*]} after each restart listened; registered memory $reg0 -> $reg1 B, heap after GC $heap0 -> $heap1 B (after the first flap -> after the last)"; fi
}

# b's key-value server goes away: b dies. Requests answer within the request timeout (504 while the dead
# connection still looks open, then 503), health goes DOWN once the connection failed, and when b is back
# the gateway reconnects (its next request or health check) and serves again.
gateway_host_death() {
    local name=gateway-host-death why=() code t0 t_killed gpid
    local timeout_s=$gateway_timeout_s
    if [[ ! -s $LAB_DIR/b.pid ]]; then   # b died in an earlier test: boot it again
        set_b_logs_aside
        "$lab_ctl" host boot b >/dev/null || { fail "$name" "cannot boot b again"; return; }
    fi
    wait_for "$LAB_DIR/b-kv.log" 'listening' 240 >/dev/null || { fail "$name" "b's key-value server did not start"; return; }
    gpid=$(gateway_ready) || { fail "$name" "the gateway did not become healthy: $(tail -n 3 "$glog" | tr '\n' ' ')"; return; }
    code=$(curl -s -m 30 -o /dev/null -w '%{http_code}' -X PUT --data-binary 'before' "$gw/kv/k1")
    [[ $code == 204 ]] || why+=("PUT before the death answered $code")
    # host-death watches the same death (see host_death); armed last, so b's transfer is under way at the kill
    local armed=
    if [[ " $tests " == *" host-death "* ]]; then
        host_death_merged=1
        host_death_arm && armed=1
    fi
    local t_asked glog_seen
    glog_seen=$(wc -l <"$glog")
    t_asked=$EPOCHREALTIME
    "$lab_ctl" host kill b >/dev/null
    t_killed=$EPOCHREALTIME
    # Requests for bound + slack + 10 s: each must answer within the request timeout (+2 s for HTTP and
    # emulation), 504 or 503; the last ones 503 and the health DOWN.
    # Each request is recorded as code@second it was SENT after the kill.
    local end=$(( SECONDS + ${bound%.*} + slack + 10 )) codes=() slow=() t1 took
    while ((SECONDS < end)); do
        t0=$EPOCHREALTIME
        code=$(curl -s -m $((timeout_s + 30)) -o /dev/null -w '%{http_code}' "$gw/kv/k1")
        t1=$EPOCHREALTIME; took=$(elapsed "$t0" "$t1")
        codes+=("$code@$(elapsed "$t_asked" "$t0")s")
        awk -v d="$took" -v t="$timeout_s" -v s="$slack" 'BEGIN { exit !(d > t + s) }' && slow+=("${took}s")
        nap 1
    done
    ((${#slow[@]} == 0)) || why+=("request(s) took ${slow[*]}, longer than the request timeout ${timeout_s} s + $slack s")
    # Once the bound (+ slack) has passed, the connection has failed: every request sent later is 503.
    local c late_ok=1
    for c in "${codes[@]}"; do
        awk -v t="${c#*@}" -v b="$bound" -v s="$slack" 'BEGIN { exit !(t + 0 > b + s) }' && [[ ${c%@*} != 503 ]] && late_ok=0
    done
    ((late_ok)) || why+=("a request later than the bound + slack after the death did not answer 503: ${codes[*]}")
    for c in "${codes[@]}"; do [[ ${c%@*} =~ ^(503|504)$ ]] || why+=("a request after the death answered $c"); done
    local closed_line
    closed_line=$(tail -n +$((glog_seen + 1)) "$glog" | grep -m 1 'connection to the key-value server closed')
    local health
    health=$(curl -s -m 15 "$gw/actuator/health")
    [[ $health == *'"kv":{"status":"DOWN"'* || $health == *'"status":"DOWN"'* ]] || why+=("health is not DOWN: ${health:0:200}")
    # b comes back with an empty key-value server: the gateway reconnects and serves again. b boots while
    # host-death's receiver is judged (the two VMs run side by side).
    set_b_logs_aside
    local boot_rc=$LAB_DIR/b-boot.rc
    rm -f "$boot_rc"
    { "$lab_ctl" host boot b >/dev/null; echo $? >"$boot_rc"; } &
    local bootpid=$!
    [[ -z $armed ]] || host_death_judge "$t_asked" "$t_killed"
    wait "$bootpid"
    [[ $(<"$boot_rc") == 0 ]] || why+=("cannot boot b again")
    deadline=$((SECONDS + 240)) code=
    until [[ $code == 204 ]] || ((SECONDS >= deadline)); do
        nap 3
        code=$(curl -s -m 30 -o /dev/null -w '%{http_code}' -X PUT --data-binary 'after' "$gw/kv/k2")
    done
    [[ $code == 204 ]] || why+=("no PUT succeeded within 240 s of booting b again (last: $code)")
    [[ $(curl -s -m 30 "$gw/kv/k2") == after ]] || why+=("GET after reconnecting did not return the value")
    if ((${#why[@]})); then fail "$name" "$(IFS=';'; echo "${why[*]}")"
    else pass "$name" "connection failed $(elapsed "$t_asked" "${closed_line%% *}") s after b died (bound $bound s + slack $slack s); requests: ${codes[*]} (code@seconds after the kill it was sent; request timeout ${timeout_s} s); health DOWN; reconnected after b came back"; fi
}

# Idle peer detection (docs/failure-semantics.md#idle-peer-detection): an echo server on a (the engine's
# default IDLE_PROBE_INTERVAL, 20 s), and on b a plain rdma_cm client that connects and then never sends
# (idle-client.c). With b alive the server's probes (zero-length RDMA WRITEs) leave the connection open
# for more than a probe interval; then b dies and the server, which has nothing else posted, must close
# the connection within 1.25 x 20 s + min(the retry bound, 1.25 x 20 s) (the probe's failure or its own
# deadline: 50 s here, see idle_bound), its QPs gone and its memory registrations not above what it held with the connection open.
idle_probe_interval=20
idle_host_death() {
    local name=idle-host-death elog=$LAB_DIR/a-echo.log pid why=() t_asked t_killed line detect detect_min qps mrs mr_open
    local idle_bound
    # The probe after 1 to 1.25 intervals of quiet, then its failure within the retry bound or its own
    # deadline (another 1 to 1.25 intervals), whichever comes first. The plain client's rdma_connect asks
    # for RETRY_COUNT 7, which rxe retries forever, so here the deadline decides: 2.5 intervals.
    idle_bound=$(awk -v i=$idle_probe_interval 'BEGIN { printf "%.2f", 2.5 * i }')
    if [[ ! -s $LAB_DIR/b.pid ]]; then   # b died in an earlier test: boot it again
        "$lab_ctl" host boot b >/dev/null || { fail "$name" "cannot boot b again"; return; }
    fi
    "$here/run-sample" echo server --host "$RXE_IP" -p 7476 > >(stamp >"$elog") 2>&1 &
    wait_for "$elog" 'listening' 120 >/dev/null || { fail "$name" "a's echo server did not start"; return; }
    pid=$(pgrep -n -f 'java .*Echo server .*-p 7476')
    [[ -n $pid ]] || { fail "$name" "no echo server process"; return; }
    b_job idle-client "gcc -O2 -o \$LAB_DIR/idle-client $here/idle-client.c -lrdmacm -libverbs && exec \$LAB_DIR/idle-client $LAB_A_IP 7476"
    wait_for "$elog" 'connection from' 180 >/dev/null || { fail "$name" "b's idle client did not connect: $(tail -n 3 "$LAB_DIR/jobs/idle-client.log" 2>/dev/null | tr '\n' ' ')"; return; }
    # b alive: probes go out and are acknowledged, the idle connection stays open past an interval.
    nap $((idle_probe_interval + idle_probe_interval / 2))
    if grep -qE 'closed after|failed' "$elog"; then fail "$name" "the connection to the live idle client closed: $(grep -m 1 -E 'closed after|failed' "$elog")"; kill "$pid"; return; fi
    qps=$(rdma_count qp "$pid"); mr_open=$(rdma_count mr "$pid")
    ((qps > 0)) || { fail "$name" "no QP of the echo server (pid $pid) is listed with the client connected: cannot check"; kill "$pid"; return; }
    t_asked=$EPOCHREALTIME
    "$lab_ctl" host kill b >/dev/null
    t_killed=$EPOCHREALTIME
    # Waits well past the bound, so that a late detection is measured, not only failed.
    line=$(wait_for "$elog" 'closed after|failed' $(( ${idle_bound%.*} + slack + 180 )))
    [[ -n $line ]] || { fail "$name" "a's echo server did not close the dead idle connection within $((${idle_bound%.*} + slack + 180)) s"; kill "$pid"; return; }
    local probe_line
    probe_line=$(grep -m 1 'idle probe was not acknowledged' "$elog")
    [[ -n $probe_line ]] || why+=("the close was not the idle probe's: no 'idle probe was not acknowledged' in the log")
    detect=$(elapsed "$t_asked" "${line%% *}")
    detect_min=$(elapsed "$t_killed" "${line%% *}")
    awk -v d="$detect" -v b="$idle_bound" -v s="$slack" 'BEGIN { exit !(d <= b + s) }' \
        || why+=("detection took $detect s ($detect_min s from the kill's acknowledgement; the probe failed at $(elapsed "$t_killed" "${probe_line%% *}") s), more than the bound $idle_bound s + $slack s")
    nap 1
    qps=$(rdma_count qp "$pid"); mrs=$(rdma_count mr "$pid")
    ((qps == 0)) || why+=("$qps QP(s) of the echo server still exist after the close")
    ((mrs <= mr_open)) || why+=("the echo server holds $mrs memory registrations, $mr_open with the connection open")
    kill "$pid" 2>/dev/null
    if ((${#why[@]})); then fail "$name" "$(IFS=';'; echo "${why[*]}")"
    else pass "$name" "a's echo server closed the dead idle connection $detect_min-$detect s after b died (its probe failed $(elapsed "$t_killed" "${probe_line%% *}") s after) (bound 1.25 x ${idle_probe_interval} s + the probe's deadline 1.25 x ${idle_probe_interval} s, since rxe retries the plain client's RETRY_COUNT 7 forever: $idle_bound s; QPs left 0, MRs $mrs of $mr_open); the live idle client stayed connected for $((idle_probe_interval * 3 / 2)) s: $(cut -c1-160 <<<"${line#* }")"; fi
}

# The order (whatever order TWO_HOST_TESTS names them in): the loss and partition tests first, then the
# gateway's (the gateway started with the lab, they wait for it least there), then the tests that kill b,
# host-death last: b dies for good and is not booted again (idle-host-death, not in CI, boots it again).
order="loss-push-1 loss-pull-1 loss-push-3 loss-pull-3 partition-short partition-long gateway-flapping-backend gateway-host-death host-death idle-host-death"
wanted=" ${TWO_HOST_TESTS:-$order} "
tests=
for t in $order; do [[ $wanted == *" $t "* ]] && tests+=" $t"; done
for t in $wanted; do [[ " $order " == *" $t "* ]] || tests+=" $t"; done
host_death_merged=   # set when gateway-host-death ran host-death with it
[[ $tests == *gateway-* ]] && gateway_start
wait_for "$LAB_DIR/b-receiver.log" 'listening on' 180 >/dev/null || say "b's receiver is not listening yet"
for t in $tests; do
    say "== $t at $(date -u +%T)"
    case $t in
        loss-push-1) loss_test push 1% 4m ;;
        loss-pull-1) loss_test pull 1% 4m ;;
        loss-push-3) loss_test push 3% 4m ;;
        loss-pull-3) loss_test pull 3% 4m ;;
        partition-short) partition_short ;;
        partition-long) partition_long ;;
        gateway-flapping-backend) gateway_flapping_backend ;;
        gateway-host-death) gateway_host_death ;;
        host-death) [[ -n $host_death_merged ]] || { gateway_stop; host_death; } ;;
        idle-host-death) gateway_stop; idle_host_death ;;
        *) fail "$t" "no such test" ;;
    esac
done
gateway_stop
grep -q '^FAIL' "$results" && exit 1
exit 0
