# Shared helpers of the integration tests: a scratch directory, the database, assertions.
# Each test is a bash script run by ctest with ALLOCLAB (the CLI) and WORKLOAD (the test
# children) set; it exits non-zero with a FAIL line on the first broken expectation.
set -euo pipefail

: "${ALLOCLAB:?ALLOCLAB must point to the alloclab binary}"
: "${WORKLOAD:?WORKLOAD must point to alloclab-workload}"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/alloclab-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
DB="$WORK/results.db"
export ALLOCLAB_DB="$DB"

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# expect_eq ACTUAL EXPECTED WHAT
expect_eq() {
    [[ "$1" == "$2" ]] || fail "$3: expected '$2', got '$1'"
}

# expect_contains HAYSTACK NEEDLE WHAT
expect_contains() {
    [[ "$1" == *"$2"* ]] || fail "$3: '$2' not found in:
$1"
}

# q SQL: one query against the test database, values separated by '|'.
q() {
    sqlite3 -batch -noheader "$DB" "$1"
}

# run_alloclab EXPECTED_EXIT ARGS...: runs the CLI, keeps stdout in $OUT and stderr in $ERR.
run_alloclab() {
    local expected=$1
    shift
    local rc=0
    "$ALLOCLAB" "$@" >"$WORK/stdout" 2>"$WORK/stderr" || rc=$?
    OUT=$(cat "$WORK/stdout")
    ERR=$(cat "$WORK/stderr")
    [[ $rc == "$expected" ]] || fail "alloclab $* exited $rc, expected $expected
stdout: $OUT
stderr: $ERR"
}
