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
exit 0
