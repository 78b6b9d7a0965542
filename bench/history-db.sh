#!/bin/bash
# A history database for the benchmarks: RUNS runs of one experiment "scale" (4 cells x 4
# variants, ~62 measured samples each: 1,000,000 samples for 1,000 runs) grown from one real run
# into DB. Used by bench/scale.sh and bench/import.sh.
#
#   bench/history-db.sh BUILD_DIR DB RUNS
set -euo pipefail
build=$1
db=$2
runs=$3
alloclab=$build/cli/alloclab
cat >"$db.yaml" <<YAML
experiment: scale
command: [/bin/true]
params: {n: ["1", "2", "3", "4"]}
allocators: {a: {}, b: {}, c: {}, d: {}}
verify: none
samples: 3
warmup: 0
YAML
"$alloclab" run "$db.yaml" --db "$db" --quiet >/dev/null

# Runs 2..RUNS copy run 1's rows, with 62 generated samples per cell and variant (wall times
# around 10 ms, every 50th run 5% slower so that history has change points to find).
start=$(date +%s.%N)
run_columns=$(sqlite3 "$db" "SELECT group_concat(name, ', ') FROM pragma_table_info('runs') WHERE name NOT IN ('id', 'uuid')")
sqlite3 "$db" <<SQL
PRAGMA synchronous = OFF;
BEGIN;
WITH RECURSIVE k(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM k WHERE i < $runs)
INSERT INTO runs (id, uuid, $run_columns) SELECT k.i, lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-a' || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6))), $run_columns FROM k, runs WHERE runs.id = 1;
INSERT INTO cells (run_id, position, label, params)
  SELECT r.id, c.position, c.label, c.params FROM runs r, cells c WHERE r.id > 1 AND c.run_id = 1;
INSERT INTO variants (run_id, position, name, allocator_id, env, command, is_baseline, is_reference)
  SELECT r.id, v.position, v.name, v.allocator_id, v.env, v.command, v.is_baseline, v.is_reference
  FROM runs r, variants v WHERE r.id > 1 AND v.run_id = 1;
WITH RECURSIVE s(j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM s WHERE j < 61)
INSERT INTO samples (run_id, cell_id, variant_id, phase, round, step, status, wall_ns, user_us, sys_us,
                     maxrss_kib, minflt, majflt, nvcsw, nivcsw, exit_code, leftover, verified, recorded_at)
  SELECT c.run_id, c.id, v.id, 'sample', s.j, s.j, 'ok',
         (10000000 + abs(random()) % 200000) * (CASE WHEN (c.run_id / 50) % 2 = 1 THEN 105 ELSE 100 END) / 100,
         1000, 2000, 4000, 100, 0, 1, 1, 0, 0, 1, '2026-01-01T00:00:00Z'
  FROM cells c JOIN variants v ON v.run_id = c.run_id, s WHERE c.run_id > 1;
INSERT INTO stats (run_id, cell_id, variant_id, metric, n, median, mad, mean, stddev, min, max)
  SELECT s.run_id, s.cell_id, s.variant_id, 'wall', count(*), avg(s.wall_ns) / 1e9, 0, avg(s.wall_ns) / 1e9, 0,
         min(s.wall_ns) / 1e9, max(s.wall_ns) / 1e9
  FROM samples s WHERE s.run_id > 1 GROUP BY s.run_id, s.cell_id, s.variant_id;
COMMIT;
ANALYZE;
SQL
end=$(date +%s.%N)
printf 'database: %s runs, %s samples, %s MiB (generated in %.0f s)\n' \
    "$(sqlite3 "$db" "SELECT count(*) FROM runs")" "$(sqlite3 "$db" "SELECT count(*) FROM samples")" \
    "$(( $(stat -c %s "$db") / 1048576 ))" "$(echo "$end - $start" | bc)"

