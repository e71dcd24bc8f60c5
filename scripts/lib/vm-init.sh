#!/bin/sh
# /init of the rxe-vm initramfs (run by busybox sh as PID 1 inside the VM; scripts/rxe-vm builds the
# initramfs from this file). It only makes the host's root file system usable, then hands over to
# scripts/lib/vm-guest.sh, which does the RDMA setup and runs the user's command.
#
#   ttyS0  = the host's stdout: the command's standard output.
#   ttyS1  = the kernel console, logged to a file on the host (printed by the host only on failure).
#   ttyS2  = the host's stderr: the command's standard error and our messages.
#   9p "hostroot"  = the host's / , read-only; an overlay with a tmpfs upper layer makes it writable
#                   inside the VM (writes are thrown away at power-off).
#   9p "rxeout"    = the per-run directory on the host, writable: job description in, status out.
#   9p "rxeuser"   = the --out directory, writable, mounted at its host path (RXE_VM_OUT).
PATH=/bin
export PATH
/bin/busybox --install -s /bin

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

# No \r insertion: the host terminal is left in its normal mode and adds the \r itself; logs stay clean.
stty -F /dev/ttyS0 raw -echo 2>/dev/null
stty -F /dev/ttyS2 raw -echo 2>/dev/null
exec </dev/null >/dev/ttyS0 2>/dev/ttyS2

# Waits until the serial ports have sent everything (stty sets the mode with TCSADRAIN).
drain() {
    stty -F /dev/ttyS0 raw -echo 2>/dev/null
    stty -F /dev/ttyS2 raw -echo 2>/dev/null
}

die() {
    echo "rxe-vm(init): $*" >&2
    echo "rxe-vm(init): kernel messages:" >&2
    dmesg | tail -n 40 >&2
    drain
    poweroff -f
    echo o >/proc/sysrq-trigger
    sleep 10
    exit 1
}

while read -r mod args; do
    [ -n "$mod" ] || continue
    # shellcheck disable=SC2086 # module parameters are words
    insmod "/lib/rxe-vm-modules/$mod" $args || die "insmod $mod failed"
done </lib/rxe-vm-modules/order

msize=512000
mkdir -p /host /rw /newroot
mount -t 9p -o trans=virtio,version=9p2000.L,msize=$msize,cache=loose,ro hostroot /host \
    || die "cannot mount the host's root file system (9p share hostroot)"
mount -t tmpfs -o mode=0755 tmpfs /rw || die "cannot mount tmpfs"
mkdir -p /rw/upper /rw/work
if ! mount -t overlay overlay -o lowerdir=/host,upperdir=/rw/upper,workdir=/rw/work /newroot; then
    echo "rxe-vm(init): overlay over the host root failed; using it read-only" >&2
    mount --bind /host /newroot || die "cannot bind the host root"
fi

mount -t proc proc /newroot/proc || die "mount proc"
mount -t sysfs sysfs /newroot/sys || die "mount sysfs"
mount -t devtmpfs devtmpfs /newroot/dev || die "mount devtmpfs"
mkdir -p /newroot/dev/pts /newroot/dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /newroot/dev/pts
mount -t tmpfs -o mode=1777 tmpfs /newroot/dev/shm
mount -t tmpfs -o mode=0755 tmpfs /newroot/run || die "mount /run"
mkdir -p /newroot/run/rxe-vm /newroot/run/lock
mount -t 9p -o trans=virtio,version=9p2000.L,msize=$msize,cache=none rxeout /newroot/run/rxe-vm \
    || die "cannot mount the results share (9p rxeout)"
[ -r /newroot/run/rxe-vm/boot.conf ] || die "no boot.conf in the results share"
# shellcheck disable=SC1091 # written by scripts/rxe-vm
. /newroot/run/rxe-vm/boot.conf
# The --out directory: writable, at the same path as on the host.
mkdir -p "/newroot$RXE_VM_OUT_PATH" || die "cannot create $RXE_VM_OUT_PATH"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=$msize,cache=none rxeuser "/newroot$RXE_VM_OUT_PATH" \
    || die "cannot mount the output directory $RXE_VM_OUT_PATH (9p rxeuser)"
cut -d' ' -f1 /proc/uptime >/newroot/run/rxe-vm/booted

# Kernel module autoloading (e.g. "crypto-crc32", "rdma-link-rxe") runs its helper in this initramfs,
# not in the chroot: point it at the host's modprobe reading the cached kernel's module tree.
printf '#!/bin/sh\nexec /bin/chroot /newroot /sbin/modprobe -d "%s" -S "%s" "$@"\n' \
    "$RXE_VM_KROOT" "$RXE_VM_KVER" >/bin/rxe-vm-modprobe
chmod 755 /bin/rxe-vm-modprobe
echo /bin/rxe-vm-modprobe >/proc/sys/kernel/modprobe

chroot /newroot /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /bin/bash "$RXE_VM_GUEST_SCRIPT" /run/rxe-vm/job.sh
rc=$?
[ -e /newroot/run/rxe-vm/status ] || [ -e /newroot/run/rxe-vm/setup-failed ] \
    || echo "$rc" >/newroot/run/rxe-vm/guest-script-status
sync
umount "/newroot$RXE_VM_OUT_PATH" /newroot/run/rxe-vm 2>/dev/null
drain
poweroff -f
echo o >/proc/sysrq-trigger
sleep 10
