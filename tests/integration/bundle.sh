#!/bin/bash
# Bundles: alloclab export RUN... --bundle FILE, then alloclab import FILE... into another
# database conserves every row exactly (compared row by row, local ids replaced by what they
# name); importing again adds nothing; the refusals (unknown schema, a UUID with other content,
# a host name with a new fingerprint, a damaged file, and issue 25's: schema objects, types,
# names, control characters, a FIFO, a CHECK that fails mid-import) exit 4 and write nothing.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/spec.yaml" <<YAML
experiment: bundled
command: ["$WORKLOAD", report, t, "{n}"]
params: {n: ["1", "2"]}
allocators: {glibc: {}, jemalloc: {preload: jemalloc}}
samples: 4
metric: reported:t
YAML
run_alloclab 0 run "$WORK/spec.yaml" --quiet
run_alloclab 0 run "$WORK/spec.yaml" --quiet
# An interrupted run: its committed samples travel too.
sed 's|command: \["'"$WORKLOAD"'", report, t, "{n}"\]|command: [/bin/sh, -c, "sleep 0.05; exec '"$WORKLOAD"' report t {n}"]|' \
    "$WORK/spec.yaml" >"$WORK/slow.yaml"
"$ALLOCLAB" run "$WORK/slow.yaml" --quiet >/dev/null 2>&1 &
pid=$!
for _ in $(seq 200); do
    (( $(q "SELECT count(*) FROM samples WHERE run_id = 3" 2>/dev/null || echo 0) >= 6 )) && break
    sleep 0.05
done
kill -9 $pid
wait $pid 2>/dev/null || true
run_alloclab 0 runs # marks the run of the dead process interrupted
expect_eq "$(q "SELECT status FROM runs WHERE id = 3")" interrupted "the killed run"

# Every row of every table a run owns, with ids replaced by what they name (a run by its UUID,
# a cell or variant by its position, a sample by its step), so two databases compare equal
# exactly when they hold the same runs.
canonical() { # DB
    python3 - "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
one = lambda sql, *a: db.execute(sql, a).fetchall()
uuid = dict(one("SELECT id, uuid FROM runs"))
cell = {i: (uuid[r], p) for i, r, p in one("SELECT id, run_id, position FROM cells")}
variant = {i: (uuid[r], p) for i, r, p in one("SELECT id, run_id, position FROM variants")}
sample = {i: (uuid[r], s) for i, r, s in one("SELECT id, run_id, step FROM samples")}
calibration = {i: (uuid[r], s) for i, r, s in one("SELECT id, run_id, step FROM calibration")}
named = {
    "host_id": {i: n for i, *n in one("SELECT * FROM hosts")},
    "experiment_id": dict(one("SELECT id, name FROM experiments")),
    "spec_id": dict(one("SELECT id, sha256 FROM specs")),
    "allocator_id": {i: tuple(n) for i, *n in one("SELECT * FROM allocators")},
    "run_id": uuid, "cell_id": cell, "variant_id": variant, "sample_id": sample,
}
own = {"runs": uuid, "cells": cell, "variants": variant, "samples": sample, "calibration": calibration}
for table in ["runs", "variants", "cells", "samples", "sample_metrics", "probe_reports", "exclusions",
              "stats", "calibration"]:
    cur = db.execute(f"SELECT * FROM {table}")
    columns = [d[0] for d in cur.description]
    rows = []
    for row in cur:
        out = []
        for c, v in zip(columns, row):
            if c == "id":
                v = own[table][v]
            elif c in named:
                v = named[c][v]
            out.append(repr(v))
        rows.append(f"{table}: " + " ".join(out))
    print("\n".join(sorted(rows)))
PY
}
counts() { # DB: rows of every table
    for t in runs hosts experiments specs allocators variants cells samples sample_metrics probe_reports \
        exclusions stats calibration; do
        printf '%s=%s ' "$t" "$(sqlite3 "$1" "SELECT count(*) FROM $t")"
    done
}

run_alloclab 0 export all --bundle "$WORK/a.bundle"
expect_contains "$OUT" "3 runs" "export all"
expect_eq "$(sqlite3 "$WORK/a.bundle" "SELECT value FROM bundle WHERE key = 'format'")" alloclab-bundle "bundle format"
expect_eq "$(sqlite3 "$WORK/a.bundle" "PRAGMA journal_mode")" delete "a bundle is one file"
[[ ! -e $WORK/a.bundle.partial ]] || fail "the partial file was left behind"

# Into a database that has a run of its own: every row conserved, new local numbers.
B="$WORK/b.db"
run_alloclab 0 run "$WORK/spec.yaml" --quiet --db "$B"
run_alloclab 0 import "$WORK/a.bundle" --db "$B"
expect_contains "$OUT" "imported 3 runs ($(q "SELECT count(*) FROM samples") samples) from 1 file; 0 already here" "import"
expect_eq "$(canonical "$B" | grep -v "$(sqlite3 "$B" "SELECT uuid FROM runs WHERE id = 1")")" "$(canonical "$DB")" \
    "every row of the three runs, exactly"
expect_eq "$(sqlite3 "$B" "SELECT group_concat(id || ':' || status) FROM (SELECT * FROM runs ORDER BY id)")" \
    "1:done,2:done,3:done,4:interrupted" "local numbers after the database's own run"
expect_eq "$(sqlite3 "$B" "PRAGMA foreign_key_check")" "" "references"
run_alloclab 0 show 3 --db "$B" --format csv
imported=$(cut -d, -f2- <<<"$OUT") # all but the run's local number
run_alloclab 0 show 2 --format csv
expect_eq "$imported" "$(cut -d, -f2- <<<"$OUT")" "show prints the imported run as the original"

# Again: nothing added.
before=$(counts "$B")
run_alloclab 0 import "$WORK/a.bundle" --db "$B"
expect_contains "$OUT" "imported 0 runs (0 samples) from 1 file; 3 already here" "re-import"
expect_eq "$(counts "$B")" "$before" "re-import adds no row"

# Refusals: exit 4, the reason, and not one row written (also with a good file before).
refused() { # FILE WHAT NEEDLE
    run_alloclab 4 import "$WORK/fresh.bundle" "$1" --db "$B"
    expect_contains "$ERR" "$3" "$2"
    expect_eq "$(counts "$B")" "$before" "$2: nothing written"
}
run_alloclab 0 run "$WORK/spec.yaml" --quiet
run_alloclab 0 export latest --bundle "$WORK/fresh.bundle"

cp "$WORK/a.bundle" "$WORK/schema.bundle"
sqlite3 "$WORK/schema.bundle" "PRAGMA user_version = 99"
refused "$WORK/schema.bundle" "unknown schema" "with schema 99; this alloclab reads version 1 with schema 18 to 32"
# A bundle of schema 18 (the same tables of runs; 19 and 20 added indexes, 21 a column of jobs, 22 one of
# runs, 23 a column to the samples index, 24 two columns of runs and an index, 25 two of runs) imports.
cp "$WORK/a.bundle" "$WORK/schema18.bundle"
sqlite3 "$WORK/schema18.bundle" "DROP INDEX IF EXISTS runs_running; DROP INDEX IF EXISTS runs_history;
    DROP INDEX samples_run; CREATE INDEX samples_run ON samples (run_id, cell_id, variant_id, phase, status, wall_ns);
    ALTER TABLE jobs DROP COLUMN umask; ALTER TABLE runs DROP COLUMN correction; DROP INDEX runs_import;
    ALTER TABLE runs DROP COLUMN import_sha256; ALTER TABLE runs DROP COLUMN import_cpu;
    ALTER TABLE runs DROP COLUMN metric_defs;
    ALTER TABLE runs DROP COLUMN verify_ignore; ALTER TABLE samples DROP COLUMN other_cpu_ns;
    ALTER TABLE samples DROP COLUMN steal_ns; $(undo_since_schema_27) PRAGMA user_version = 18"
run_alloclab 0 import "$WORK/schema18.bundle" --db "$WORK/fresh18.db"
expect_eq "$(sqlite3 "$WORK/fresh18.db" "SELECT count(*) > 0 FROM runs")" 1 "a schema 18 bundle imported"

cp "$WORK/a.bundle" "$WORK/changed.bundle"
sqlite3 "$WORK/changed.bundle" "UPDATE samples SET wall_ns = wall_ns + 1 WHERE id = (SELECT min(id) FROM samples)"
refused "$WORK/changed.bundle" "a UUID with other content" "with other content (content hash"

cp "$WORK/a.bundle" "$WORK/host.bundle"
# A fresh UUID for each row, in SQL.
NEW_UUID="lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-a'
          || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))"
sqlite3 "$WORK/host.bundle" "UPDATE runs SET uuid = $NEW_UUID,
    host_fingerprint = 'beefbeefbeefbeef', host_facts = json_set(host_facts, '$.machine_id', 'another')"
refused "$WORK/host.bundle" "a host name with a new fingerprint" \
    "machine $(hostname) has host fingerprint"
expect_contains "$ERR" "its machine-id differs: another machine under the same name?" "the reason"

cp "$WORK/a.bundle" "$WORK/damaged.bundle" # a copy cut short
truncate -s $(($(stat -c %s "$WORK/a.bundle") / 2)) "$WORK/damaged.bundle"
refused "$WORK/damaged.bundle" "a damaged file" "is damaged"
echo "not a database" >"$WORK/text.bundle"
refused "$WORK/text.bundle" "not a database" "text.bundle is neither an alloclab bundle nor hyperfine's or pyperf's JSON"
# A refused import makes no database where there was none (it left one with its lock file):
# a file that is not there, one that is not a bundle, JSON that is neither tool's, 11 files.
echo '[]' >"$WORK/array.json"
for refusal in "4|$WORK/missing.bundle|missing.bundle: No such file or directory" \
    "4|$WORK/text.bundle|is neither an alloclab bundle" \
    "3|$WORK/array.json|neither hyperfine's --export-json nor pyperf's JSON" \
    "2|$(printf "$WORK/fresh.bundle %.0s" $(seq 11))|11 files: import takes at most 10"; do
    IFS='|' read -r status args needle <<<"$refusal"
    # shellcheck disable=SC2086 # the files, one word each
    run_alloclab "$status" import $args --db "$WORK/never.db"
    expect_contains "$ERR" "$needle" "a refused import"
    expect_eq "$(ls "$WORK" | grep -c never)" 0 "what a refused import left: $(ls "$WORK" | grep never)"
done
sqlite3 "$WORK/other.db" "CREATE TABLE t (x)"
refused "$WORK/other.db" "not a bundle" "is not an alloclab bundle"

# Issue 25: what a hostile or broken bundle must not get in. Each is refused before a row is
# written, or (a CHECK that only the database can judge) rolled back with everything before it.
hostile() { # NAME SQL: a copy of a.bundle, changed by SQL (CHECK constraints off while changing)
    cp "$WORK/a.bundle" "$WORK/$1.bundle"
    sqlite3 "$WORK/$1.bundle" "PRAGMA ignore_check_constraints = ON; $2"
}
fresh_uuids="UPDATE runs SET uuid = $NEW_UUID;"
# The second run breaks a CHECK constraint: the first is not left behind (it was committed).
hostile check "$fresh_uuids UPDATE runs SET status = 'bogus' WHERE id = (SELECT max(id) FROM runs)"
refused "$WORK/check.bundle" "a run that breaks a CHECK" \
    "cannot import $WORK/check.bundle: run $(sqlite3 "$WORK/check.bundle" "SELECT uuid FROM runs WHERE status = 'bogus'"): CHECK constraint failed"
expect_contains "$ERR" "nothing was imported" "one transaction"
hostile dropped "$fresh_uuids DROP TABLE calibration"
refused "$WORK/dropped.bundle" "a dropped table" "its schema is not that of schema 32"
hostile view "$fresh_uuids ALTER TABLE runs RENAME TO runs_data; CREATE VIEW runs AS SELECT * FROM runs_data"
refused "$WORK/view.bundle" "runs as a view" "its schema is not that of schema 32"
hostile extra "$fresh_uuids CREATE TABLE extra (x)"
refused "$WORK/extra.bundle" "an extra table" "it has 'table extra on extra: CREATE TABLE extra (x)'"
hostile trigger "$fresh_uuids CREATE TRIGGER t AFTER INSERT ON hosts BEGIN DELETE FROM runs; END"
refused "$WORK/trigger.bundle" "a trigger" "it has 'trigger t on hosts"
hostile unique "DROP INDEX runs_uuid; UPDATE runs SET uuid = (SELECT min(uuid) FROM runs)"
refused "$WORK/unique.bundle" "a duplicate UUID without its index" "its schema is not that of schema 32"
hostile wall "$fresh_uuids UPDATE samples SET wall_ns = 'abc' WHERE id = (SELECT max(id) FROM samples)"
refused "$WORK/wall.bundle" "wall_ns = 'abc'" "samples.wall_ns holds a value of a type its column does not take: 'abc'"
hostile name "$fresh_uuids UPDATE experiments SET name = 'no spec has this name!'"
refused "$WORK/name.bundle" "an experiment name no spec could carry" \
    "experiments.name holds a name that breaks the rule of names"
hostile escape "$fresh_uuids UPDATE hosts SET hostname = 'evil' || char(27) || '[2J'"
refused "$WORK/escape.bundle" "a host name with an escape sequence" \
    "hosts.hostname holds text with control characters, not UTF-8, or over 4096 bytes"
[[ $ERR != *$'\e'* ]] || fail "the refusal printed the escape sequence"
hostile label "$fresh_uuids UPDATE runs SET label = 'a' || char(10) || 'forged line'"
refused "$WORK/label.bundle" "a label with a newline" "runs.label holds text with control characters"
expect_contains "$ERR" "'a\x0aforged line'" "the label shown escaped, on the refusal's line"
# A spec whose text is not what its hash says: the text of a run here would be replaced by the
# attacker's, and a resumed run would run the attacker's command (found by a reviewer).
hostile spec "$fresh_uuids UPDATE specs SET yaml = yaml || '# and something else'"
refused "$WORK/spec.bundle" "a spec whose text is not its hash" \
    "specs.sha256 holds a hash that is not the sha256 of its spec"
hostile report "$fresh_uuids UPDATE probe_reports SET report = 'garbage'"
refused "$WORK/report.bundle" "a probe report that is not JSON" "probe_reports.report holds what is not JSON, or is over 8 MiB: 'garbage'"
hostile params "$fresh_uuids UPDATE cells SET params = '{not json'"
refused "$WORK/params.bundle" "cell parameters that are not JSON" "cells.params holds what is not JSON"
# A run's JSON settings are checked as JSON because its field table says they are (db/run-field.c).
hostile facts "$fresh_uuids UPDATE runs SET host_facts = '{not json'"
refused "$WORK/facts.bundle" "host facts that are not JSON" "runs.host_facts holds what is not JSON"
hostile version "$fresh_uuids UPDATE allocators SET version = 'v' || char(27) || '[2J' || char(10) || 'FORGED'"
refused "$WORK/version.bundle" "an allocator version with an escape and a newline" \
    "allocators.version holds text with control characters"
hostile uuid "UPDATE runs SET uuid = 'not-a-uuid' WHERE id = 1"
refused "$WORK/uuid.bundle" "a UUID that is none" "runs.uuid holds what is not a UUID: 'not-a-uuid'"
hostile negative "$fresh_uuids UPDATE samples SET wall_ns = -5 WHERE id = (SELECT max(id) FROM samples)"
refused "$WORK/negative.bundle" "a negative time" "samples.wall_ns holds what is not a finite number of 0 or more: '-5'"
# Values no run has: an infinite median (show printed 'inf'), a negative sample count, a label
# of 300 bytes, a path of 5000 (shown whole in tables), a text of 2 MiB where a program's stderr
# goes; a blob is named by its size (it was shown as '').
hostile infinite "$fresh_uuids UPDATE stats SET median = 9e999 WHERE rowid = (SELECT min(rowid) FROM stats)"
refused "$WORK/infinite.bundle" "an infinite median" "stats.median holds what is not a finite number: 'Inf'"
hostile count "$fresh_uuids UPDATE runs SET samples = -3"
refused "$WORK/count.bundle" "a negative sample count" "runs.samples holds what is not a finite number of 0 or more: '-3'"
hostile alpha "$fresh_uuids UPDATE runs SET alpha = 7"
refused "$WORK/alpha.bundle" "an alpha of 7" "runs.alpha holds what is not a fraction between 0 and 1: '7.0'"
hostile long_label "$fresh_uuids UPDATE runs SET label = printf('%.300c', 'x')"
refused "$WORK/long_label.bundle" "a label of 300 bytes" "runs.label holds text with control characters, not UTF-8, or over 200 bytes: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'..."
hostile long_path "$fresh_uuids UPDATE runs SET spec_path = '/' || printf('%.5000c', 'p')"
refused "$WORK/long_path.bundle" "a spec path of 5000 bytes" "runs.spec_path holds text with control characters, not UTF-8, or over 4096 bytes"
hostile long_stderr "$fresh_uuids UPDATE samples SET stderr_excerpt = printf('%.2097152c', 'e') WHERE id = (SELECT max(id) FROM samples)"
refused "$WORK/long_stderr.bundle" "a stderr excerpt of 2 MiB" "samples.stderr_excerpt holds text over 1 MiB"
hostile blob "$fresh_uuids UPDATE hosts SET kernel = zeroblob(12)"
refused "$WORK/blob.bundle" "a blob for a kernel" "hosts.kernel holds a value of a type its column does not take: (a blob of 12 bytes)"
hostile dangling "$fresh_uuids PRAGMA foreign_keys = OFF; UPDATE samples SET cell_id = 999999 WHERE id = (SELECT max(id) FROM samples)"
refused "$WORK/dangling.bundle" "a reference to nothing" "samples row"
hostile nofingerprint "$fresh_uuids UPDATE runs SET host_fingerprint = NULL"
refused "$WORK/nofingerprint.bundle" "a run of a known host without a fingerprint" "has no host fingerprint, and $(hostname) is known here"
# A run whose counter of failed samples says fewer than its rows: show counts the rows (it said
# "Failed samples (0):" above a failed sample).
hostile miscounted "$fresh_uuids UPDATE samples SET status = 'exit', exit_code = 3 WHERE id = (SELECT max(id) FROM samples WHERE run_id = 1); UPDATE runs SET n_failures = 0"
run_alloclab 0 import "$WORK/miscounted.bundle" --db "$WORK/miscounted.db"
run_alloclab 0 show "$(sqlite3 "$WORK/miscounted.db" "SELECT run_id FROM samples WHERE status = 'exit' AND exit_code = 3")" --db "$WORK/miscounted.db"
expect_contains "$OUT" "Failed samples (1):" "failed samples counted from the rows"

# A FIFO is refused at once, without blocking (import held the database lock for ever).
mkfifo "$WORK/fifo.bundle"
start=$SECONDS
rc=0
timeout 20 "$ALLOCLAB" import "$WORK/fifo.bundle" --db "$B" >/dev/null 2>"$WORK/fifo.err" || rc=$?
expect_eq "$rc" 4 "import of a FIFO"
expect_contains "$(cat "$WORK/fifo.err")" "fifo.bundle is not a regular file" "the reason"
# A database in WAL mode may keep committed rows in its -wal file, which import would not read.
cp "$WORK/a.bundle" "$WORK/wal.bundle"
sqlite3 "$WORK/wal.bundle" "PRAGMA journal_mode = WAL" >/dev/null
refused "$WORK/wal.bundle" "a database in WAL mode" "wal.bundle is a database in WAL mode"
# What is checked is what is imported: SQLite opens files by name, so import checks and attaches
# a private copy and never lets SQLite open the file named, which could be swapped in between
# (a FIFO swapped in hung the import; another file skipped the checks). The copy goes away.
if command -v strace >/dev/null; then
    mkdir "$WORK/tmp"
    cp "$WORK/a.bundle" "$WORK/swap.bundle"
    # (LeakSanitizer cannot work under ptrace: off for this one, in the sanitized pass.)
    TMPDIR=$WORK/tmp ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        strace -f -e trace=openat -o "$WORK/import.trace" "$ALLOCLAB" import "$WORK/swap.bundle" --db "$WORK/swap.db" >/dev/null || fail "import under strace"
    ! grep "swap.bundle\", O_RDONLY|O_NOFOLLOW" "$WORK/import.trace" ||
        fail "SQLite opened the file named, not the copy checked"
    grep -q "alloclab-import-.*/bundle\", O_RDONLY|O_NOFOLLOW" "$WORK/import.trace" ||
        fail "SQLite did not open the private copy: $(grep -v ENOENT "$WORK/import.trace")"
    TMPDIR=$WORK/tmp "$ALLOCLAB" import "$WORK/wal.bundle" --db "$WORK/swap.db" 2>/dev/null &&
        fail "wal.bundle imported"
    expect_eq "$(ls -A "$WORK/tmp")" "" "what import leaves in TMPDIR"
    # A signal that ends import or export takes what they made with it: the private copy was
    # left in TMPDIR, and FILE.partial with its journal beside the bundle. (strace sends the
    # signal at the system call named, after the files are made.)
    TMPDIR=$WORK/tmp ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        strace -f -o /dev/null -e trace=sendfile -e inject=sendfile:signal=HUP \
        "$ALLOCLAB" import "$WORK/swap.bundle" --db "$WORK/hup.db" >/dev/null 2>&1 && fail "import went on after SIGHUP"
    expect_eq "$(ls -A "$WORK/tmp")" "" "what an import ended by SIGHUP leaves in TMPDIR"
    mkdir "$WORK/ended"
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        strace -f -o /dev/null -e trace=fsync -e inject=fsync:signal=TERM \
        "$ALLOCLAB" export all --db "$WORK/swap.db" --bundle "$WORK/ended/runs.bundle" >/dev/null 2>&1 &&
        fail "export went on after SIGTERM"
    expect_eq "$(ls -A "$WORK/ended")" "" "what an export ended by SIGTERM leaves"
else
    skip_part "strace is not installed: which file SQLite opens is not watched, nor what a signal leaves"
fi
# A run here already, changed in any way its sums did not see: each is other content.
for edit in "UPDATE samples SET wall_ns = CASE id WHEN (SELECT min(id) FROM samples WHERE run_id = 1 AND phase = 'sample')
                 THEN (SELECT wall_ns FROM samples WHERE id = (SELECT min(id) + 1 FROM samples WHERE run_id = 1 AND phase = 'sample'))
                 ELSE (SELECT wall_ns FROM samples WHERE id = (SELECT min(id) FROM samples WHERE run_id = 1 AND phase = 'sample')) END
             WHERE id IN (SELECT min(id) FROM samples WHERE run_id = 1 AND phase = 'sample' UNION
                          SELECT min(id) + 1 FROM samples WHERE run_id = 1 AND phase = 'sample')" \
    "UPDATE samples SET status = 'crash' WHERE id = (SELECT max(id) FROM samples WHERE run_id = 1 AND status = 'ok')" \
    "UPDATE sample_metrics SET value = value + 1 WHERE sample_id = (SELECT max(sample_id) FROM sample_metrics)" \
    "UPDATE stats SET median = median * 2 + 1 WHERE rowid = (SELECT min(rowid) FROM stats)" \
    "UPDATE runs SET label = 'relabelled' WHERE id = 1"; do
    hostile edited "$edit"
    refused "$WORK/edited.bundle" "a run here already, edited ($edit)" "with other content (content hash"
done

# The same machine, changed: accepted when said so.
run_alloclab 0 import "$WORK/host.bundle" --db "$B" --accept-host-change
expect_contains "$OUT" "imported 3 runs" "--accept-host-change"
expect_eq "$(sqlite3 "$B" "PRAGMA integrity_check")" ok "integrity"

# A run that a bundle says is running (its process was alive where it came from) arrives as
# what recovery would make of it here.
cp "$WORK/a.bundle" "$WORK/running.bundle"
sqlite3 "$WORK/running.bundle" "PRAGMA foreign_keys = ON; DELETE FROM runs WHERE id <> 1; UPDATE runs SET status = 'running', uuid = '00000000-0000-4000-8000-00000000beef'"
run_alloclab 0 import "$WORK/running.bundle" --db "$B"
expect_eq "$(sqlite3 "$B" "SELECT status FROM runs WHERE uuid = '00000000-0000-4000-8000-00000000beef'")" interrupted "a running run arrives interrupted"

# What alloclab records it imports: a spec file whose name holds a newline, a parameter value
# with an escape sequence (both refused by import's rules when they were stored as they were).
odd=$'odd\nname.yaml'
printf 'experiment: odd\ncommand: [/bin/true, "{p}"]\nparams: {p: ["a\\e[2Jb"]}\nallocators: {glibc: {}}\nsamples: 1\nwarmup: 0\nprobe: never\n' \
    >"$WORK/$odd"
run_alloclab 0 run "$WORK/$odd" --quiet --db "$WORK/odd.db"
run_alloclab 0 export latest --bundle "$WORK/odd.bundle" --db "$WORK/odd.db"
run_alloclab 0 import "$WORK/odd.bundle" --db "$WORK/odd-imported.db"
expect_contains "$OUT" "imported 1 run" "a run of an odd spec path and an escape in a parameter"
expect_eq "$(sqlite3 "$WORK/odd-imported.db" "SELECT label FROM cells")" 'p=a\x1b[2Jb' "the cell, as shown"

# Export refuses what it cannot do.
run_alloclab 2 export 99 --bundle "$WORK/none.bundle"
run_alloclab 2 export --bundle "$WORK/none.bundle"
# "all" when every run is still running: no bundle of no run, said so (it wrote "0 runs", exit 0).
sqlite3 "$DB" ".backup '$WORK/running.db'"
sqlite3 "$WORK/running.db" "UPDATE runs SET status = 'running'"
exec {lock}>"$WORK/running.db.lock"
flock "$lock" # as a process that measures into it: the runs are live
run_alloclab 2 export all --bundle "$WORK/none.bundle" --db "$WORK/running.db"
expect_contains "$ERR" "no run to export: none has finished or was interrupted" "export all of running runs"
exec {lock}>&-
[[ ! -e $WORK/none.bundle ]] || fail "a bundle was written for no run"
# With the lock free, their processes are gone: export, by a user who may write the database,
# records them interrupted, as runs and show do, and exports them so (it called them still
# running for ever). A reader that may not write: storage.sh.
run_alloclab 0 export all --bundle "$WORK/dead.bundle" --db "$WORK/running.db"
expect_eq "$(sqlite3 "$WORK/dead.bundle" "SELECT DISTINCT status FROM runs")" interrupted "dead runs, exported"
