#!/bin/bash
# Allocators built from source (spec build:, runner/build.h): a git repository of a small
# allocator (tests/build/tinyalloc.c) at two revisions is built once into the build cache and
# reused; what a run records of each build is what was built; the tree as it is (uncommitted
# changes) is a build of its own; a revision that does not build excludes its variant with
# build-failed and the log's tail; a revision that does not exist is the spec's error, before
# anything is built or written.
. "$(dirname "$0")/lib.sh"

command -v git >/dev/null || skip_test "git is not installed (apt-get install git)"
command -v cc >/dev/null || skip_test "no C compiler (apt-get install gcc)"
export XDG_CACHE_HOME="$WORK/cache"
CACHE="$XDG_CACHE_HOME/alloclab/builds"
tiny_repo "$WORK/tiny"
sed -i 's/$(EXTRA)/$(EXTRA) -DTINY_EXTRA_WORK=100/' "$REPO/Makefile"
git_in commit -qam "more work per malloc"
git_in tag v2

cat >"$WORK/ab.yaml" <<YAML
experiment: tiny-ab
command: ["$WORKLOAD", churn, "20000"]
allocators:
  old: {build: {source: tiny, rev: v1}}
  new: {build: {source: tiny, rev: v2, output: libtiny.so}}
samples: 3
YAML
cd "$WORK" # the source is relative to where alloclab runs

# A check finds the trees and revisions and builds nothing.
run_alloclab 0 check "$WORK/ab.yaml"
[[ ! -d $CACHE ]] || [[ -z $(ls "$CACHE") ]] || fail "check built something: $(ls "$CACHE")"

run_alloclab 0 run "$WORK/ab.yaml" --quiet
expect_contains "$ERR" "old: $REPO at v1: built in" "old built"
expect_contains "$ERR" "new: $REPO at v2: built in" "new built"
expect_contains "$OUT" "allocators: old=libtiny.so v1, new=libtiny.so v2" "the allocators named by revision"
expect_eq "$(ls "$CACHE" | wc -l)" 2 "cache entries after the first run"
for v in old new; do
    rev=$([[ $v == old ]] && echo v1 || echo v2)
    build=$(q "SELECT build FROM variants WHERE run_id = 1 AND name = '$v'")
    expect_eq "$(python3 -c 'import json,sys; b=json.loads(sys.argv[1]); print(b["source"], b["commit"], b["describe"], b["dirty"], b["commands"], b["output"], b["cached"])' "$build")" \
        "$REPO $(git_in rev-parse "$rev") $rev False ['make -j\"\$(nproc)\"'] libtiny.so False" "what run 1 recorded of $v's build"
    key=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["key"])' "$build")
    sum=$(sha256sum "$CACHE/$key/libtiny.so" | cut -d' ' -f1)
    expect_eq "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["sha256"])' "$build")" "$sum" "$v's recorded sha256 is the cached file's"
    expect_eq "$(q "SELECT a.sha256 || ' ' || a.version FROM variants v JOIN allocators a ON a.id = v.allocator_id WHERE v.run_id = 1 AND v.name = '$v'")" \
        "$sum $rev" "$v's allocator row"
done
run_alloclab 0 show 1 --allocators
expect_contains "$OUT" "old: libtiny.so v1
  file $CACHE/" "show --allocators: the cached file"
expect_contains "$OUT" "  built from $REPO at v1 (commit $(git_in rev-parse v1))
  build commands: make -j\"\$(nproc)\"
  output libtiny.so, compiler $(cc --version | head -1), built in " "show --allocators: what built it"
expect_contains "$OUT" "/libtiny.so (a family alloclab does not know: no version or options read)" \
    "an allocator under development is not \"none\""
# What the children preloaded is the cached file (the probe names the file serving malloc).
expect_eq "$(q "SELECT count(*) FROM samples WHERE run_id = 1 AND status = 'ok'")" 10 "run 1's samples"

# Run again: both from the cache, nothing built.
run_alloclab 0 run "$WORK/ab.yaml" --quiet
expect_contains "$ERR" "old: $REPO at v1: built before" "old from the cache"
expect_contains "$ERR" "new: $REPO at v2: built before" "new from the cache"
[[ $ERR != *"built in"* ]] || fail "built again: $ERR"
expect_eq "$(ls "$CACHE" | wc -l)" 2 "cache entries after the second run"
expect_eq "$(q "SELECT group_concat(json_extract(build, '$.cached'), ',') FROM variants WHERE run_id = 2")" "1,1" "run 2 says cached"

# The tree as it is: uncommitted changes make a build of their own, named -dirty.
cat >"$WORK/wip.yaml" <<YAML
experiment: tiny-wip
command: ["$WORKLOAD", churn, "20000"]
allocators:
  old: {build: {source: tiny, rev: v1}}
  wip: {build: {source: $REPO}}
samples: 3
YAML
echo "/* a change not committed */" >>"$REPO/tinyalloc.c"
# What an earlier make left in the tree (untracked) is not the source: copied, it passed for what
# the build made ("up to date"), and the run recorded commands that never ran.
cc -O0 -shared -fPIC -o "$REPO/libtiny.so" "$REPO/tinyalloc.c"
stale=$(sha256sum "$REPO/libtiny.so" | cut -d' ' -f1)
run_alloclab 0 run "$WORK/wip.yaml" --quiet
expect_contains "$ERR" "wip: $REPO at v2-dirty: built in" "the dirty tree built"
wip_build=$(q "SELECT json_extract(build, '$.key') || ' ' || json_extract(build, '$.sha256') FROM variants WHERE run_id = 3 AND name = 'wip'")
[[ ${wip_build#* } != "$stale" ]] || fail "the tree's stale libtiny.so was taken for the build's"
expect_contains "$(cat "$CACHE/${wip_build%% *}/build.log")" "cc -O2 -shared -fPIC -o libtiny.so" "the build compiled"
rm "$REPO/libtiny.so"
expect_eq "$(q "SELECT json_extract(build, '$.dirty') || ' ' || json_extract(build, '$.describe') FROM variants WHERE run_id = 3 AND name = 'wip'")" \
    "1 v2-dirty" "dirty recorded"
expect_eq "$(ls "$CACHE" | wc -l)" 3 "the dirty tree's entry"
run_alloclab 0 run "$WORK/wip.yaml" --quiet
expect_contains "$ERR" "wip: $REPO at v2-dirty: built before" "the same dirty tree, from the cache"
echo "/* another change */" >>"$REPO/tinyalloc.c"
run_alloclab 0 run "$WORK/wip.yaml" --quiet
expect_contains "$ERR" "wip: $REPO at v2-dirty: built in" "another change, built again"
expect_eq "$(ls "$CACHE" | wc -l)" 4 "a new entry for the new change"
git_in checkout -q -- tinyalloc.c

# One variant followed from revision to revision (a spec naming a branch, or edited): compare
# and history put the revisions side by side; a new revision is what is compared, not what
# makes two runs NOT COMPARABLE.
cat >"$WORK/track.yaml" <<YAML
experiment: tiny-track
command: ["$WORKLOAD", churn, "20000"]
allocators:
  glibc: {}
  dev: {build: {source: tiny, rev: v1}}
samples: 3
YAML
run_alloclab 0 run "$WORK/track.yaml" --quiet
first=$(q "SELECT max(id) FROM runs")
sed -i 's/rev: v1/rev: v2/' "$WORK/track.yaml"
run_alloclab 0 run "$WORK/track.yaml" --quiet
second=$(q "SELECT max(id) FROM runs")
v1=$(git_in rev-parse --short=7 v1)
v2=$(git_in rev-parse --short=7 v2)
run_alloclab 0 compare "$first" "$second"
expect_contains "$OUT" "comparable: same host fingerprint, allocator builds, spec (but for the revisions built), cells and variants" "compare: comparable"
expect_contains "$OUT" "built from source at other revisions (what is compared):
  dev: v1 ($v1) -> v2 ($v2)" "compare: the revisions"
run_alloclab 0 history tiny-track --variant dev
expect_contains "$OUT" "run  revision      started" "history: a revision column"
expect_contains "$OUT" "$first    v1 ($v1)" "history: the first run's revision"
expect_contains "$OUT" "$second    v2 ($v2)" "history: the second run's revision"
# A build set up otherwise (other commands) is not the same experiment.
sed -i 's/rev: v2}/rev: v2, commands: [make libtiny.so]}/' "$WORK/track.yaml"
run_alloclab 0 run "$WORK/track.yaml" --quiet
run_alloclab 7 compare "$second" "$(q "SELECT max(id) FROM runs")"
expect_contains "$OUT" "NOT COMPARABLE" "another build setup"
expect_contains "$OUT" "allocator build of dev: $REPO " "what differs: the build"
expect_contains "$OUT" '-> '"$REPO"' ["make libtiny.so"] libtiny.so' "the other commands"

# A revision that does not build: its variant is excluded with build-failed and the log's
# tail, the other is measured, the whole log is kept, nothing of it is cached.
echo "this is not C" >>"$REPO/tinyalloc.c"
git_in commit -qam "broken"
git_in tag broken
sed -i 's/rev: v2, output: libtiny.so/rev: broken/' "$WORK/ab.yaml"
entries=$(ls -d "$CACHE"/*/ | wc -l)
# What a killed alloclab left of a build (older than a week) goes with the next build; a
# scratch that may be another alloclab's build stays.
mkdir "$CACHE/.tmp-killed" "$CACHE/.tmp-running"
touch -d "8 days ago" "$CACHE/.tmp-killed"
run_alloclab 9 run "$WORK/ab.yaml" --quiet
expect_contains "$ERR" "new: $REPO at broken: build failed; the variant is excluded" "the failure said"
reason=$(q "SELECT DISTINCT reason FROM exclusions WHERE run_id = 9")
expect_contains "$reason" 'build-failed: `make -j"$(nproc)"` failed: exit code 2: ' "the reason's start"
expect_contains "$reason" "tinyalloc.c" "the reason holds the log's tail"
expect_contains "$reason" "error:" "the compiler's error"
log=${reason##*whole log: }
log=${log%)}
[[ -s $log ]] || fail "the whole log $log is not there"
expect_eq "$(q "SELECT count(*) FROM samples s JOIN variants v ON v.id = s.variant_id WHERE s.run_id = 9 AND v.name = 'old' AND s.status = 'ok'")" \
    5 "old measured beside the failed build"
expect_eq "$(ls -d "$CACHE"/*/ | wc -l)" "$entries" "no cache entry for the failed build"
[[ ! -e $CACHE/.tmp-killed && -d $CACHE/.tmp-running ]] || fail "stale scratch: $(ls -a "$CACHE")"
rmdir "$CACHE/.tmp-running"

# A revision that does not exist: the spec's error at its line and column, nothing written.
sed -i 's/rev: broken/rev: v9/' "$WORK/ab.yaml"
runs=$(q "SELECT count(*) FROM runs")
run_alloclab 4 run "$WORK/ab.yaml" --quiet
expect_eq "$ERR" "$WORK/ab.yaml:5:36: variant new: build: rev v9 is not a commit of $REPO" "no such revision"
expect_eq "$(q "SELECT count(*) FROM runs")" "$runs" "nothing recorded"
[[ $ERR != *"built"* ]] || fail "built before the spec's error was known: $ERR"

# A directory inside a repository is built as its own tree; the compiler CC names and the build
# variables are recorded.
MONO="$WORK/mono"
mkdir -p "$MONO/alloc"
git_in show v1:tinyalloc.c >"$MONO/alloc/tinyalloc.c"
git_in show v1:Makefile >"$MONO/alloc/Makefile"
echo "docs" >"$MONO/README"
git -C "$MONO" init -q
git -C "$MONO" add .
git -C "$MONO" -c user.name=test -c user.email=test@example.org commit -qm mono
git -C "$MONO" tag m1
cat >"$WORK/mono.yaml" <<YAML
experiment: tiny-mono
command: ["$WORKLOAD", churn, "20000"]
allocators:
  glibc: {}
  sub: {build: {source: mono/alloc, rev: m1}}
samples: 3
YAML
CC=gcc CFLAGS=-O1 run_alloclab 0 run "$WORK/mono.yaml" --quiet
expect_contains "$ERR" "sub: $MONO/alloc at m1: built in" "a subdirectory built"
expect_eq "$(q "SELECT json_extract(build, '$.subdir') || ' ' || json_extract(build, '$.tree') || ' ' || json_extract(build, '$.compiler') || ' ' || json_extract(build, '$.variables') FROM variants WHERE name = 'sub'")" \
    "alloc $(git -C "$MONO" rev-parse m1:alloc) $(gcc --version | head -1) {\"CC\":\"gcc\",\"CFLAGS\":\"-O1\"}" "the subdirectory's tree, the compiler, the variables"
# A directory given as a file to preload says what to write instead.
run_alloclab 4 quick --quiet -a glibc,"$REPO" -- true
expect_contains "$ERR" "cannot preload $REPO: Is a directory (to build an allocator from it: build: {source: ...}, or quick -a NAME=DIR@REV)" "a directory to preload"

# quick takes SOURCE@REV as an allocator: the same builds, from the cache.
run_alloclab 0 quick --quiet --samples 3 -a old=tiny@v1,tiny@v2 -- "$WORKLOAD" churn 20000
expect_contains "$ERR" "old: $REPO at v1: built before" "quick: old from the cache"
expect_contains "$ERR" "tiny-v2: $REPO at v2: built" "quick: a variant named after the tree and revision"
expect_contains "$OUT" "allocators: old=libtiny.so v1, tiny-v2=libtiny.so v2" "quick's allocators"
# SOURCE@: the tree as it is.
git_in show v1:tinyalloc.c >"$REPO/tinyalloc.c" # HEAD is the broken commit
echo "/* quick's change */" >>"$REPO/tinyalloc.c"
run_alloclab 0 quick --quiet --samples 3 -a glibc,tiny@ -- "$WORKLOAD" churn 20000
expect_contains "$ERR" "tiny-tree: $REPO at " "the tree as it is, named tree"
expect_contains "$ERR" "-dirty: built in" "... with its change"
git_in checkout -q -- tinyalloc.c

echo "build: ok"
