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

# skip_test REASON: this test cannot run here; says why, records it for the summary that
# scripts/test.sh prints at the end (ALLOCLAB_SKIP_LOG), and exits 77 (ctest: skipped).
skip_test() {
    echo "SKIP: $1"
    [[ -n ${ALLOCLAB_SKIP_LOG:-} ]] && echo "$(basename "$0" .sh): $1" >>"$ALLOCLAB_SKIP_LOG"
    exit 77
}

# skip_part REASON: a part of this test cannot run here: said and recorded as skip_test does,
# and the test goes on.
skip_part() {
    echo "SKIP (part): $1"
    [[ -n ${ALLOCLAB_SKIP_LOG:-} ]] && echo "$(basename "$0" .sh) (part): $1" >>"$ALLOCLAB_SKIP_LOG"
    return 0
}

# machine_is_quiet: whether nothing else competes for the CPUs now, for checks that judge
# elapsed time: the CPUs at most 30% busy over a second (/proc/stat), and no CPU pressure
# (/proc/pressure/cpu some avg10 at most 10%). Pressure is a 10 s average: what the tests before
# left of it is waited out (at most 30 s) while the CPUs stay idle. Otherwise false, with
# QUIET_REASON saying what was seen.
machine_is_quiet() {
    QUIET_REASON=
    local psi busy
    for _ in $(seq 30); do
        busy=$({ head -1 /proc/stat; sleep 1; head -1 /proc/stat; } | awk '
            { idle[NR] = $5 + $6; total[NR] = 0; for (i = 2; i <= NF; i++) total[NR] += $i }
            END { t = total[2] - total[1]; printf "%.0f", (t > 0 ? 100 * (t - (idle[2] - idle[1])) / t : 0) }')
        if ((busy > 30)); then
            QUIET_REASON="the machine is busy (its CPUs were $busy% busy over a second)"
            return 1
        fi
        psi=$(awk '/^some/ { sub("avg10=", "", $2); print $2 }' /proc/pressure/cpu 2>/dev/null || true)
        if [[ -z $psi ]] || awk -v p="$psi" 'BEGIN { exit !(p <= 10) }'; then
            return 0
        fi
        QUIET_REASON="the machine is busy (CPU pressure some avg10 = $psi%)"
    done
    return 1
}

# A cgroup v2 of this test's own, for what it starts that must end with it whatever it does
# (a daemon that daemonizes, a cluster's processes): test_scope_start makes it next to the
# test's own cgroup and returns 1 where none can be made; test_scope_run CMD... & runs CMD in it
# in the background ($! is CMD's PID); test_scope_end kills everything in it (cgroup.kill) and
# removes it.
TEST_SCOPE=
test_scope_start() {
    local v2 own
    v2=$(findmnt -n -t cgroup2 -o TARGET 2>/dev/null | head -1)
    own=$(sed -n 's/^0:://p' /proc/self/cgroup)
    [[ -n $v2 ]] || return 1
    TEST_SCOPE="$v2${own%/}/test-scope-$$"
    if ! mkdir "$TEST_SCOPE" 2>/dev/null || [[ ! -w $TEST_SCOPE/cgroup.kill ]]; then
        rmdir "$TEST_SCOPE" 2>/dev/null
        TEST_SCOPE=
        return 1
    fi
}
test_scope_run() { # in the background (&): it replaces the shell that runs it
    exec sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$TEST_SCOPE" "$@"
}
test_scope_end() {
    [[ -n $TEST_SCOPE && -d $TEST_SCOPE ]] || return 0
    echo 1 >"$TEST_SCOPE/cgroup.kill"
    for _ in $(seq 200); do
        grep -q '^populated 0' "$TEST_SCOPE/cgroup.events" && break
        sleep 0.05
    done
    find "$TEST_SCOPE" -depth -type d -exec rmdir {} + 2>/dev/null
    [[ ! -d $TEST_SCOPE ]] || echo "warning: $TEST_SCOPE could not be removed" >&2
    TEST_SCOPE=
}

# need_other_users: tests that act as another user (nobody) need root and setpriv: skipped with
# the reason otherwise. as_nobody CMD...: CMD as nobody, without supplementary groups.
need_other_users() {
    if [[ $(id -u) != 0 ]] || ! command -v setpriv >/dev/null; then
        skip_test "needs root and setpriv (util-linux) to act as other users"
    fi
    nobody=$(id -u nobody)
    nogroup=$(id -g nobody)
}
as_nobody() {
    setpriv --reuid="$nobody" --regid="$nogroup" --clear-groups "$@"
}

# prepare_users_daemon SPECS_MODE: the setting of the tests of other users against alloclabd as
# root: $WORK open to them, the socket $ALLOCLAB_SOCKET, a specs directory $SPECS of that mode,
# a database $DB in a directory only root may enter, a cgroup of the test's own, and a teardown
# that kills the daemon and everything in that cgroup.
prepare_users_daemon() {
    chmod 0755 "$WORK"
    export ALLOCLAB_SOCKET="$WORK/ctl.sock"
    SPECS="$WORK/specs.d"
    mkdir -m "$1" "$SPECS"
    mkdir -m 0700 "$WORK/db"
    DB="$WORK/db/results.db"
    daemon_pid=
    test_scope_start || skip_test "needs a cgroup v2 of its own, to end whatever the daemon leaves"
    trap 'stop_users_daemon' EXIT
}
stop_users_daemon() {
    [[ -n $daemon_pid ]] && kill -9 "$daemon_pid" 2>/dev/null
    [[ -n $daemon_pid ]] && { wait "$daemon_pid" 2>/dev/null || true; }
    test_scope_end # the daemon's runner and its children, should one outlive it
    rm -rf "$WORK"
}

# start_users_daemon [OPTION...]: alloclabd on $DB, $SPECS and $ALLOCLAB_SOCKET (and the options
# given), in the test's cgroup, its log in $WORK/daemon.log; daemon_pid is its PID once its
# socket answers, open to everyone.
start_users_daemon() {
    # Under ASan, freed memory waits in a 256 MiB quarantine: keep it small, so that the RSS the
    # slow-reader check of hardening measures is the daemon's own (no effect on other builds).
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4" test_scope_run "$ALLOCLABD" --db "$DB" \
        --specs-dir "$SPECS" --socket "$ALLOCLAB_SOCKET" "$@" 2>>"$WORK/daemon.log" &
    daemon_pid=$!
    for _ in $(seq 100); do
        "$ALLOCLAB" status >/dev/null 2>&1 && chmod 0666 "$ALLOCLAB_SOCKET" && return 0
        sleep 0.05
    done
    fail "alloclabd did not start: $(cat "$WORK/daemon.log")"
}

# fetch_debian_source PACKAGE DIR: Debian's source of PACKAGE, unpacked (patches applied) into
# DIR, from the archive this machine's apt sources name (their deb lines made deb-src), through
# a private apt state in $WORK: nothing of the system's apt configuration changes. Returns 1
# with FETCH_REASON set when it cannot.
fetch_debian_source() {
    local package=$1 dir=$2 apt="$WORK/apt" f
    FETCH_REASON=
    command -v apt-get >/dev/null && command -v dpkg-source >/dev/null ||
        { FETCH_REASON="apt-get and dpkg-source (dpkg-dev) are needed"; return 1; }
    mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/parts" "$apt/src"
    for f in /etc/apt/sources.list.d/*.sources; do
        [[ -f $f ]] && sed 's/^Types: deb$/Types: deb-src/' "$f" >"$apt/parts/$(basename "$f")"
    done
    [[ -f /etc/apt/sources.list ]] && sed -n 's/^deb /deb-src /p' /etc/apt/sources.list >"$apt/parts/system.list"
    local opts=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$apt/parts"
        -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o APT::Sandbox::User="$(id -un)"
        -o Debug::NoLocking=1)
    apt-get "${opts[@]}" -qq update >"$apt/log" 2>&1 ||
        { FETCH_REASON="apt-get update of the deb-src lists failed: $(tail -1 "$apt/log")"; return 1; }
    (cd "$apt/src" && apt-get "${opts[@]}" -qq source --download-only "$package") >>"$apt/log" 2>&1 ||
        { FETCH_REASON="apt-get source $package failed: $(tail -1 "$apt/log")"; return 1; }
    dpkg-source -x "$apt/src/${package}_"*.dsc "$dir" >>"$apt/log" 2>&1 ||
        { FETCH_REASON="dpkg-source -x failed: $(tail -1 "$apt/log")"; return 1; }
}

# tiny_repo DIR: DIR becomes a git repository of a small allocator (tests/build/tinyalloc.c)
# whose Makefile builds libtiny.so with $(EXTRA) on the compiler's command line; its first
# commit is tagged v1. git_in ARGS: git in it, as a committer (and as root in another user's).
tiny_repo() {
    REPO=$1
    mkdir -p "$REPO"
    cp "$(dirname "${BASH_SOURCE[0]}")/../build/tinyalloc.c" "$REPO/"
    printf 'libtiny.so: tinyalloc.c\n\t$(CC) -O2 -shared -fPIC -o $@ tinyalloc.c $(EXTRA)\n' >"$REPO/Makefile"
    git_in init -q
    git_in add .
    git_in commit -qm v1
    git_in tag v1
}
git_in() { git -C "$REPO" -c safe.directory="$REPO" -c user.name=test -c user.email=test@example.org "$@"; }

# SQL that drops what schemas 27 and later added, for a test that makes a database or bundle of an
# older schema (db.sh, bundle.sh): a new migration's columns are added here, once.
undo_since_schema_27() { # and what later schemas added
    local c
    echo "ALTER TABLE variants DROP COLUMN build; ALTER TABLE runs DROP COLUMN counters;"
    echo "ALTER TABLE runs DROP COLUMN timed_under; DROP TABLE sample_timelines;"
    echo "DROP INDEX IF EXISTS runs_history; ALTER TABLE runs DROP COLUMN machine;"
    echo "ALTER TABLE runs DROP COLUMN slurm_cluster; ALTER TABLE runs DROP COLUMN slurm_partition;"
    echo "DROP TABLE pruned_values; ALTER TABLE runs DROP COLUMN pruned_at;"
    for c in page_faults context_switches cpu_migrations cycles instructions dtlb_load_misses cache_misses \
        counters_scaled; do
        echo "ALTER TABLE samples DROP COLUMN $c;"
    done
}
