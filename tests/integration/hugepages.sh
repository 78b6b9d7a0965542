#!/bin/bash
# Memory at exit from the probe (smaps_rollup of each probed process as it exits, in the smoke
# run): a THP setting's effect shows as huge-page coverage, not only as time.
. "$(dirname "$0")/lib.sh"

thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo missing)
[[ $thp == *"[never]"* || $thp == missing ]] && skip_test "transparent huge pages are off here ($thp)"
jemalloc=$(ls /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 2>/dev/null || true)
[[ -n $jemalloc ]] || skip_test "jemalloc is not installed (apt-get install libjemalloc2)"

# 64 MiB that the program asks to be in huge pages (MADV_HUGEPAGE), and a malloc-heavy program
# (100,000 blocks of 1,000 bytes kept to the exit) under jemalloc with and without its THP option.
cat >"$WORK/spec.yaml" <<YAML
experiment: huge
command: [sh, -c, "exec $WORKLOAD {program}"]
params: {program: [hugepage 64, keep 100000 1000]}
allocators:
  glibc: {}
  thp_always: {preload: jemalloc, env: {MALLOC_CONF: "thp:always"}}
  thp_never: {preload: jemalloc, env: {MALLOC_CONF: "thp:never"}}
verify: none
samples: 2
YAML
run_alloclab 0 run "$WORK/spec.yaml"
shown=$OUT
huge() { # huge PROGRAM VARIANT FIELD: the smoke run's figure, in MiB
    q "SELECT json_extract(p.report, '$.memory_at_exit.$3') / 1048576 FROM probe_reports p
       JOIN samples s ON s.id = p.sample_id JOIN cells c ON c.id = s.cell_id JOIN variants v ON v.id = s.variant_id
       WHERE s.phase = 'smoke' AND c.label LIKE 'program=$1%' AND v.name = '$2'"
}
for v in glibc thp_always thp_never; do
    (( $(huge hugepage $v anon_huge_bytes) >= 32 )) ||
        fail "64 MiB madvised for huge pages, $(huge hugepage $v anon_huge_bytes) MiB in them under $v"
done
(( $(huge keep thp_always anon_huge_bytes) >= 32 )) || fail "jemalloc thp:always: $(huge keep thp_always anon_huge_bytes) MiB in huge pages"
expect_eq "$(huge keep thp_never anon_huge_bytes)" 0 "jemalloc thp:never: no huge pages"
(( $(huge keep thp_never rss_bytes) >= 95 )) || fail "100,000 kept blocks of 1,000 bytes: $(huge keep thp_never rss_bytes) MiB resident"
expect_contains "$shown" "Memory at exit (smoke run: each probed process's /proc/PID/smaps_rollup" "show's section"
expect_contains "$shown" "thp_never: resident" "a line per variant"
expect_contains "$shown" "of which none in transparent huge pages" "none said as none"
run_alloclab 0 show --format json
expect_eq "$(echo "$OUT" | python3 -c 'import json, sys
d = json.load(sys.stdin)
print(min(c["results"]["glibc"]["smoke_memory_at_exit"]["anon_huge_bytes"] for c in d["cells"] if "hugepage" in json.dumps(c["cell"])) >= 32 << 20)')" \
    True "JSON: smoke_memory_at_exit"

# A tree: each probed process reads its own at its exit, and the run sums them.
cat >"$WORK/tree.yaml" <<YAML
experiment: tree
command: [sh, -c, "$WORKLOAD hugepage 16; $WORKLOAD hugepage 16"]
allocators: {glibc: {}}
verify: none
samples: 1
YAML
run_alloclab 0 run "$WORK/tree.yaml"
expect_contains "$OUT" "in transparent huge pages, of 2 of the tree's 3 processes (one that ends with _exit() or a signal reads none)" "summed over the two children, and dash (it ends with _exit(): its exit handlers, and the probe's, never run) said to be left out"
expect_eq "$(q "SELECT json_extract(p.report, '$.memory_at_exit.anon_huge_bytes') >= 32 << 20,
                (SELECT count(*) FROM json_each(p.report, '$.processes') t
                 WHERE json_type(t.value, '$.memory_at_exit') = 'object')
                FROM probe_reports p JOIN samples s ON s.id = p.sample_id JOIN runs r ON r.id = s.run_id
                JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'tree' AND s.phase = 'smoke'")" "1|2" \
    "each process's own figure, and their sum"

# The census says it too.
run_alloclab 0 census -- "$WORKLOAD" hugepage 8
expect_contains "$OUT" "memory at exit (smaps_rollup): resident" "census"

# probe: counters (every sample under the probe, counting): each sample reads its memory at exit.
cat >"$WORK/counted.yaml" <<YAML
experiment: counted
command: ["$WORKLOAD", hugepage, "16"]
allocators: {glibc: {}}
probe: counters
verify: none
samples: 2
YAML
run_alloclab 0 run "$WORK/counted.yaml"
expect_eq "$(q "SELECT count(*) FROM probe_reports p JOIN samples s ON s.id = p.sample_id JOIN runs r ON r.id = s.run_id
                JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'counted' AND s.phase = 'sample'
                AND json_extract(p.report, '$.memory_at_exit.anon_huge_bytes') >= 8 << 20")" 2 "per sample with probe: counters"
# ... and they are metrics of each sample: the run's metric, history's.
expect_eq "$(q "SELECT count(*) FROM sample_metrics m JOIN samples s ON s.id = m.sample_id JOIN runs r ON r.id = s.run_id
                JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'counted' AND s.phase = 'sample'
                AND m.name = 'exit_anon_huge_bytes' AND m.value >= 8 << 20")" 2 "exit_anon_huge_bytes, a metric per sample"
sed -i 's/^samples: 2/samples: 2\nmetric: exit_anon_huge_bytes/' "$WORK/counted.yaml"
run_alloclab 0 run "$WORK/counted.yaml"
expect_contains "$OUT" "metric reported:exit_anon_huge_bytes: median of 2 samples" "the coverage as the run's metric"
run_alloclab 0 history counted --metric exit_anon_huge_bytes
expect_contains "$OUT" "MiB" "history of the coverage, in bytes"
sed -i 's/^probe: counters/probe: smoke/' "$WORK/counted.yaml"
run_alloclab 3 run "$WORK/counted.yaml" --db "$WORK/none.db"
expect_contains "$ERR" "counted.yaml:7:9: metric exit_anon_huge_bytes is read by the probe at each sample's exit: set probe: counters" \
    "refused where the samples do not read it"
[[ ! -e $WORK/none.db ]] || fail "a refused spec wrote a database"

# The probe's own table of live blocks (32-64 bytes a block in the smoke run) is not the
# program's memory: a million blocks of 16 bytes read 71.6 MiB at exit under the probe against
# 39.3 MiB of peak RSS without it.
cat >"$WORK/blocks.yaml" <<YAML
experiment: blocks
command: ["$WORKLOAD", keep, "1000000", "16"]
allocators: {glibc: {}}
verify: none
samples: 2
YAML
run_alloclab 0 run "$WORK/blocks.yaml"
read -r at_exit peak <<<"$(q "SELECT max(CASE WHEN s.phase = 'smoke' THEN m.value END) / 1024,
                                     max(CASE WHEN s.phase = 'sample' THEN s.maxrss_kib END)
                              FROM samples s JOIN runs r ON r.id = s.run_id JOIN experiments e ON e.id = r.experiment_id
                              LEFT JOIN sample_metrics m ON m.sample_id = s.id AND m.name = 'exit_rss_bytes'
                              WHERE e.name = 'blocks'" | tr '|' ' ')"
python3 -c "import sys; a, b = map(float, sys.argv[1:]); sys.exit(abs(a - b) > 0.1 * b)" "$at_exit" "$peak" ||
    fail "memory at exit under the probe $at_exit KiB, the program's peak RSS without it $peak KiB"
