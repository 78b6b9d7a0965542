# Sourced by the bench scripts that measure real children of the test workload: alloclab and
# alloclab-workload from the build directory BUILD (configured with -DBUILD_TESTING=ON), and a
# scratch directory $work that goes when the script ends (KEEP=1 keeps it).
#
#   . "$(dirname "$0")/workload.sh" "$BUILD"
alloclab=$1/cli/alloclab
workload=$1/tests/workloads/alloclab-workload
[[ -x $alloclab && -x $workload ]] || { echo "build alloclab with -DBUILD_TESTING=ON first" >&2; exit 1; }
work=$(mktemp -d)
[[ -n ${KEEP:-} ]] || trap 'rm -rf "$work"' EXIT
spin=20000000 # the workload's spin count for about 20 ms
