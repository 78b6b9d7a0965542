#!/bin/bash
# The allocator's own statistics at the smoke run's exit (probe/stats.c): stored as the allocator
# printed them, with the figures allocators share read from them, and those figures agree with
# what the probe counted (live bytes) and the kernel says (RSS) within the bounds docs/probe.md
# gives.
. "$(dirname "$0")/lib.sh"

variants="  glibc: {}"
for a in jemalloc:libjemalloc.so.2 mimalloc:libmimalloc.so.2 tcmalloc_minimal:libtcmalloc_minimal.so.4; do
    if [[ -e /usr/lib/x86_64-linux-gnu/${a#*:} ]]; then
        variants+=$'\n'"  ${a%%:*}: {preload: ${a%%:*}}"
    else
        skip_part "${a%%:*} is not installed: its statistics are not checked"
    fi
done
# 100,000 blocks of 1,000 bytes, kept to the exit: ~100 MB the statistics must account for.
cat >"$WORK/spec.yaml" <<YAML
experiment: stats
command: ["$WORKLOAD", keep, "100000", "1000"]
allocators:
$variants
samples: 1
YAML
run_alloclab 0 run "$WORK/spec.yaml"
shown=$OUT
figure() { # figure VARIANT JSON-PATH: from the smoke run's probe report
    q "SELECT json_extract(p.report, '$2') FROM probe_reports p JOIN samples s ON s.id = p.sample_id
       JOIN variants v ON v.id = s.variant_id WHERE s.phase = 'smoke' AND v.name = '$1'"
}
within() { # within WHAT VALUE LOW HIGH: LOW <= VALUE <= HIGH (integers)
    (( $2 >= $3 && $2 <= $4 )) || fail "$1: $2 is not within [$3, $4]"
}
for v in $(q "SELECT name FROM variants ORDER BY position"); do
    [[ $(figure "$v" '$.allocator_stats.truncated') == 0 ]] || fail "$v: statistics cut short"
    [[ -n $(figure "$v" '$.allocator_stats.text') ]] || fail "$v: no statistics text stored"
    live=$(figure "$v" '$.counters.live_bytes') rss=$(figure "$v" '$.memory_at_exit.rss_bytes')
    allocated=$(figure "$v" '$.allocator_stats.figures.allocated_bytes')
    resident=$(figure "$v" '$.allocator_stats.figures.resident_bytes')
    case $v in
    glibc) # the chunks' 8-byte headers counted as allocated: 0.8% of 1,000-byte blocks
        expect_eq "$(figure "$v" '$.allocator_stats.format')" "glibc malloc_info XML" "glibc's form"
        within "glibc allocated against the probe's live bytes" "$allocated" "$live" $((live * 102 / 100)) ;;
    jemalloc)
        expect_eq "$(figure "$v" '$.allocator_stats.format')" "jemalloc malloc_stats_print JSON" "jemalloc's form"
        within "jemalloc allocated against the probe's live bytes" "$allocated" $((live * 98 / 100)) $((live * 102 / 100))
        # jemalloc's resident is a maximum, by its manual (pages it never touched count): with the
        # probe's own table out of the RSS it came within 1% above it once.
        within "jemalloc resident between allocated and the process's RSS" "$resident" "$allocated" $((rss * 102 / 100)) ;;
    mimalloc) # a release build counts no blocks: what it committed holds them
        expect_eq "$(figure "$v" '$.allocator_stats.figures.allocated_bytes')" "" "mimalloc: allocated not given, not 0"
        committed=$(figure "$v" '$.allocator_stats.figures.committed_bytes')
        within "mimalloc committed against the probe's live bytes" "$committed" "$live" $((live * 2)) ;;
    tcmalloc_minimal)
        within "tcmalloc allocated against the probe's live bytes" "$allocated" $((live * 98 / 100)) $((live * 102 / 100))
        within "tcmalloc resident between allocated and the process's RSS" "$resident" "$allocated" $((rss * 102 / 100)) ;;
    esac
done
expect_contains "$shown" "Allocator statistics at exit (smoke run: the started program's allocator's own figures" "show's section"
expect_contains "$shown" "glibc: allocated " "glibc's line"
run_alloclab 0 show --format json
expect_eq "$(echo "$OUT" | python3 -c 'import json, sys
r = json.load(sys.stdin)["cells"][0]["results"]["glibc"]["smoke_allocator_stats"]
print(r["allocated_bytes"] > 100 * 1000 * 1000, r["resident_bytes"])')" "True None" "JSON: a figure not given is null"
run_alloclab 0 show --allocators
expect_contains "$OUT" "allocator statistics at exit (glibc malloc_info XML): allocated" "show --allocators"
run_alloclab 0 census -- "$WORKLOAD" keep 1000 1000
expect_contains "$OUT" "allocator statistics at exit (glibc malloc_info XML): allocated" "census"

# With probe: counters every sample reads them at its exit: metrics like the others, the run's
# metric, history's; the text stays the smoke run's only.
cat >"$WORK/counted.yaml" <<YAML
experiment: counted
command: ["$WORKLOAD", keep, "100000", "1000"]
allocators: {jemalloc: {preload: jemalloc}}
probe: counters
metric: alloc_resident_bytes
verify: none
samples: 2
YAML
run_alloclab 0 run "$WORK/counted.yaml"
expect_contains "$OUT" "metric reported:alloc_resident_bytes: median of 2 samples" "the allocator's resident bytes as the run's metric"
expect_eq "$(q "SELECT count(*), sum(json_type(p.report, '$.allocator_stats') = 'object') FROM samples s
                JOIN runs r ON r.id = s.run_id JOIN experiments e ON e.id = r.experiment_id
                JOIN sample_metrics m ON m.sample_id = s.id AND m.name = 'alloc_allocated_bytes'
                LEFT JOIN probe_reports p ON p.sample_id = s.id
                WHERE e.name = 'counted' AND s.phase = 'sample' AND m.value > 100 * 1000 * 1000")" "2|0" \
    "each sample's figures, not its text"
run_alloclab 0 history counted --metric alloc_allocated_bytes
expect_contains "$OUT" "MiB" "history of an allocator figure, in bytes"
sed -i 's/^probe: counters/probe: smoke/' "$WORK/counted.yaml"
run_alloclab 3 run "$WORK/counted.yaml" --db "$WORK/none.db"
expect_contains "$ERR" "counted.yaml:5:9: metric alloc_resident_bytes is read by the probe at each sample's exit: set probe: counters" \
    "refused where the samples do not read it"
