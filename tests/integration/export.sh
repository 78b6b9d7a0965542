#!/bin/bash
# alloclab export: every sample and every metric's statistics of a run as CSV, JSON or
# Markdown. The CSV reads back as exactly the database's rows (the samples) and the same
# figures `show` computes (the statistics).
. "$(dirname "$0")/lib.sh"

# Two parameters, a reported metric, a failing variant (its samples are exported too, with
# their status) and a comma and a quote in a label to exercise CSV quoting.
cat >"$WORK/spec.yaml" <<YAML
experiment: export
command: ["$WORKLOAD", report, cost, "{cost}"]
params: {cost: ["10", "20"], tag: ['a,"b"']}
allocators:
  glibc: {}
  jemalloc: {preload: jemalloc}
  broken: {command: ["$WORKLOAD", exit, "3"]}
metric: reported:cost
verify: none
samples: 3
YAML
run_alloclab 9 run "$WORK/spec.yaml" --quiet

run_alloclab 0 export latest --what samples
cp "$WORK/stdout" "$WORK/samples.csv"
python3 - "$DB" "$WORK/samples.csv" <<'PY' || fail "samples CSV differs from the database"
import csv, sqlite3, sys
rows = list(csv.DictReader(open(sys.argv[2], newline="")))
db = sqlite3.connect(sys.argv[1])
stored = db.execute("""SELECT s.id, c.label, v.name, s.phase, s.round + 1, s.status, s.exit_code,
    s.wall_ns, s.user_us, s.sys_us, s.maxrss_kib, s.verified, json_extract(c.params, '$.cost'),
    (SELECT value FROM sample_metrics m WHERE m.sample_id = s.id AND m.name = 'cost'),
    s.cpu_us, s.cpu_source, s.peak_kib, s.memory_source, s.leftover_processes, s.noisy
    FROM samples s JOIN cells c ON c.id = s.cell_id JOIN variants v ON v.id = s.variant_id ORDER BY s.id""").fetchall()
assert len(rows) == len(stored) and len(rows) > 0, (len(rows), len(stored))
def text(v):
    return "" if v is None else str(v)
for row, s in zip(rows, stored):
    got = (row["cell"], row["variant"], row["phase"], int(row["round"]), row["status"], row["exit_code"],
           int(row["wall_ns"]), int(row["user_us"]), int(row["sys_us"]), int(row["maxrss_kib"]),
           row["verified"] == "true", row["param:cost"],
           float(row["metric:cost"]) if row["metric:cost"] else None,
           int(row["cpu_us"]), row["cpu_source"], int(row["peak_kib"]), row["memory_source"],
           row["leftover_processes"], row["noisy"])
    want = (s[1], s[2], s[3], s[4], s[5], text(s[6]), s[7], s[8], s[9], s[10], bool(s[11]), s[12], s[13],
            s[14], s[15], s[16], s[17], text(s[18]), "" if s[19] is None else ("true" if s[19] else "false"))
    assert got == want, (got, want)
assert rows[0]["param:tag"] == 'a,"b"', rows[0]["param:tag"]
assert list(rows[0])[:3] == ["run_id", "experiment", "cell"], list(rows[0])
assert any(r["status"] == "exit" and r["variant"] == "broken" for r in rows)
PY

run_alloclab 0 export --what stats
cp "$WORK/stdout" "$WORK/stats.csv"
run_alloclab 0 show --format json
python3 - "$WORK/stats.csv" "$WORK/stdout" <<'PY' || fail "stats CSV differs from show"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
show = json.load(open(sys.argv[2]))
metrics = [r["metric"] for r in rows]
assert metrics[0] == "reported:cost" and {"wall", "user", "sys", "maxrss"} <= set(metrics), sorted(set(metrics))
for cell in show["cells"]:
    for variant, o in cell["results"].items():
        r = next(r for r in rows if r["metric"] == "reported:cost" and r["cell"] == cell["cell"] and r["variant"] == variant)
        if "median" in o:
            assert float(r["median"]) == o["median"] and int(r["n"]) == o["n"], (r, o)
            assert float(r["median_ci_low"]) == o["median_ci_low"] <= o["median"] <= o["median_ci_high"], (r, o)
        else:
            assert r["median"] == "" and r["excluded"] == o["excluded"], (r, o)
        if "verdict" in o:
            assert float(r["ratio_ci_low"]) == o["ratio_ci_low"] and r["verdict"] == o["verdict"], (r, o)
PY

run_alloclab 0 export 1 --what stats --format json
python3 -c 'import json, sys; d = json.load(sys.stdin); assert isinstance(d, list) and d[0]["run_id"] == 1 and "ratio_ci_low" in d[0], d[0]' <<<"$OUT" \
    || fail "stats JSON"
run_alloclab 0 export 1 --what samples --format markdown
expect_contains "$OUT" "| run_id | experiment | cell | variant |" "markdown header"
expect_contains "$OUT" 'a,"b"' "markdown keeps the label"

# Bad requests: a clear error and a usage exit code; a missing run is an environment error.
run_alloclab 2 export 1
expect_contains "$ERR" "--what samples or --what stats" "what is required"
run_alloclab 2 export 1 --what everything
run_alloclab 2 export 1 --what stats --format table
run_alloclab 2 export 99 --what samples
expect_contains "$ERR" "no run 99" "missing run"
