# Sourced by the bench scripts that measure real children of the test workload: alloclab and
# alloclab-workload from the build directory BUILD (configured with -DBUILD_TESTING=ON), and a
# scratch directory $work that goes when the script ends (KEEP=1 keeps it). BUSY=N makes the
# machine a shared one for as long as the script runs: another tenant, 0 to N CPU-bound loops
# drawn anew every 1 to 4 s, so that the machine's speed moves between runs (and sometimes within
# one) as a busy machine's does, whatever the hour (on 2 cores, BUSY=1 takes one core at times,
# BUSY=2 both).
#
#   . "$(dirname "$0")/workload.sh" "$BUILD"
alloclab=$1/cli/alloclab
workload=$1/tests/workloads/alloclab-workload
[[ -x $alloclab && -x $workload ]] || { echo "build alloclab with -DBUILD_TESTING=ON first" >&2; exit 1; }
work=$(mktemp -d)
busy_pid=
if [[ ${BUSY:-0} -gt 0 ]]; then
    # Its own process group (setsid), ended through it when the script ends.
    BUSY=$BUSY setsid bash -c 'while :; do
        n=$((RANDOM % ($BUSY + 1))) d=$((1 + RANDOM % 4))
        for _ in $(seq $n); do timeout $d bash -c "while :; do :; done" & done
        sleep $d
        wait
    done' &
    busy_pid=$!
    echo "BUSY=$BUSY: another tenant's 0-$BUSY CPU-bound loops run beside the measurements (process group $busy_pid)"
fi
end_workload() {
    [[ -z $busy_pid ]] || kill -- "-$busy_pid" 2>/dev/null || true
    [[ -n ${KEEP:-} ]] || rm -rf "$work"
}
trap end_workload EXIT
spin=20000000 # the workload's spin count for about 20 ms
