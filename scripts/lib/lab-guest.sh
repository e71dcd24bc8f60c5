#!/bin/bash
# Runs inside each VM of scripts/rxe-lab: starts the network agent (scripts/lib/lab-agent.sh, which
# applies the netem/partition requests scripts/lab-ctl leaves for this side), then the lab command.
# $1: the command line (bash). Its exit status is ours.
set -uo pipefail
here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd -P)
export LAB_SIDE LAB_DIR LAB_A_IP LAB_B_IP LAB_PEER_IP
bash "$here/lab-agent.sh" &
agent=$!
echo "lab-$LAB_SIDE: $RXE_DEVICE on $RXE_NETDEV $RXE_IP ready at $(date -u +%T.%N) (uptime $(cut -d' ' -f1 /proc/uptime) s)" >&2
bash -c "$1"
rc=$?
kill "$agent" 2>/dev/null
exit "$rc"
