#!/bin/bash
# Runs inside the rxe-vm guest, as root, chrooted into the host's root file system (read-only 9p share
# under a throw-away tmpfs overlay), started by scripts/lib/vm-init.sh. Sets up Soft-RoCE (rxe0 on a
# dummy netdev with 10.77.0.1/24, an address that exists only inside the VM), then runs the user's
# command in the directory scripts/rxe-vm was called from.
#
# $1 is the job file the host wrote (bash: RXE_VM_* settings, exported environment, RXE_VM_CMD array).
# Results go back through the writable share that holds the job file:
#   status        the command's exit status
#   setup-failed  the reason when RDMA could not be set up (the command did not run)
set -uo pipefail

job=$1
share=${job%/*}
# shellcheck source=/dev/null
. "$job" || { echo "rxe-vm(guest): cannot read $job"; echo "bad job file" >"$share/setup-failed"; exit 125; }

say() { printf 'rxe-vm(guest): %s\n' "$*" >&2; }

setup_failed() {
    say "RDMA setup failed: $*"
    say "relevant kernel messages:"
    dmesg | grep -iE 'rxe|rdma|infiniband|ib_core|uverbs|ib_cm|iw_cm|dummy|crc32|udp_tunnel|unknown symbol|modprobe' | tail -n 40 \
        | sed 's/^/  /' >&2
    printf '%s\n' "$*" >"$share/setup-failed"
    exit 125
}

kmod() { modprobe -d "$RXE_VM_KROOT" -S "$RXE_VM_KVER" "$@"; }

name_suffix=
[[ ${RXE_VM_NAME:-rxe-vm} == rxe-vm ]] || name_suffix=-$RXE_VM_NAME
hostname "$RXE_VM_HOSTNAME$name_suffix" 2>/dev/null || true
# devtmpfs has no /dev/fd: bash's process substitution <(...) needs it.
[[ -e /dev/fd ]] || ln -s /proc/self/fd /dev/fd
ip link set lo up || setup_failed "cannot bring up lo"

# crc32_generic first: rxe asks the crypto API for "crc32", and without it "rdma link add" fails with
# "No such file or directory".
kmod -a crc32_generic rdma_rxe ib_uverbs rdma_ucm dummy || setup_failed "modprobe of the RDMA modules failed"

dev=rxe0
ip=${RXE_VM_IP:-10.77.0.1}
if [[ -n ${RXE_VM_NET:-} ]]; then
    # A real NIC on a segment shared with another VM (scripts/rxe-lab); netem and tc filters let tests
    # lose, delay and drop its packets.
    kmod -a virtio_net sch_netem sch_ingress cls_matchall act_gact || setup_failed "modprobe of virtio_net/netem failed"
    netdev=
    for _ in $(seq 1 50); do
        netdev=$(ls /sys/class/net | grep -vE '^(lo|dummy[0-9]*)$' | head -n 1)
        [[ -n $netdev ]] && break
        sleep 0.1
    done
    [[ -n $netdev ]] || setup_failed "no network interface appeared for --net"
else
    netdev=dummy0
    ip link add dummy0 type dummy || setup_failed "ip link add dummy0 type dummy"
fi
# MTU 9000 so that the RoCE path MTU (active_mtu) is 4096, the largest IB MTU.
ip link set "$netdev" mtu 9000 || setup_failed "ip link set $netdev mtu 9000"
ip addr add "$ip/24" dev "$netdev" || setup_failed "ip addr add $ip/24 dev $netdev"
ip link set "$netdev" up || setup_failed "ip link set $netdev up"
rdma link add "$dev" type rxe netdev "$netdev" || setup_failed "rdma link add $dev type rxe netdev $netdev"

state=
for _ in $(seq 1 100); do
    state=$(cat "/sys/class/infiniband/$dev/ports/1/state" 2>/dev/null || true)
    [[ $state == *ACTIVE* ]] && break
    sleep 0.1
done
[[ $state == *ACTIVE* ]] || setup_failed "port 1 of $dev is not ACTIVE (state: ${state:-none}); rdma link: $(rdma link 2>&1)"

for node in /dev/infiniband/uverbs0 /dev/infiniband/rdma_cm; do
    for _ in $(seq 1 50); do [[ -c $node ]] && break; sleep 0.1; done
    [[ -c $node ]] || setup_failed "$node is missing"
done

mtu=$(ibv_devinfo -d "$dev" -i 1 2>&1 | awk '/active_mtu:/ {print $2; exit}')
[[ $mtu == 4096 ]] || setup_failed "active_mtu of $dev is '${mtu:-unknown}', expected 4096: $(ibv_devinfo -d "$dev" 2>&1)"

export RXE_DEVICE=$dev RXE_IP=$ip RXE_NETDEV=$netdev RXE_VM_OUT=$RXE_VM_OUT_PATH RXE_VM=1
if [[ -n ${RXE_VM_COLUMNS:-} ]]; then
    stty -F /dev/ttyS0 cols "$RXE_VM_COLUMNS" rows "${RXE_VM_LINES:-50}" 2>/dev/null
    stty -F /dev/ttyS2 cols "$RXE_VM_COLUMNS" rows "${RXE_VM_LINES:-50}" 2>/dev/null
fi
ulimit -l unlimited || say "warning: cannot lift the locked-memory limit"
umask 022
printf '%s\n' "$(cut -d' ' -f1 /proc/uptime)" >"$share/ready"
[[ ${RXE_VM_QUIET:-0} == 1 ]] || say "$dev ACTIVE on $netdev $ip, active_mtu 4096; running: ${RXE_VM_CMD[*]}"

cd "$RXE_VM_CWD" || { printf 'cannot cd to %s\n' "$RXE_VM_CWD" >"$share/setup-failed"; say "cannot cd to $RXE_VM_CWD"; exit 125; }
"${RXE_VM_CMD[@]}" </dev/null
rc=$?
printf '%s\n' "$rc" >"$share/status"
sync
exit "$rc"
