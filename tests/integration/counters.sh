#!/bin/bash
# The kernel's event counters of each sample's process tree (runner/counters.h): the software
# ones stored per sample and usable as the metric, the hardware ones only where the machine has a
# PMU: elsewhere the run says why once and stores NULL, never 0.
. "$(dirname "$0")/lib.sh"

# The children: one process that faults in MIB MiB, and a shell that runs it as its child and
# waits (the tree), and one that sleeps (it must be switched out).
cat >"$WORK/spec.yaml" <<YAML
experiment: counters
command: [sh, -c, "$WORKLOAD touch {mib} 0; $WORKLOAD sleep 20 >/dev/null"]
params: {mib: [16, 64]}
allocators:
  glibc: {}
  jemalloc: {preload: jemalloc}
metric: page_faults
verify: none
samples: 8
YAML
run_alloclab 0 run "$WORK/spec.yaml" --db "$DB"
expect_contains "$OUT" "metric page_faults: median of 8 samples" "the counter as the run's metric"
shown=$OUT

# Every sample has the software counters, and its page faults are the tree's minor and major
# faults as wait4() sums them for the processes that were waited for (perf counts from the exec,
# rusage from the fork: a few faults apart).
expect_eq "$(q "SELECT count(*) FROM samples WHERE page_faults IS NULL OR context_switches IS NULL
                OR cpu_migrations IS NULL")" 0 "software counters in every sample"
expect_eq "$(q "SELECT count(*) FROM samples WHERE abs(page_faults - (minflt + majflt)) > 50 + (minflt + majflt) / 50")" \
    0 "page faults as rusage counts them, within 2% and 50 ($(q "SELECT page_faults, minflt + majflt FROM samples" | tr '\n' ' '))"
expect_eq "$(q "SELECT count(*) FROM samples WHERE context_switches < 1")" 0 "the sleeping child switched out"
if grep -q '\[always\]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null; then
    skip_part "THP is 'always' here: 64 MiB can be faulted in 2 MiB at a time"
else
    expect_eq "$(q "SELECT count(*) FROM samples s JOIN cells c ON c.id = s.cell_id
                    WHERE c.label = 'mib=64' AND s.page_faults < 64 * 256")" 0 "64 MiB touched: 16384 faults of 4 KiB at least"
fi
# The statistics of a counter metric, for show, compare and history like any other.
expect_eq "$(q "SELECT count(*) FROM stats WHERE metric = 'page_faults' AND median > 0")" 4 "page_faults statistics per cell and variant"
run_alloclab 0 history counters --metric page_faults --db "$DB"
expect_contains "$OUT" "page_faults" "history of a counter"

# Hardware counters: stored where the machine has a PMU, said unavailable (and NULL) where not.
counters=$(q "SELECT counters FROM runs")
if [[ -e /sys/bus/event_source/devices/cpu ]]; then
    expect_eq "$(q "SELECT count(*) FROM samples WHERE cycles IS NULL OR instructions IS NULL")" 0 "hardware counters with a PMU"
else
    expect_contains "$counters" "hardware counters unavailable: no PMU on this machine" "the run says why, once"
    expect_eq "$(q "SELECT count(*) FROM samples WHERE cycles IS NOT NULL OR instructions IS NOT NULL
                    OR dtlb_load_misses IS NOT NULL OR cache_misses IS NOT NULL")" 0 "no hardware figure stored without a PMU, not even 0"
    expect_contains "$shown" "hardware counters unavailable" "the run's table says so"
    # A metric the machine cannot count is refused before anything runs, at its place in the spec.
    sed -i 's/^metric: page_faults/metric: cycles/' "$WORK/spec.yaml"
    run_alloclab 4 run "$WORK/spec.yaml" --db "$WORK/none.db"
    expect_contains "$ERR" "spec.yaml:7:9: metric cycles cannot be counted: no PMU on this machine" "refused with its place"
    [[ ! -e $WORK/none.db ]] || fail "a refused spec wrote $WORK/none.db"
fi
run_alloclab 0 export --what samples --db "$DB" --format csv
expect_contains "$(echo "$OUT" | head -1)" \
    "page_faults,context_switches,cpu_migrations,cycles,instructions,dtlb_load_misses,cache_misses" "exported columns"
