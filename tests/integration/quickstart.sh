#!/bin/bash
# The README's main job: configs/examples/quickstart.yaml runs under glibc, jemalloc, mimalloc
# and tcmalloc and prints its table (one sample per cell here, to keep the suite fast).
. "$(dirname "$0")/lib.sh"

spec="$(dirname "$0")/../../configs/examples/quickstart.yaml"
run_alloclab 0 check "$spec"
run_alloclab 0 run "$spec" --samples 1 --quiet
for v in "glibc (baseline)" jemalloc mimalloc tcmalloc; do
    expect_contains "$OUT" "$v" "quickstart column"
done
for cell in "n=100000 width=8" "n=100000 width=64" "n=400000 width=8" "n=400000 width=64"; do
    expect_contains "$OUT" "$cell" "quickstart row"
done
expect_eq "$(q "SELECT count(*) FROM samples WHERE status = 'ok'")" $((4 * 4 * 3)) "quickstart samples"
