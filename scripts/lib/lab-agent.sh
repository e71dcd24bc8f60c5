#!/bin/bash
# The network agent of one rxe-lab VM: polls $LAB_DIR/ctl/$LAB_SIDE for requests that scripts/lab-ctl
# left (from either VM), applies each to this VM's NIC with tc, and answers with a .done file (the output,
# then "rc=STATUS" as the last line). Only fixed actions exist: a request cannot run arbitrary commands.
# A request may chain actions with ";" ("netem loss 1% ; counters"): one round trip instead of two.
# Forks are what cost under TCG (an exec of sleep, date, cat, rm or mv takes tens to hundreds of ms of the
# VM's one host thread, beside the JVMs under test): the loop, the files, the time stamps and the counters
# use bash builtins only, and each action runs at most two tc processes (one -batch for what it changes).
set -uo pipefail
dir=$LAB_DIR/ctl/$LAB_SIDE
nic=$RXE_NETDEV
exec {nap_fd}<> <(:)   # read -t on a pipe nobody writes to: a sleep without a fork
nap() { read -r -t "$1" -u "$nap_fd" _; return 0; }

clear_rules() {
    tc -force -batch - 2>/dev/null <<EOF
qdisc del dev $nic root
qdisc del dev $nic clsact
EOF
    return 0
}
applied_at() { echo "applied_at=$EPOCHREALTIME"; }   # on this VM's clock: when the change was made
apply() { # action args...
    local action=$1; shift
    case $action in
        netem)
            # netem's own words and numbers only (loss 3%, delay 50ms 10ms distribution normal, reorder 25% ...)
            local a
            for a in "$@"; do [[ $a =~ ^[a-z0-9.%]+$ ]] || { echo "bad netem argument '$a'"; return 2; }; done
            tc qdisc replace dev "$nic" root netem "$@" ;;
        partition)
            # Egress: netem drops every packet; ingress: a matchall filter drops every packet.
            clear_rules
            tc -batch - <<EOF && applied_at
qdisc replace dev $nic root netem loss 100%
qdisc add dev $nic clsact
filter add dev $nic ingress matchall action drop
EOF
            ;;
        clear|heal) clear_rules && applied_at ;;
        counters)
            # rxe's hw counters: name=value, one a line.
            local f v
            for f in /sys/class/infiniband/"$RXE_DEVICE"/ports/1/hw_counters/*; do
                read -r v <"$f" && printf '%s=%s\n' "${f##*/}" "$v"
            done ;;
        show) tc -s qdisc show dev "$nic"; tc -s filter show dev "$nic" ingress 2>/dev/null ;;
        *) echo "unknown action '$action' (netem, partition, heal, clear, counters, show)"; return 2 ;;
    esac
}
apply_all() { # words...: actions separated by ";", stops at the first that fails
    local words=() rc=0
    while (($#)); do
        if [[ $1 == ";" ]]; then apply "${words[@]}" || return $?; words=()
        else words+=("$1"); fi
        shift
    done
    ((${#words[@]} == 0)) || apply "${words[@]}"
}
stamp_time() { # prints HH:MM:SS.micro (UTC) of now into $1
    local t=$EPOCHREALTIME
    TZ=UTC printf -v "$1" '%(%T)T.%s' "${t%.*}" "${t#*.}"
}
# The protocol without a process per request: lab-ctl writes NAME.req in one write; the agent answers in
# NAME.done, the output and then "rc=N" as the last line (lab-ctl waits for that line). Requests stay in
# the directory (the lab's directory is thrown away); the names already answered are remembered here.
declare -A answered=()
while :; do
    for req in "$dir"/*.req; do
        [[ -e $req && -z ${answered[$req]:-} ]] || continue
        words=()
        read -r -a words <"$req" || true
        ((${#words[@]})) || continue   # still being written
        answered[$req]=1
        base=${req%.req}
        apply_all "${words[@]}" >"$base.done" 2>&1
        rc=$?
        printf 'rc=%s\n' "$rc" >>"$base.done"
        stamp_time at
        echo "lab-$LAB_SIDE agent: ${words[*]} -> $rc at $at" >&2
    done
    nap 0.1
done
