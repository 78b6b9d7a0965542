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

# The README shows the spec: the file itself, word for word (it went stale once: without
# PYTHONMALLOC=malloc, which the file sets).
python3 - "$(dirname "$0")/../../README.md" "$spec" <<'PY' || fail "README's copy of quickstart.yaml differs from the file"
import sys
readme, spec = open(sys.argv[1]).read(), open(sys.argv[2]).read()
start = readme.index("This is [configs/examples/quickstart.yaml]")
start = readme.index("```yaml\n", start) + len("```yaml\n")
sys.exit(0 if readme[start:readme.index("```", start)] == spec else 1)
PY
