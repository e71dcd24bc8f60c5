#!/bin/bash
# Host b of scripts/two-host-tests: the servers the driver on a talks to, and a runner for the jobs the
# driver asks b to start (a sender that dies with b, a key-value server that comes back with b).
# Runs until rxe-lab powers b off. $TWO_HOST_CP: the samples' class path (built on the host).
set -uo pipefail
here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd -P)
source "$here/common.sh"
jobs_dir=$LAB_DIR/jobs
mkdir -p "$jobs_dir"

# The bulk receiver every loss and partition test sends to. Its watchdog (45 s) is longer than the RC retry
# bound (15 s), so the transport, not the watchdog, reports a dead link first; and it counts from the accept,
# so it must also outlast a starved sender's set-up: with 20 s, CI twice saw b give up on a sender that had
# not sent its first chunk yet (b accepted, the header came 15 s later, "no data ... for 20000 ms after 0
# bytes"; that sender's connect had taken 49 s), failing loss-push-1 and partition-short.
sample bulk receive --host "$RXE_IP" -p 7472 --timeout-ms 45000 > >(stamp >"$LAB_DIR/b-receiver.log") 2>&1 &
# The key-value server behind the gateway test.
sample kv server --host "$RXE_IP" -p 7474 > >(stamp >"$LAB_DIR/b-kv.log") 2>&1 &
echo "peer: servers started at $(now)" >&2

while :; do
    for job in "$jobs_dir"/*.job; do
        [[ -e $job ]] || continue
        mv "$job" "$job.running"
        bash "$job.running" > >(stamp >"${job%.job}.log") 2>&1 &
    done
    nap 0.1
done
