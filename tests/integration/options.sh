#!/bin/bash
# Allocator options the allocator does not know would be ignored without a word: a MIMALLOC_
# name that Debian's mimalloc 2.0.9 lacks (arena_eager_commit came with 2.1), a misspelt
# TCMALLOC_ flag, a GLIBC_TUNABLES entry the loader has no tunable for. run marks such a variant
# config-rejected naming the option; check refuses the spec; known options of each pass.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/spec.yaml" <<YAML
experiment: options
command: ["$WORKLOAD", which]
allocators:
  glibc: {}
  mi: {preload: mimalloc, env: {MIMALLOC_ARENA_EAGER_COMMIT: "1"}}
  mi_ok: {preload: mimalloc, env: {MIMALLOC_EAGER_COMMIT: "1", MIMALLOC_VERBOSE: "0"}}
  tc: {preload: tcmalloc_minimal, env: {TCMALLOC_RELEASE_RATIO: "2"}}
  tc_ok: {preload: tcmalloc_minimal, env: {TCMALLOC_RELEASE_RATE: "2", TCMALLOC_AGGRESSIVE_DECOMMIT: "true"}}
  tunable: {env: {GLIBC_TUNABLES: "glibc.malloc.arena_max=2:glibc.malloc.arena_count=1"}}
  tunable_ok: {env: {GLIBC_TUNABLES: "glibc.malloc.arena_max=2:glibc.malloc.tcache_count=0"}}
samples: 2
YAML

run_alloclab 1 run "$WORK/spec.yaml" --quiet
mimalloc=$(q "SELECT path FROM allocators WHERE name = 'mimalloc'")
tcmalloc=$(q "SELECT path FROM allocators WHERE name = 'tcmalloc_minimal'")
expect_eq "$(q "SELECT v.name, e.reason FROM exclusions e JOIN variants v ON v.id = e.variant_id ORDER BY v.position")" \
    "mi|config-rejected: MIMALLOC_ARENA_EAGER_COMMIT is not an option of $mimalloc (version $(q "SELECT version FROM allocators WHERE name = 'mimalloc'")): it would be ignored
tc|config-rejected: TCMALLOC_RELEASE_RATIO is not an option of $tcmalloc (version $(q "SELECT version FROM allocators WHERE name = 'tcmalloc_minimal'")): it would be ignored
tunable|config-rejected: GLIBC_TUNABLES entry glibc.malloc.arena_count is not a tunable of $(ldd "$WORKLOAD" | awk '/ld-linux/ {print $1}'): it would be ignored" \
    "the unknown options, each named, and nothing else"
expect_eq "$(q "SELECT count(*) FROM samples s JOIN variants v ON v.id = s.variant_id
                WHERE v.name IN ('mi_ok', 'tc_ok', 'tunable_ok') AND s.phase = 'sample' AND s.status = 'ok'")" 6 \
    "known options measured"

run_alloclab 4 check "$WORK/spec.yaml"
expect_contains "$ERR" "variant mi: MIMALLOC_ARENA_EAGER_COMMIT is not an option of $mimalloc" "check names the option"
sed -i -e '/^  mi:/d' -e '/^  tc:/d' "$WORK/spec.yaml"
run_alloclab 4 check "$WORK/spec.yaml"
expect_contains "$ERR" "variant tunable: GLIBC_TUNABLES entry glibc.malloc.arena_count is not a tunable of" "check: tunables"
sed -i '/^  tunable:/d' "$WORK/spec.yaml"
run_alloclab 0 check "$WORK/spec.yaml"

# census says it too, for the options in the environment it runs the command in.
MIMALLOC_ARENA_EAGER_COMMIT=1 run_alloclab 0 census --preload mimalloc -- "$WORKLOAD" which
expect_contains "$ERR" "alloclab census: warning: MIMALLOC_ARENA_EAGER_COMMIT is not an option of $mimalloc" "census warns"
MIMALLOC_EAGER_COMMIT=1 run_alloclab 0 census --preload mimalloc -- "$WORKLOAD" which
[[ $ERR != *warning* ]] || fail "census warned about a known option: $ERR"
