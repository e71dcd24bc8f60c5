#!/bin/bash
# The network agent of one rxe-lab VM: polls $LAB_DIR/ctl/$LAB_SIDE for requests that scripts/lab-ctl
# left (from either VM), applies each to this VM's NIC with tc, and answers with a .done file (exit
# status, then output). Only fixed actions exist: a request cannot run arbitrary commands.
set -uo pipefail
dir=$LAB_DIR/ctl/$LAB_SIDE
nic=$RXE_NETDEV

clear_rules() {
    tc qdisc del dev "$nic" root 2>/dev/null
    tc qdisc del dev "$nic" clsact 2>/dev/null
    return 0
}
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
            tc qdisc replace dev "$nic" root netem loss 100% &&
                tc qdisc add dev "$nic" clsact &&
                tc filter add dev "$nic" ingress matchall action drop &&
                echo "applied_at=$(date +%s.%N)" ;;   # on this VM's clock: when the cut began
        clear|heal) clear_rules && echo "applied_at=$(date +%s.%N)" ;;
        counters)
            # rxe's hw counters: name=value, one a line.
            local f
            for f in /sys/class/infiniband/"$RXE_DEVICE"/ports/1/hw_counters/*; do
                printf '%s=%s\n' "${f##*/}" "$(<"$f")"
            done ;;
        show) tc -s qdisc show dev "$nic"; tc -s filter show dev "$nic" ingress 2>/dev/null ;;
        *) echo "unknown action '$action' (netem, partition, heal, clear, counters, show)"; return 2 ;;
    esac
}
while :; do
    for req in "$dir"/*.req; do
        [[ -e $req ]] || continue
        read -r -a words <"$req" || true
        rm -f "$req"
        base=${req%.req}
        output=$(apply "${words[@]}" 2>&1)
        rc=$?
        printf '%s\n%s\n' "$rc" "$output" >"$base.tmp" && mv "$base.tmp" "$base.done"
        echo "lab-$LAB_SIDE agent: ${words[*]} -> $rc at $(date -u +%T.%N)" >&2
    done
    sleep 0.1
done
