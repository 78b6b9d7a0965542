#!/bin/bash
# Scale: the store stays fast as history grows. Builds a database of RUNS runs of one
# experiment (4 cells x 4 variants, ~62 measured samples each: 1,000,000 samples for 1,000 runs)
# from one real run, then times with hyperfine:
#   - alloclab --version                         (the reference: process start-up alone)
#   - alloclab show RUN                          (one run's table: statistics, values, verdicts)
#   - alloclab history EXP --cell n=2 --variant b (one cell and variant, last 20 runs)
#   - alloclab history EXP --cell n=2            (one cell, all four variants)
#   - alloclab history EXP --cell n=2 --variant b --last 200
# Target: show and history of one cell well under 100 ms.
#
#   bench/scale.sh [BUILD_DIR] [RUNS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
runs=${2:-1000}
alloclab=$build/cli/alloclab
command -v hyperfine >/dev/null || { echo "hyperfine is needed: apt-get install hyperfine" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "sqlite3 is needed: apt-get install sqlite3" >&2; exit 1; }
[[ -x $alloclab ]] || { echo "build alloclab first ($alloclab missing)" >&2; exit 1; }

work=$(mktemp -d)
[[ -n ${KEEP:-} ]] || trap 'rm -rf "$work"' EXIT
db=$work/scale.db
cat >"$work/scale.yaml" <<YAML
experiment: scale
command: [/bin/true]
params: {n: ["1", "2", "3", "4"]}
allocators: {a: {}, b: {}, c: {}, d: {}}
verify: none
samples: 3
warmup: 0
YAML
"$alloclab" run "$work/scale.yaml" --db "$db" --quiet >/dev/null

# Runs 2..RUNS copy run 1's rows, with 62 generated samples per cell and variant (wall times
# around 10 ms, every 50th run 5% slower so that history has change points to find).
start=$(date +%s.%N)
run_columns=$(sqlite3 "$db" "SELECT group_concat(name, ', ') FROM pragma_table_info('runs') WHERE name <> 'id'")
sqlite3 "$db" <<SQL
PRAGMA synchronous = OFF;
BEGIN;
WITH RECURSIVE k(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM k WHERE i < $runs)
INSERT INTO runs (id, $run_columns) SELECT k.i, $run_columns FROM k, runs WHERE runs.id = 1;
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

middle=$(( runs / 2 ))
hyperfine -N --warmup 3 --runs 30 --export-json "$work/times.json" \
    "$alloclab --version" \
    "$alloclab show $middle --db $db" \
    "$alloclab history scale --cell n=2 --variant b --db $db" \
    "$alloclab history scale --cell n=2 --db $db" \
    "$alloclab history scale --cell n=2 --variant b --last 200 --db $db" >/dev/null
python3 - "$work/times.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
reference = results[0]["median"]
for r in results:
    name = r["command"].split("/alloclab ", 1)[1].split(" --db")[0]
    print(f"  {name:52s} median {r['median'] * 1e3:7.1f} ms  (+{(r['median'] - reference) * 1e3:6.1f} ms over start-up)")
PY
