#!/bin/bash
# Children get an environment built from empty: allocator settings of the caller never leak
# in, the variant's own do, and LD_PRELOAD is set only for the variant that preloads.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/spec.yaml" <<YAML
experiment: env
command: ["$WORKLOAD", env, "$WORK/glibc.env"]
env: {SPEC_VAR: "spec"}
allocators:
  glibc: {}
  jemalloc: {preload: jemalloc, env: {MALLOC_CONF: "narenas:2"}, command: ["$WORKLOAD", env, "$WORK/jemalloc.env"]}
samples: 1
warmup: 0
YAML

MALLOC_CONF=evil LD_PRELOAD= LD_LIBRARY_PATH=/evil GLIBC_TUNABLES=glibc.malloc.check=3 \
    MIMALLOC_SHOW_STATS=1 SECRET=1 run_alloclab 0 run "$WORK/spec.yaml" --quiet

for v in glibc jemalloc; do
    env_file="$WORK/$v.env"
    for leak in MALLOC_CONF=evil LD_LIBRARY_PATH GLIBC_TUNABLES MIMALLOC_SHOW_STATS SECRET; do
        grep -q "^$leak" "$env_file" && fail "$v: $leak leaked into the child"
    done
    grep -qx "SPEC_VAR=spec" "$env_file" || fail "$v: spec env missing"
    grep -qx "ALLOCLAB_METRICS_FD=3" "$env_file" || fail "$v: metrics fd missing"
    grep -q "^PATH=" "$env_file" || fail "$v: PATH missing"
done
grep -q "^LD_PRELOAD" "$WORK/glibc.env" && fail "glibc child got LD_PRELOAD"
grep -qx "LD_PRELOAD=.*/libjemalloc.so.2" "$WORK/jemalloc.env" || fail "jemalloc child lacks its LD_PRELOAD"
grep -qx "MALLOC_CONF=narenas:2" "$WORK/jemalloc.env" || fail "jemalloc child lacks its MALLOC_CONF"

# Equal environments: each child's strings plus pointers take the same room on its stack, so
# the two variants differ in what they set, not in where their stack starts.
stack_size() {
    awk '{ size += length($0) + 1 + 8; n++ } END { print size + 8 }' "$1"
}
grep -q "^ALLOCLAB_PAD=" "$WORK/glibc.env" || fail "no padding"
expect_eq "$(stack_size "$WORK/glibc.env")" "$(stack_size "$WORK/jemalloc.env")" "equal environment sizes"

# env_offset: random: one random shift per round, the same for every variant of the round, and
# recorded with each sample; the untimed smoke runs keep the plain size (probe: never, so that
# they have the timed runs' environment: a probed one is padded to a size of its own).
cat >"$WORK/offset.yaml" <<YAML
experiment: offset
command: ["$WORKLOAD", envsize]
allocators:
  glibc: {}
  jemalloc: {preload: jemalloc, env: {MALLOC_CONF: "narenas:2"}}
metric: reported:env_bytes
samples: 6
warmup: 1
env_offset: random
probe: never
YAML
run_alloclab 0 run "$WORK/offset.yaml" --quiet
sizes() { # PHASE: per round, the distinct env_bytes of its variants and the recorded offset
    q "SELECT s.round, count(DISTINCT m.value), min(m.value), count(DISTINCT s.env_offset), min(s.env_offset)
       FROM samples s JOIN sample_metrics m ON m.sample_id = s.id AND m.name = 'env_bytes'
       WHERE s.run_id = (SELECT max(id) FROM runs) AND s.phase = '$1' GROUP BY s.round ORDER BY s.round"
}
smoke=$(sizes smoke)
expect_eq "$(cut -d'|' -f2,4 <<<"$smoke")" "1|0" "smoke runs: equal, not shifted"
base=$(cut -d'|' -f3 <<<"$smoke" | cut -d. -f1)
while IFS='|' read -r round distinct bytes offsets offset; do
    expect_eq "$distinct|$offsets" "1|1" "round $round: one size and one offset for both variants"
    expect_eq "${bytes%.*}" "$((base + offset))" "round $round: shifted by the recorded offset"
done <<<"$(sizes sample)"
(( $(cut -d'|' -f5 <<<"$(sizes sample)" | sort -u | wc -l) > 1 )) || fail "the offset never changed"
expect_eq "$(q "SELECT env_offset FROM runs WHERE id = (SELECT max(id) FROM runs)")" random "recorded per run"

# A variant with 200 KB of environment beside one with none: the small one's pad is split into
# variables below the kernel's limit on one (in one variable, its execve() failed with E2BIG),
# and the two children's environments still take the same room.
long=$(head -c 100000 /dev/zero | tr '\0' v)
cat >"$WORK/long.yaml" <<YAML
experiment: long-env
command: ["$WORKLOAD", env, "$WORK/{who}.env"]
params: {who: [small], value: ["$long"]}
allocators:
  glibc: {}
  big: {env: {A: "{value}", B: "{value}"}, command: ["$WORKLOAD", env, "$WORK/big.env"]}
samples: 2
warmup: 0
probe: never
YAML
run_alloclab 0 run "$WORK/long.yaml" --quiet
expect_eq "$(q "SELECT group_concat(DISTINCT status) FROM samples WHERE run_id = (SELECT max(id) FROM runs)")" ok \
    "samples of a 200 KB environment and of its padded neighbour"
expect_eq "$(stack_size "$WORK/small.env")" "$(stack_size "$WORK/big.env")" "equal sizes with a pad over 128 KiB"
(( $(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$WORK/small.env") < 131072 )) ||
    fail "a pad variable over MAX_ARG_STRLEN"
exit 0
