#!/bin/bash
# Storage failures (issue 12, item 4), on a real 3 MiB tmpfs in a private mount namespace: a job
# whose samples no longer fit fails with the reason, keeps what was committed, and leaves
# alloclabd responsive, idle (no busy loop) and stoppable; alloclab run on a full or read-only
# database says so and exits 4. Needs root for the mount; skipped with the reason otherwise.
if [[ -z ${ALLOCLAB_STORAGE_NS:-} ]]; then
    if [[ $(id -u) != 0 ]] || ! command -v unshare >/dev/null; then
        # (lib.sh is not sourced yet: this process is replaced below.)
        echo "SKIP: needs root and unshare (util-linux) to mount a small tmpfs"
        [[ -n ${ALLOCLAB_SKIP_LOG:-} ]] && echo "storage: needs root and unshare (util-linux) to mount a small tmpfs" >>"$ALLOCLAB_SKIP_LOG"
        exit 77
    fi
    # The mount lives and dies with this namespace: nothing is left mounted.
    ALLOCLAB_STORAGE_NS=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
: "${ALLOCLABD:?ALLOCLABD must point to alloclabd}"

mkdir "$WORK/small"
mount -t tmpfs -o size=3m tmpfs "$WORK/small"
DB="$WORK/small/results.db"
export ALLOCLAB_DB="$DB" ALLOCLAB_SOCKET="$WORK/ctl.sock"
daemon_pid=
cleanup() {
    [[ -n $daemon_pid ]] && kill -9 "$daemon_pid" 2>/dev/null
    umount "$WORK/small" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT

cat >"$WORK/fill.yaml" <<YAML
experiment: fill
command: [/bin/echo, hello]
allocators: {glibc: {}}
samples: 5000
warmup: 0
probe: never
quiet: off
YAML
"$ALLOCLABD" --db "$DB" --socket "$ALLOCLAB_SOCKET" --specs-dir "$WORK/none" 2>"$WORK/daemon.log" &
daemon_pid=$!
for _ in $(seq 100); do "$ALLOCLAB" status >/dev/null 2>&1 && break; sleep 0.05; done
run_alloclab 0 submit "$WORK/fill.yaml"
job=$(grep -o '[0-9]*' <<<"$OUT" | head -1)
status=
for _ in $(seq 1200); do
    "$ALLOCLAB" queue >"$WORK/queue" 2>&1 || fail "queue unanswered while the disk is full: $(cat "$WORK/queue")"
    status=$(awk -v j="$job" '$1 == j {print $2}' "$WORK/queue")
    [[ $status == running || $status == queued ]] || break
    sleep 0.1
done
expect_eq "$status" failed "the job whose samples no longer fit"
expect_eq "$(q "SELECT message FROM jobs WHERE id = $job")" "cannot record: database or disk is full" "the reason"
# The daemon sleeps: less than 0.3 s of CPU over 1.5 s (it spun at 100% on 63f6da7).
cpu() { awk '{print $14 + $15}' "/proc/$daemon_pid/stat"; }
before=$(cpu)
sleep 1.5
used=$(( $(cpu) - before ))
(( used < 30 )) || fail "alloclabd used $used ticks of CPU while idle after a storage failure"
run_alloclab 0 status
expect_contains "$OUT" "idle" "the daemon is idle again"
# submit --wait of a job that fails for want of space exits 4, as alloclab run does (it exited 0).
run_alloclab 4 submit --wait "$WORK/fill.yaml"
expect_contains "$ERR" "failed: " "submit --wait says the job failed"
pgrep -f "alloclabd.*$WORK" | grep -qv "^$daemon_pid$" && fail "a runner process is left: $(pgrep -af "alloclabd.*$WORK")"
kill -TERM "$daemon_pid"
for _ in $(seq 100); do kill -0 "$daemon_pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$daemon_pid" 2>/dev/null && fail "alloclabd did not stop on SIGTERM"
wait "$daemon_pid" || true
daemon_pid=
committed=$(q "SELECT count(*) FROM samples")
(( committed > 0 )) || fail "no sample was kept"
expect_eq "$(q "PRAGMA integrity_check")" ok "integrity after the storage failure"
expect_contains "$(q "SELECT status FROM runs")" failed "the run is failed"
# Its header says how many samples it took of those planned (it said "median of 5000 samples").
run_alloclab 0 show
expect_contains "$OUT" " of 5000 planned samples (the run ended early; 0 warmup)" "the header of a run that ended early"

# alloclab run on the full disk: a clear error, exit 4, what was committed kept.
run_alloclab 4 run "$WORK/fill.yaml" --quiet
expect_contains "$ERR" "database or disk is full" "alloclab run on a full disk"
[[ $ERR != *"not an error"* ]] || fail "alloclab run said 'not an error': $ERR"
expect_eq "$(q "PRAGMA integrity_check")" ok "integrity after alloclab run on a full disk"

# Readers read a full disk's database (issue 25: opening for reading wrote, and failed).
run_alloclab 0 runs
expect_contains "$OUT" "fill" "runs on a full disk"
run_alloclab 0 show
expect_contains "$OUT" "fill run" "show on a full disk"

# alloclab run that fills the disk itself (issue 25): the run is closed as failed, from the
# space kept in reserve, and the disk is named full; it was left running with "cannot close the
# run". What was committed stays.
umount "$WORK/small"
mount -t tmpfs -o size=3m tmpfs "$WORK/small"
run_alloclab 4 run "$WORK/fill.yaml" --quiet
expect_contains "$ERR" "aborted: database or disk is full" "alloclab run that fills the disk"
expect_eq "$(q "SELECT status FROM runs")" failed "the run that filled the disk is closed, failed"
expect_contains "$(q "SELECT message FROM runs")" "database or disk is full" "and says why"
(( $(q "SELECT count(*) FROM samples") > 0 )) || fail "no sample of the run that filled the disk was kept"
[[ ! -e $DB-reserve ]] || fail "the reserve was left behind"
expect_eq "$(q "PRAGMA integrity_check")" ok "integrity after a run filled the disk"
# With less than the reserve free a run does not start: it could not be closed (a reviewer saw
# one left running with 250 KB free).
runs_before=$(q "SELECT count(*) FROM runs")
free=$(df -k --output=avail "$WORK/small" | tail -1)
dd if=/dev/zero of="$WORK/small/filler" bs=1k count=$((free - 100)) 2>/dev/null || true
run_alloclab 4 run "$WORK/fill.yaml" --quiet
expect_contains "$ERR" "has less than 256 KiB free, which a run needs kept to close itself" "a run on a nearly full disk"
[[ ! -e $DB-reserve ]] || fail "a reserve was left behind by the run that did not start"
# Its readers read it, the disk full to the last byte.
dd if=/dev/zero of="$WORK/small/filler2" bs=1k count=100000 2>/dev/null || true
run_alloclab 0 runs
expect_eq "$(grep -c fill <<<"$OUT")" "$runs_before" "runs on a disk full to the last byte, and no run more"
run_alloclab 0 show
expect_contains "$OUT" "fill run" "show on a disk full to the last byte"
# A writer names the cause (SQLite said "disk I/O error"), and a new database that could not be
# made is not left behind as an empty file.
run_alloclab 4 run "$WORK/fill.yaml" --quiet
expect_contains "$ERR" "(the disk is full)" "a run on a disk full to the last byte"
run_alloclab 4 run "$WORK/fill.yaml" --quiet --db "$WORK/small/new.db"
expect_contains "$ERR" "disk is full" "a new database on a full disk"
[[ $ERR != *"no transaction is active"* ]] || fail "SQLite's rollback, not the reason: $ERR"
expect_eq "$(ls "$WORK/small" | grep new)" "" "what a new database on a full disk left"
# A report that does not fit says why and leaves no truncated page.
run_alloclab 4 report -o "$WORK/small/report.html"
expect_contains "$ERR" "cannot write $WORK/small/report.html: No space left on device" "a report on a full disk"
expect_eq "$(ls "$WORK/small" | grep report)" "" "what a report on a full disk left"
# So for a bundle, with 100 KB free: export left the -wal and -shm files of the bundle it
# could not write.
rm "$WORK/small/filler2"
run_alloclab 4 export 1 --bundle "$WORK/small/runs.bundle"
expect_contains "$ERR" "disk is full" "a bundle on a full disk"
expect_eq "$(ls "$WORK/small" | grep bundle)" "" "what a bundle on a full disk left"
# A new database whose schema does not fit: SQLite's reason, not what the rollback said after it
# ("cannot rollback - no transaction is active").
run_alloclab 4 run "$WORK/fill.yaml" --quiet --db "$WORK/small/new.db"
expect_contains "$ERR" "cannot migrate $WORK/small/new.db from schema" "a schema that does not fit"
[[ $ERR != *"no transaction is active"* ]] || fail "SQLite's rollback, not the reason: $ERR"
expect_eq "$(ls "$WORK/small" | grep new)" "" "what a new database that did not fit left"
dd if=/dev/zero of="$WORK/small/filler2" bs=1k count=100000 2>/dev/null || true

# A read-only database: a clear error, exit 4.
umount "$WORK/small"
mount -t tmpfs -o size=8m tmpfs "$WORK/small"
sed -i 's/^samples: 5000/samples: 2/' "$WORK/fill.yaml"
run_alloclab 0 run "$WORK/fill.yaml" --quiet
# ... with a run left running by a process that is gone (the measurement lock is free).
run_alloclab 0 run "$WORK/fill.yaml" --quiet
q "UPDATE runs SET status = 'running' WHERE id = (SELECT max(id) FROM runs)"
mount -o remount,ro "$WORK/small"
run_alloclab 4 run "$WORK/fill.yaml" --quiet
[[ $ERR != *"not an error"* ]] || fail "a read-only database: 'not an error': $ERR"
expect_contains "$ERR" "read-only" "a read-only database is named as such"
# ... which its readers read all the same.
run_alloclab 0 runs
expect_contains "$OUT" "fill" "runs on a read-only file system"
run_alloclab 0 show
expect_contains "$OUT" "fill run" "show on a read-only file system"
# A reader that may not write shows the dead run interrupted, as a writer would record it (it
# showed it running for ever), and export says why it cannot take it yet.
expect_contains "$OUT" ": interrupted, " "a dead run, as a reader sees it"
run_alloclab 2 export latest --bundle "$WORK/dead.bundle"
expect_contains "$ERR" "is recorded as running, but its process is gone" "export of a dead run by a reader"
# ... and export from (it said "no such database: source": the bundle's connection attached
# the database for writing).
run_alloclab 0 export 1 --bundle "$WORK/ro.bundle"
expect_eq "$(sqlite3 "$WORK/ro.bundle" "SELECT count(*) FROM runs")" 1 "the run exported from a read-only file system"
# Changes left in a WAL (a writer killed), no -shm, on a file system the reader cannot write: SQLite
# said "unable to open database file"; it says why, and what to do.
mount -o remount,rw "$WORK/small"
python3 - "$DB" <<'PY'
import os, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("PRAGMA wal_autocheckpoint = 0")
db.execute("UPDATE runs SET label = 'in the WAL'")
db.commit()
os._exit(0)  # as if killed: the WAL keeps the change
PY
rm -f "$DB-shm"
[[ -s $DB-wal ]] || fail "no WAL with changes to read"
mount -o remount,ro "$WORK/small"
run_alloclab 4 runs
expect_contains "$ERR" "its latest changes are in $DB-wal, and SQLite must make $DB-shm beside it to read them" "a WAL no reader here can read"
expect_contains "$ERR" "copy $DB and $DB-wal together into a directory of yours" "what to do about it"
