# Shared by the two-host test scripts (sourced): the sample launcher, time stamps, waits.
# Builtins wherever a loop runs: under TCG a fork and exec (date, sleep, grep) costs tens to hundreds of
# ms of the VM's one host thread, taken from the JVMs under test; the old per-line `date` and 5-per-second
# grep and sleep polls added up to seconds per test.
two_host_lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
sample() { "$two_host_lib/run-sample" "$@"; }
now() { printf '%s\n' "$EPOCHREALTIME"; }
# nap SECONDS: sleep without a process (read -t on a pipe nobody writes to)
exec {two_host_nap_fd}<> <(:)
nap() { read -r -t "$1" -u "$two_host_nap_fd" _; return 0; }
# Prefixes every line with the time it was read (seconds since the epoch): detection times are measured
# on one clock, the VM's own.
stamp() { local l; while IFS= read -r l || [[ -n $l ]]; do printf '%s %s\n' "$EPOCHREALTIME" "$l"; done; }
# wait_for FILE REGEX SECONDS: the first line matching the extended REGEX (bash's =~), or nothing and
# status 1 after SECONDS. Reads the file once, incrementally, as it grows (a line still being written is
# kept until its end arrives).
wait_for() {
    local file=$1 re=$2 deadline=$((SECONDS + $3)) fd= line part=
    while :; do
        if [[ -z $fd && -e $file ]]; then exec {fd}<"$file"; fi
        if [[ -n $fd ]]; then
            while IFS= read -r -u "$fd" line; do
                line=$part$line part=
                if [[ $line =~ $re ]]; then exec {fd}<&-; printf '%s\n' "$line"; return 0; fi
            done
            part+=$line   # an unfinished last line
        fi
        ((SECONDS < deadline)) || break
        nap 0.2
    done
    [[ -z $fd ]] || exec {fd}<&-
    return 1
}
