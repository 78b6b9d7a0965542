#!/bin/bash
# alloclab bisect over a 16-commit history of a small allocator (tests/build/tinyalloc.c): one
# commit (c9) makes every malloc do more work (about 2.5x the time of a malloc-heavy program),
# one (c7) does not build. The bisection measures both ends first, skips what does not build,
# names c9 with at most 6 commits measured (the ends included), and stores every run it made.
# --at is `git bisect run`'s judge: 0 good, 1 bad, 125 skip.
. "$(dirname "$0")/lib.sh"

command -v git >/dev/null || skip_test "git is not installed (apt-get install git)"
command -v cc >/dev/null || skip_test "no C compiler (apt-get install gcc)"
export XDG_CACHE_HOME="$WORK/cache"
tiny_repo "$WORK/history"
git_in tag good
for i in $(seq 1 15); do
    echo "/* change $i */" >>"$REPO/tinyalloc.c"
    [[ $i == 7 ]] && echo "this is not C" >>"$REPO/tinyalloc.c"
    [[ $i == 8 ]] && sed -i '/^this is not C$/d' "$REPO/tinyalloc.c"
    [[ $i == 9 ]] && sed -i 's/$(EXTRA)$/$(EXTRA) -DTINY_EXTRA_WORK=100/' "$REPO/Makefile"
    git_in commit -qam "c$i"
    git_in tag "c$i"
done

# min_effect 20%: the regression is 150%; a difference the size of what a busy machine does to
# two builds of the same code is not one.
cat >"$WORK/spec.yaml" <<YAML
experiment: tiny
command: ["$WORKLOAD", churn, "300000"]
allocators:
  glibc: {}
  dev: {build: {source: $REPO}}
samples: 5
min_effect: 20%
YAML

# Judging commits is timing: on a busy machine, a noisy good commit can read 1.2x and be neither
# good nor bad (exit 11, as it should). Then the bisection is done again with more samples, as
# the message tells a user to; a machine too busy for that is not one to judge timing on.
machine_is_quiet || skip_test "the machine is busy ($QUIET_REASON): bisect judges commits by their time"
rc=0
"$ALLOCLAB" bisect "$WORK/spec.yaml" --variant dev --good good --bad c15 >"$WORK/stdout" 2>"$WORK/stderr" || rc=$?
if [[ $rc == 11 ]]; then
    echo "bisect could not tell a commit from noise with 5 samples here now: again with 9 ($(cat "$WORK/stderr" | tail -1))"
    rm -f "$DB" "$DB-wal" "$DB-shm"
    run_alloclab 0 bisect "$WORK/spec.yaml" --variant dev --good good --bad c15 --samples 9
else
    OUT=$(cat "$WORK/stdout") ERR=$(cat "$WORK/stderr")
    [[ $rc == 0 ]] || fail "alloclab bisect exited $rc, expected 0
stdout: $OUT
stderr: $ERR"
fi
expect_contains "$OUT" "alloclab bisect: dev of tiny, from good $(git_in rev-parse --short good) (v1) to bad $(git_in rev-parse --short c15) (c15): 15 commits" "the header"
expect_contains "$OUT" "first bad commit: $(git_in rev-parse --short c9) (c9)" "the slow commit found"
expect_contains "$OUT" "$(git_in rev-parse --short c7) (c7)" "c7 tried"
expect_contains "$OUT" "does not build: skipped" "c7 skipped"
expect_eq "$(q "SELECT count(*) FROM runs WHERE commit_id = '$(git_in rev-parse c7)'")" 0 "a commit that does not build is not run"
measured=$(sed -n 's/^\([0-9]*\) commits measured (both ends included), 14 between the ends$/\1/p' <<<"$OUT")
[[ -n $measured && $measured -le 6 ]] || fail "at most 6 commits measured: $OUT"
# Every step a stored run of experiment tiny-bisect, labelled with the commit it measured: the
# ends first (c15), each with the good build as its baseline.
runs=$(grep -c "(run [0-9]*)$" <<<"$OUT")
expect_eq "$(q "SELECT count(*) FROM runs r JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'tiny-bisect'")" "$runs" "every step stored"
expect_eq "$(q "SELECT commit_id FROM runs WHERE id = 1")" "$(git_in rev-parse c15)" "the bad end measured first"
expect_eq "$(q "SELECT group_concat(name, ',') FROM (SELECT name FROM variants WHERE run_id = 1 ORDER BY position)")" "good,candidate" "a step's variants"
expect_eq "$(q "SELECT json_extract(build, '$.commit') FROM variants WHERE run_id = 1 AND name = 'good'")" "$(git_in rev-parse good)" "the good end's build"
expect_eq "$(q "SELECT count(*) FROM runs WHERE commit_id = '$(git_in rev-parse c9)'")" 1 "c9 measured once"
expect_eq "$(q "SELECT count(*) FROM runs WHERE commit_id = '$(git_in rev-parse c1)'")" 0 "no more than the search needs"

# git bisect run's judge.
run_alloclab 1 bisect "$WORK/spec.yaml" --variant dev --good good --at c12
run_alloclab 0 bisect "$WORK/spec.yaml" --variant dev --good good --at c3
run_alloclab 125 bisect "$WORK/spec.yaml" --variant dev --good good --at c7
run_alloclab 255 bisect "$WORK/spec.yaml" --variant dev --good good --at nosuchrev
expect_contains "$ERR" "nosuchrev is not a commit of $REPO" "a wrong revision stops git bisect"

# Too few samples to tell a worse commit from noise: neither good nor bad (it said "good", and
# git bisect blamed a later commit).
run_alloclab 255 bisect "$WORK/spec.yaml" --variant dev --good good --at c12 --samples 2
expect_contains "$OUT" ": cannot tell (run " "the step says so"
expect_contains "$ERR" "but not significantly with 2 samples: it can be called neither good nor bad" "and why"
run_alloclab 11 bisect "$WORK/spec.yaml" --variant dev --good good --bad c15 --samples 2
run_alloclab 2 bisect "$WORK/spec.yaml" --variant dev --good c3 --bad c3
expect_contains "$ERR" "--good and --bad are the same commit" "one commit"

# Nothing to bisect: the bad end is not worse.
run_alloclab 10 bisect "$WORK/spec.yaml" --variant dev --good good --bad c6
expect_contains "$ERR" "the bad end is not worse than the good one by min_effect here" "nothing to bisect"
run_alloclab 2 bisect "$WORK/spec.yaml" --variant glibc --good good --bad c15
expect_contains "$ERR" "variant glibc is not built from source" "a variant that is not built"

echo "bisect: ok"
