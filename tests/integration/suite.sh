#!/bin/bash
# alloclab suite: every bundled workload runs under the catalog allocators with verified
# outputs (each prints the same under all of them), one stored run each, and one summary.
. "$(dirname "$0")/lib.sh"

run_alloclab 0 suite --list
for w in cache-scratch cache-thrash frag larson mstress python3 realloc sqlite3 xmalloc redis perl lua xz gcc git; do
    expect_contains "$OUT" "$w " "--list names $w"
done
run_alloclab 2 suite nosuch
expect_contains "$ERR" "no workload 'nosuch'" "an unknown workload"
# A problem in the spec the suite made points into it, and says so (the workload file is shorter).
run_alloclab 3 suite xmalloc --allocators glibc,mimaloc
expect_contains "$ERR" "unknown allocator 'mimaloc' (did you mean 'mimalloc'?)" "a misspelt allocator"
expect_contains "$ERR" "(positions are in the spec alloclab suite made from" "whose positions"

# Three threads, an odd count, so that every hand-over between threads wraps around; a small
# scale keeps it short. Every output must verify against glibc's: exit 0 means no mismatch.
stress="cache-scratch cache-thrash frag larson mstress python3 realloc sqlite3 xmalloc"
run_alloclab 0 suite $stress --threads 1,3 --scale 5 --samples 5 --allocators glibc,jemalloc,mimalloc,tcmalloc_minimal --quiet
summary=$OUT
# 9 workloads x 2 thread counts x 3 allocators: 54 comparisons share alpha; 5 samples cannot
# make a lone difference significant, and the suite says so before it runs (it printed '~'
# everywhere without a word).
expect_contains "$ERR" "alloclab suite: warning: the suite's 54 comparisons share alpha 0.01 (Benjamini-Hochberg): with 5 samples per variant a difference reaches it only when many comparisons differ at once" \
    "a family too large for its samples, said"
for w in cache-scratch cache-thrash frag larson mstress python3 realloc sqlite3 xmalloc; do
    expect_eq "$(q "SELECT count(*) FROM runs JOIN experiments e ON e.id = runs.experiment_id
                    WHERE e.name = 'suite-$w' AND runs.status = 'done'")" 1 "a stored run of $w"
done
expect_eq "$(q "SELECT count(*) FROM samples WHERE status != 'ok'")" 0 "every sample verified"
expect_eq "$(q "SELECT count(DISTINCT cell_id) FROM samples JOIN runs ON runs.id = samples.run_id
                JOIN experiments e ON e.id = runs.experiment_id WHERE e.name = 'suite-larson'")" 2 "threads 1 and 3"
expect_contains "$(q "SELECT yaml FROM specs WHERE yaml LIKE '%suite-larson%'")" "# Added by alloclab suite:" \
    "the stored spec says what the suite added"
expect_contains "$summary" "Suite: " "the summary's title"
expect_contains "$summary" "frag           reported:rss_after_free_bytes  " "frag's metric is its resident set"
expect_contains "$summary" " MiB" "a reported _bytes metric in bytes units"
expect_contains "$summary" "mimalloc: wins " "per-allocator lines"
expect_contains "$summary" "time geometric mean " "the suite's geometric mean"
[[ $summary != *"inf]"* && $summary != *"[0.000, "* ]] || fail "an unbounded interval printed as one: $summary"
expect_contains "$summary" "(a difference needs p < 0.01 (Benjamini-Hochberg over " \
    "every workload's comparisons one family, its correction stated"
[[ $(q "SELECT count(*) FROM sample_metrics WHERE name = 'rss_after_free_bytes'") -gt 0 ]] || fail "frag reports rss_after_free_bytes"
# Debian's redis-server links jemalloc: under "glibc" it still allocates with jemalloc, which the
# smoke run proves, so redis is measured against jemalloc and glibc is excluded (exit 1).
if command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null; then
    run_alloclab 1 suite redis --threads 1 --scale 5 --samples 3 --allocators glibc,jemalloc,mimalloc --quiet
    expect_contains "$OUT" "redis     wall against jemalloc  PRELOAD-INEFFECTIVE" "redis under glibc"
    expect_contains "$OUT" "(redis, measured against jemalloc, is left out)" "not pooled with the others"
else
    run_alloclab 0 suite redis --allocators glibc --quiet
    expect_contains "$ERR" "redis: skipped: redis-server is not installed (apt-get install redis-server redis-tools)" \
        "redis, not installed, is skipped"
    echo "redis-server not installed: the redis workload was only checked to be skipped"
fi

# The JSON summary has a winner per workload and intervals.
run_alloclab 0 suite larson --threads 2 --scale 5 --samples 5 --allocators glibc,mimalloc --format json --quiet
python3 - "$OUT" <<'PY' || fail "suite JSON"
import json, sys
doc = json.loads(sys.argv[1])
assert doc["baseline"] == "glibc", doc
w = doc["workloads"][0]
assert w["workload"] == "larson" and w["metric"] == "wall", w
winners = [v["name"] for v in w["variants"] if v["winner"]]
assert winners == ([w["winner"]] if w["winner"] else []), w
mi = w["variants"][1]
assert mi["name"] == "mimalloc" and mi["ratio"] > 0 and mi["ratio_ci_low"] <= mi["ratio"] <= mi["ratio_ci_high"], mi
if w["winner"] == "mimalloc":
    assert mi["cells_better"] == mi["cells_compared"] > 0, mi
PY

# No crown without significance: with 2 samples no verdict can be reached, so no workload has a
# winner, glibc included (on 20936ed glibc was starred and "wins 1 of 1" beside mimalloc at
# 0.42x [0.32, 0.56]).
run_alloclab 0 suite larson --threads 2 --scale 5 --samples 2 --allocators glibc,mimalloc --quiet
expect_contains "$OUT" "glibc: wins 0 of 1" "the baseline wins nothing by default"
expect_contains "$OUT" "mimalloc: wins 0 of 1" "nor does anyone else"
expect_contains "$OUT" "no clear winner in 1 of 1 workloads" "said so"
[[ $(grep '^larson' <<<"$OUT") != *"*"* ]] || fail "a winner starred without significance: $OUT"
run_alloclab 0 suite larson --threads 2 --scale 5 --samples 2 --allocators glibc,mimalloc --quiet --format json
expect_eq "$(python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["workloads"][0]["winner"], [v["winner"] for v in d["workloads"][0]["variants"]])' <<<"$OUT")" \
    "None [False, False]" "no winner in JSON"

# A workload whose programs are missing is skipped with the hint its file gives.
mkdir "$WORK/workloads"
cp "$BUILD_DIR/workloads/alloclab-stress" "$BUILD_DIR/workloads/larson.yaml" "$WORK/workloads/"
printf '# requires: alloclab-no-such-program (apt-get install nothing)\nexperiment: suite-missing\ncommand: [alloclab-no-such-program]\n' \
    >"$WORK/workloads/missing.yaml"
ALLOCLAB_WORKLOADS="$WORK/workloads" run_alloclab 0 suite --threads 1 --scale 2 --samples 1 --allocators glibc --quiet
expect_contains "$ERR" "missing: skipped: alloclab-no-such-program is not installed (apt-get install nothing)" "the skip"
expect_contains "$OUT" "Suite: 1 workloads" "the others still run"

# --print-spec shows the whole spec and runs nothing.
runs=$(q 'SELECT count(*) FROM runs')
run_alloclab 0 suite larson --print-spec --threads 1,2 --allocators glibc,jemalloc
expect_contains "$OUT" 'threads: ["1", "2"]' "the threads axis"
expect_contains "$OUT" '"jemalloc": {preload: "jemalloc"}' "a variant per allocator"
expect_eq "$(q 'SELECT count(*) FROM runs')" "$runs" "--print-spec runs nothing"
# The python3 workload measures the allocators, not pymalloc (on 7fba13f it ranked them on a
# program whose small objects never reached them, with a note on stderr only).
run_alloclab 0 suite python3 --print-spec --threads 1 --allocators glibc
expect_contains "$OUT" "PYTHONMALLOC: malloc" "python3 routes its objects to malloc"

# The stress workloads keep what decides their namesakes' results. mstress: a live heap of 75 MiB
# and more at scale 100 with one thread (it had a few MiB, and gave the opposite verdict).
run_alloclab 0 suite mstress --threads 1 --samples 1 --allocators glibc --quiet
run_alloclab 0 show --format json
live=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["cells"][0]["results"]["glibc"]["smoke_peak_live_bytes"])' <<<"$OUT")
((live > 60 * 1024 * 1024)) || fail "mstress's live heap is $live bytes, not the original's 75 MiB and more"
# xmalloc: THREADS threads that only allocate and THREADS that only free (it had THREADS threads
# that did both): 2 + 2 threads besides the main one while it runs.
"$BUILD_DIR/workloads/alloclab-stress" xmalloc 2 10000 >/dev/null &
stress_pid=$!
most=0
for _ in $(seq 100); do
    n=$(awk '/^Threads:/ { print $2 }' "/proc/$stress_pid/status" 2>/dev/null || echo 0)
    ((n > most)) && most=$n
    ((most >= 5)) && break
    sleep 0.02
done
kill "$stress_pid" 2>/dev/null || true
wait "$stress_pid" 2>/dev/null || true
expect_eq "$most" 5 "xmalloc 2: two producers, two releasers and the main thread"

# --compare-to: each workload's run against an earlier one, as compare puts them; latest is the
# workload's newest before, RUN the run of that workload by the suite that made RUN (each
# invocation labels its runs). realloc and frag ran above with the first suite (label L1).
first_realloc=$(q "SELECT max(r.id) FROM runs r JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'suite-realloc'")
# The gate's status, as compare --fail-on regression's: 0, or 6 (a regression) or 9 (a change
# the runs cannot tell from noise), which measured time decides.
gated() {
    local rc=0
    "$ALLOCLAB" "$@" >"$WORK/stdout" 2>"$WORK/stderr" || rc=$?
    OUT=$(cat "$WORK/stdout")
    [[ $rc == 0 || $rc == 6 || $rc == 9 ]] || fail "alloclab $* exited $rc: $(cat "$WORK/stderr")"
}
gated suite realloc frag --threads 1,3 --scale 5 --samples 5 --allocators glibc,jemalloc,mimalloc,tcmalloc_minimal \
    --quiet --compare-to "$first_realloc"
expect_contains "$OUT" "Against earlier runs of the same workloads (as alloclab compare;" "the comparison section"
new_realloc=$(q "SELECT max(r.id) FROM runs r JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'suite-realloc'")
expect_contains "$OUT" "realloc:
compare: run $first_realloc (" "realloc against the first suite's"
expect_contains "$OUT" "-> run $new_realloc (" "... and its new run"
first_frag=$(q "SELECT r.id FROM runs r JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'suite-frag' AND r.label = (SELECT label FROM runs WHERE id = $first_realloc)")
expect_contains "$OUT" "frag:
compare: run $first_frag (" "frag against the same suite's run"
expect_contains "$OUT" "workloads compared with an earlier run" "the suite's line"
new_frag=$(q "SELECT max(r.id) FROM runs r JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'suite-frag'")
expect_eq "$(q "SELECT count(DISTINCT label), min(label != (SELECT label FROM runs WHERE id = $first_realloc))
                FROM runs WHERE id IN ($new_realloc, $new_frag)")" "1|1" "one label for the invocation, its own"
# JSON: compare's documents under compared_to, one per workload.
run_alloclab 7 suite realloc --threads 1 --scale 5 --samples 5 --allocators glibc,jemalloc --quiet --format json --compare-to latest
expect_eq "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print([(c["workload"], c["run_b"] > c["run_a"], c["comparable"]) for c in d["compared_to"]])' <<<"$OUT")" \
    "[('realloc', True, False)]" "compared_to in JSON (other allocators: not comparable)"
# A run that no suite made, or none at all: refused before anything runs.
run_alloclab 0 quick --quiet --samples 3 -a glibc -- true
runs=$(q 'SELECT count(*) FROM runs')
run_alloclab 2 suite realloc --compare-to "$(q 'SELECT max(id) FROM runs')"
expect_contains "$ERR" "was not made by alloclab suite" "a run of quick"
run_alloclab 2 suite realloc --compare-to 9999
expect_contains "$ERR" "there is no run 9999" "no such run"
expect_eq "$(q 'SELECT count(*) FROM runs')" "$runs" "nothing ran"

# The real programs' workloads: each verifies (exit 0: every allocator's output matched glibc's);
# xz, gcc and git make their input in the user's scratch directory (here the test's), once.
export XDG_CACHE_HOME="$WORK/cache"
real="perl lua xz gcc git"
command -v lua5.4 >/dev/null || { skip_part "lua5.4 is not installed: the lua workload is not run"; real="perl xz gcc git"; }
run_alloclab 0 suite $real --threads 1,2 --scale 5 --samples 3 --allocators glibc,jemalloc,mimalloc --quiet
for w in $real; do
    expect_eq "$(q "SELECT count(*) FROM runs r JOIN experiments e ON e.id = r.experiment_id
                    WHERE e.name = 'suite-$w' AND r.status = 'done' AND r.n_failures = 0 AND r.n_excluded = 0")" 1 "$w: a clean run"
done
ls "$XDG_CACHE_HOME/alloclab/suite/xz/text-1-5.txt" "$XDG_CACHE_HOME/alloclab/suite/gcc/input-1-5.c" \
    "$XDG_CACHE_HOME/alloclab/suite/git/repo-1-5/.done" >/dev/null || fail "the generated inputs are not in the scratch directory"
expect_eq "$(stat -c %a "$XDG_CACHE_HOME/alloclab/suite/git")" 700 "the scratch directory is the user's alone"
expect_eq "$(q "SELECT count(DISTINCT s.status) || s.status FROM samples s JOIN runs r ON r.id = s.run_id JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'suite-git'")" \
    "1ok" "git's outputs verified"
