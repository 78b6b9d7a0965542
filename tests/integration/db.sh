#!/bin/bash
# What a run leaves in the database: the verbatim spec with its digest, host, allocators,
# variants, cells, every sample of every phase, per-cell statistics; and `alloclab show`
# reprints exactly what `alloclab run` printed, in every format.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/spec.yaml" <<YAML
experiment: store
description: database contents
command: ["$WORKLOAD", which]
params: {a: [x, y], b: [1, 2]}
env: {COMMON: "{a}{b}"}
allocators:
  glibc: {}
  jemalloc: {preload: jemalloc, env: {MALLOC_CONF: "narenas:2"}}
samples: 3
warmup: 1
order: randomized
seed: 7
YAML

ticks() { # now, in clock ticks since boot: the unit of /proc/PID/stat's start time
    awk -v hz="$(getconf CLK_TCK)" '{ printf "%d\n", $1 * hz }' /proc/uptime
}
before=$(ticks)
SLURM_JOB_ID=4242 SLURM_ARRAY_TASK_ID=3 SLURMD_NODENAME=node7 run_alloclab 0 run "$WORK/spec.yaml" --quiet
run_output=$OUT
after=$(ticks)
# The run's process: its pid and its start time (it was always 0: field 21 of /proc/PID/stat).
pid_start=$(q "SELECT pid_start FROM runs")
(( before - 1 <= pid_start && pid_start <= after + 1 )) ||
    fail "pid_start $pid_start is not within the run's life, $before to $after ticks since boot"

expect_eq "$(q "PRAGMA integrity_check")" ok "integrity"
expect_eq "$(q "PRAGMA journal_mode")" wal "journal mode"
expect_eq "$(q "PRAGMA user_version")" 32 "schema version"
# Every writable open looks for this host's runs left running: from an index of the running
# runs, not by reading the whole runs table (6-7 ms of every show at 1,000 runs).
expect_contains "$(q "EXPLAIN QUERY PLAN SELECT runs.id, runs.pid, runs.pid_start FROM runs
                      JOIN hosts ON hosts.id = runs.host_id WHERE runs.status = 'running' AND hosts.hostname = 'x'")" \
    "USING INDEX runs_running" "the recovery's query plan"
# history reads an experiment's runs from the runs_history index alone, backwards from the one
# that started last, without reading the runs' rows or sorting them.
run_alloclab 0 history store --db "$DB" --format json
plan=$(q "EXPLAIN QUERY PLAN SELECT r.id, r.started_at, h.hostname, r.metric, r.min_effect, r.alpha, r.seed,
          r.host_fingerprint, r.label, r.commit_id, r.experiment_id, coalesce(r.machine, h.hostname)
          FROM runs r INDEXED BY runs_history
          CROSS JOIN hosts h WHERE r.experiment_id = (SELECT id FROM experiments WHERE name = 'store')
          AND h.id = r.host_id AND r.status IN ('done', 'interrupted')
          AND (0 = 0 OR (r.started_at, r.id) <= (SELECT started_at, id FROM runs WHERE id = 0))
          ORDER BY r.started_at DESC, r.id DESC LIMIT 20")
expect_contains "$plan" "USING COVERING INDEX runs_history" "history's runs from the index alone"
[[ $plan != *"TEMP B-TREE"* ]] || fail "history sorts the runs it reads: $plan"
[[ $(q "SELECT uuid FROM runs") =~ ^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$ ]] ||
    fail "the run's UUID: $(q "SELECT uuid FROM runs")"
expect_eq "$(q "SELECT slurm_job_id, slurm_array_task_id, slurm_node FROM runs")" "4242|3|node7" "Slurm job and node"
expect_eq "$(q "SELECT e.name, r.status, r.order_mode, r.seed, r.samples, r.warmup, r.metric, r.n_runs, r.n_failures
                FROM runs r JOIN experiments e ON e.id = r.experiment_id")" \
    "store|done|randomized|7|3|1|wall|40|0" "run row"
expect_eq "$(q "SELECT sha256 FROM specs")" "$(sha256sum "$WORK/spec.yaml" | cut -d' ' -f1)" "spec digest"
expect_eq "$(q "SELECT yaml FROM specs")" "$(cat "$WORK/spec.yaml")" "verbatim spec"
expect_eq "$(q "SELECT count(*) FROM hosts WHERE hostname = '$(hostname)' AND cpus = $(nproc)")" 1 "host row"
expect_eq "$(q "SELECT group_concat(label, ';') FROM (SELECT label FROM cells ORDER BY position)")" \
    "a=x b=1;a=x b=2;a=y b=1;a=y b=2" "cells"
expect_eq "$(q "SELECT params FROM cells WHERE position = 2")" '{"a":"y","b":"1"}' "cell parameters"
expect_eq "$(q "SELECT name, env, is_baseline, is_reference FROM variants ORDER BY position")" \
    'glibc|{"COMMON":"{a}{b}"}|1|1
jemalloc|{"COMMON":"{a}{b}","MALLOC_CONF":"narenas:2"}|0|0' "variants"
expect_eq "$(q "SELECT phase, count(*) FROM samples GROUP BY phase ORDER BY phase")" \
    "sample|24
smoke|8
warmup|8" "samples per phase"
expect_eq "$(q "SELECT count(*) FROM samples WHERE wall_ns > 0 AND maxrss_kib > 0 AND output_hash IS NOT NULL AND length(output_hash) = 32")" \
    40 "measured samples"
expect_eq "$(q "SELECT count(DISTINCT output_hash) FROM samples")" 1 "one output for all"
expect_eq "$(q "SELECT count(*) FROM stats WHERE metric IN ('wall', 'user', 'sys', 'maxrss') AND n = 3 AND min <= median AND median <= max")" \
    32 "statistics: 4 cells x 2 variants x 4 metrics"
# The stored median is the median of the stored samples.
expect_eq "$(q "SELECT abs(s.median * 1e9 - (SELECT wall_ns FROM samples x WHERE x.cell_id = s.cell_id AND x.variant_id = s.variant_id AND x.phase = 'sample' ORDER BY wall_ns LIMIT 1 OFFSET 1)) < 1
                FROM stats s WHERE s.metric = 'wall'" | sort -u)" 1 "wall median"

run_alloclab 0 show 1
expect_eq "$OUT" "$run_output" "show reprints the run"
run_alloclab 0 show latest --format json
python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["experiment"]=="store" and len(d["cells"])==4 and d["cells"][0]["results"]["jemalloc"]["n"]==3, d' <<<"$OUT" \
    || fail "json output"
run_alloclab 0 show 1 --format csv
expect_eq "$(wc -l <<<"$OUT")" 9 "csv rows (header + 4 cells x 2 variants)"
expect_contains "$OUT" "run_id,experiment,cell,variant,allocator,metric,n,median" "csv header"
run_alloclab 0 show 1 --format markdown
expect_contains "$OUT" "| cell | glibc (baseline) | jemalloc |" "markdown header"
run_alloclab 0 runs
expect_contains "$OUT" "store" "runs lists the experiment"
run_alloclab 2 show nope
run_alloclab 2 show 99 # a run the command line names that is not there: usage, as compare 1 99

# A reader that holds a snapshot while alloclabd writes keeps SQLite from resetting the WAL; once
# the reader is gone, the end of the next run truncates the WAL instead of leaving it at its
# high-water size for as long as the daemon runs (it stayed there on 63f6da7).
: "${ALLOCLABD:?ALLOCLABD must point to alloclabd}"
export ALLOCLAB_SOCKET="$WORK/ctl.sock"
"$ALLOCLABD" --db "$DB" --specs-dir "$WORK/none" 2>"$WORK/daemon.log" &
daemon=$!
reader=
trap 'kill -9 $daemon $reader 2>/dev/null || true; rm -rf "$WORK"' EXIT # also on a failure midway
for _ in $(seq 100); do "$ALLOCLAB" status >/dev/null 2>&1 && break; sleep 0.05; done
cat >"$WORK/many.yaml" <<YAML
experiment: many
command: [/bin/true]
allocators: {glibc: {}}
samples: 600
warmup: 0
probe: never
quiet: off
YAML
python3 - "$DB" "$WORK/reader.ready" "$WORK/reader.stop" <<'PY' &
import os, sqlite3, sys, time
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("BEGIN")
con.execute("SELECT count(*) FROM samples").fetchall()
open(sys.argv[2], "w").close()
while not os.path.exists(sys.argv[3]):
    time.sleep(0.05)
con.execute("COMMIT")
PY
reader=$!
for _ in $(seq 100); do [[ -e $WORK/reader.ready ]] && break; sleep 0.05; done
run_alloclab 0 submit --wait "$WORK/many.yaml"
grown=$(stat -c %s "$DB-wal")
(( grown > 4 * 1024 * 1024 )) || fail "the WAL did not grow past the auto-checkpoint under a reader ($grown bytes): the test proves nothing"
touch "$WORK/reader.stop"
wait "$reader"
sed -i 's/^samples: 600/samples: 1/' "$WORK/many.yaml"
run_alloclab 0 submit --wait "$WORK/many.yaml"
after=$(stat -c %s "$DB-wal")
(( after < 256 * 1024 )) || fail "the daemon's WAL is $after bytes after the reader left and a run ended (it was $grown)"
kill -TERM "$daemon"
wait "$daemon" || true

# A database of schema 15 gains a UUID for each of its runs, all different, on its first open.
q "DROP INDEX runs_history; DROP INDEX runs_uuid; ALTER TABLE runs DROP COLUMN uuid; ALTER TABLE runs DROP COLUMN slurm_job_id;
   ALTER TABLE runs DROP COLUMN slurm_array_task_id; ALTER TABLE runs DROP COLUMN slurm_node;
   ALTER TABLE runs DROP COLUMN label; ALTER TABLE runs DROP COLUMN commit_id;
   ALTER TABLE runs DROP COLUMN samples_min; DROP INDEX runs_running; ALTER TABLE jobs DROP COLUMN umask;
   ALTER TABLE runs DROP COLUMN correction; DROP INDEX runs_import; ALTER TABLE runs DROP COLUMN import_sha256;
   ALTER TABLE runs DROP COLUMN import_cpu; ALTER TABLE runs DROP COLUMN metric_defs; ALTER TABLE runs DROP COLUMN verify_ignore;
   ALTER TABLE samples DROP COLUMN other_cpu_ns; ALTER TABLE samples DROP COLUMN steal_ns;
   $(undo_since_schema_27) PRAGMA user_version = 15"
runs=$(q "SELECT count(*) FROM runs")
run_alloclab 0 runs
expect_eq "$(q "PRAGMA user_version")" 32 "migrated to schema 32"
expect_eq "$(q "SELECT count(DISTINCT uuid) FROM runs WHERE length(uuid) = 36")" "$runs" "a UUID for every old run"

# A migration that fails says which and why (it said "not an error": the ROLLBACK had cleared
# SQLite's message), and changes nothing.
q "PRAGMA user_version = 16"
run_alloclab 4 runs
expect_contains "$ERR" "cannot migrate $DB from schema 16 to 17: duplicate column name: label" "a failed migration"
expect_eq "$(q "PRAGMA user_version")" 16 "nothing migrated"
q "PRAGMA user_version = 32"

# A run whose cells' statistics were never stored (it failed on a full disk before the cells'
# ends): its cells are computed from its samples as the recorder computes them (they showed
# '-' while their samples counted in the verdicts below the table).
sqlite3 "$DB" ".backup '$WORK/nostats.db'"
run=$(q "SELECT min(id) FROM runs WHERE status = 'done'")
table() { sed -n '/^cell /,/geometric mean/p' <<<"$OUT"; } # the cells and their verdicts
run_alloclab 0 show "$run" --db "$WORK/nostats.db"
with_stats=$(table)
sqlite3 "$WORK/nostats.db" "DELETE FROM stats WHERE run_id = $run"
run_alloclab 0 show "$run" --db "$WORK/nostats.db"
expect_eq "$(table)" "$with_stats" "a run shown without its stored statistics"
