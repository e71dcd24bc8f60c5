# Shared by the two-host test scripts (sourced): the sample launcher and time stamps.
two_host_lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
sample() { "$two_host_lib/run-sample" "$@"; }
now() { date +%s.%N; }
# Prefixes every line with the time it was read (seconds since the epoch): detection times are measured
# on one clock, the VM's own.
stamp() { local l; while IFS= read -r l; do printf '%s %s\n' "$(now)" "$l"; done; }
