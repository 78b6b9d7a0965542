#!/bin/bash
# samples: auto: a cell's sample rounds stop once every ratio's interval is within min_effect
# (after the fewest rounds that can give a verdict), or at the most; the header says so.
. "$(dirname "$0")/lib.sh"
cd "$WORK"

spec() { # MIN_EFFECT SAMPLES [ORDER]
    cat <<YAML
experiment: auto
command: ["$WORKLOAD", sleep, "{n}"]
params: {n: [20, 30]}
allocators:
  glibc: {}
  again: {}
samples: $2
min_effect: $1
order: ${3:-interleaved}
YAML
}
per_variant() { # RUN: "count count ..." of ok samples per cell and variant
    q "SELECT group_concat(n, ' ') FROM (SELECT count(*) AS n FROM samples WHERE run_id = $1 AND phase = 'sample'
       AND status = 'ok' GROUP BY cell_id, variant_id ORDER BY cell_id, variant_id)"
}

# The same allocator twice, asked for +-100% (an interval of 0.5 to 2.5 would do): known after
# the minimum, 6 rounds (two cells' comparisons share alpha 0.01 under Holm, so each test must
# reach p < 0.005, and 6 vs 6 is the fewest with which the rank test can: 2 / C(12, 6)). The
# children sleep rather than spin: a CPU-bound child on a machine busy with other tests can take
# three times as long once in five, and a bootstrap median of five then spans that.
spec 100% auto >loose.yaml
run_alloclab 0 run loose.yaml --quiet
expect_eq "$(per_variant 1)" "6 6 6 6" "stopped at the minimum"
expect_contains "$OUT" "median of 6 samples (auto: 6 to 50, until each ratio's 99% interval is within +-100%; 1 warmup)" \
    "the header"
expect_eq "$(q 'SELECT samples, samples_min FROM runs WHERE id = 1')" "50|6" "stored"
run_alloclab 0 show 1 --format json
expect_contains "$OUT" '"samples_auto": {' "JSON"
python3 - "$OUT" <<'PY' || fail "each cell's sample count in JSON"
import json, sys
cells = json.loads(sys.argv[1])["cells"]
assert [(c["samples"], c["precision_target_met"]) for c in cells] == [(6, True), (6, True)], cells
PY
[[ $OUT != *"precision target missed"* ]] || fail "a target met called missed"

# Asked for a precision no machine has: every cell runs to the most.
spec 0.0001% '{min: 3, max: 6}' >tight.yaml
run_alloclab 0 run tight.yaml --quiet
expect_eq "$(per_variant 2)" "6 6 6 6" "ran to the most"
expect_contains "$OUT" "median of 6 samples (auto: 3 to 6," "the range in the header"
expect_contains "$OUT" "samples: auto: 2 of 2 cells stopped at the maximum of 6 samples with the precision target missed" \
    "the missed target said"
run_alloclab 0 show 2 --format json
python3 - "$OUT" <<'PY' || fail "the missed target in JSON"
import json, sys
cells = json.loads(sys.argv[1])["cells"]
assert [(c["samples"], c["precision_target_met"]) for c in cells] == [(6, False), (6, False)], cells
PY

# --samples N is a fixed count again; quick --samples auto writes the key.
run_alloclab 0 run loose.yaml --samples 2 --quiet
expect_eq "$(per_variant 3)" "2 2 2 2" "--samples overrides auto"
expect_contains "$OUT" "median of 2 samples (1 warmup)" "a fixed count's header"
run_alloclab 0 show 3 --format json
python3 -c 'import json, sys; assert [c["precision_target_met"] for c in json.load(sys.stdin)["cells"]] == [None, None]' \
    <<<"$OUT" || fail "a fixed count has no target"
run_alloclab 0 quick -a glibc -r auto --print-spec -- true
expect_contains "$OUT" "samples: auto" "quick -r auto"

# What cannot work is refused where it is written.
spec 2% auto blocked >blocked.yaml
run_alloclab 3 check blocked.yaml
expect_contains "$ERR" "blocked.yaml:7:10: samples: auto needs order interleaved or randomized" "blocked order"
spec 2% '{min: 9, max: 4}' >range.yaml
run_alloclab 3 check range.yaml
expect_contains "$ERR" "range.yaml:7:10: samples: min 9 is more than max 4" "an empty range"

# An A/A check with too few samples for a bounded interval measures no noise floor: said, and
# null in JSON (it printed "noise floor +-inf%", left the key out of JSON, and listed every
# variant as "below the noise floor of +-inf%").
cat >"$WORK/aa-few.yaml" <<YAML
experiment: aa-few
command: [/bin/true]
allocators: {glibc: {}, again: {}}
aa_check: true
samples: 3
verify: none
probe: never
YAML
run_alloclab 0 run "$WORK/aa-few.yaml"
expect_contains "$OUT" "A/A check (glibc run again as glibc-aa): no noise floor: too few samples for a bounded interval" \
    "an unbounded A/A interval"
[[ $OUT != *"inf%"* ]] || fail "an infinite noise floor printed: $OUT"
run_alloclab 0 show latest --format json
expect_eq "$(python3 -c 'import json, sys
d = json.load(sys.stdin)
print(sorted({(k in e and e[k] is None) for c in d["cells"] for e in c["results"].values() for k in ("noise_floor", "below_noise_floor")}))' <<<"$OUT")" \
    "[True]" "json: no noise floor, null for every entry"
