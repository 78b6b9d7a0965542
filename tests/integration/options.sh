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

run_alloclab 9 run "$WORK/spec.yaml" --quiet
mimalloc=$(q "SELECT path FROM allocators WHERE name = 'mimalloc'")
tcmalloc=$(q "SELECT path FROM allocators WHERE name = 'tcmalloc_minimal'")
expect_eq "$(q "SELECT v.name, e.reason FROM exclusions e JOIN variants v ON v.id = e.variant_id ORDER BY v.position")" \
    "mi|config-rejected: MIMALLOC_ARENA_EAGER_COMMIT is not an option of $mimalloc (version $(q "SELECT version FROM allocators WHERE name = 'mimalloc'")): it would be ignored
tc|config-rejected: TCMALLOC_RELEASE_RATIO (did you mean TCMALLOC_RELEASE_RATE?) is not an option of $tcmalloc (version $(q "SELECT version FROM allocators WHERE name = 'tcmalloc_minimal'")): it would be ignored
tunable|config-rejected: GLIBC_TUNABLES entry glibc.malloc.arena_count is not a tunable of $(ldd "$WORKLOAD" | awk '/ld-linux/ {print $1}'): it would be ignored" \
    "the unknown options, each named, and nothing else"
expect_eq "$(q "SELECT count(*) FROM samples s JOIN variants v ON v.id = s.variant_id
                WHERE v.name IN ('mi_ok', 'tc_ok', 'tunable_ok') AND s.phase = 'sample' AND s.status = 'ok'")" 6 \
    "known options measured"

run_alloclab 4 check "$WORK/spec.yaml"
# Each at the line and column of the variable, as a spec's problems are given.
expect_contains "$ERR" "$WORK/spec.yaml:5:33: variant mi: MIMALLOC_ARENA_EAGER_COMMIT is not an option of $mimalloc" \
    "check names the option where the spec sets it"
expect_contains "$ERR" "$WORK/spec.yaml:7:41: variant tc: TCMALLOC_RELEASE_RATIO (did you mean TCMALLOC_RELEASE_RATE?) is not an option of" "check: TCMALLOC_"
expect_contains "$ERR" "$WORK/spec.yaml:9:19: variant tunable: GLIBC_TUNABLES entry glibc.malloc.arena_count" "check: a tunable"
sed -i -e '/^  mi:/d' -e '/^  tc:/d' "$WORK/spec.yaml"
run_alloclab 4 check "$WORK/spec.yaml"
expect_contains "$ERR" "variant tunable: GLIBC_TUNABLES entry glibc.malloc.arena_count is not a tunable of" "check: tunables"
sed -i '/^  tunable:/d' "$WORK/spec.yaml"
run_alloclab 0 check "$WORK/spec.yaml"

# Names are matched whole, against what the reader lists: mimalloc's option table (its
# MIMALLOC_VERBOSE=1 listing), the loader's --list-tunables. Each of these was found as the tail
# of a known name ("stats" of show_stats, "malloc.arena_max" of glibc.malloc.arena_max) and
# measured as if valid; page_reset and decommit_delay, whose strings the linker keeps only as
# the tails of abandoned_page_reset and segment_decommit_delay, are known. check names every
# bad variant, not the first.
cat >"$WORK/exact.yaml" <<YAML
experiment: exact
command: ["$WORKLOAD", which]
allocators:
  glibc: {}
  stats: {preload: mimalloc, env: {MIMALLOC_STATS: "1", MIMALLOC_ERRORS: "1"}}
  commit: {preload: mimalloc, env: {MIMALLOC_COMMIT: "1"}}
  malloc: {preload: mimalloc, env: {MIMALLOC_MALLOC: "1"}}
  tails: {preload: mimalloc, env: {MIMALLOC_PAGE_RESET: "0", MIMALLOC_DECOMMIT_DELAY: "10", MIMALLOC_SHOW_STATS: "0"}}
  arena: {env: {GLIBC_TUNABLES: "malloc.arena_max=2"}}
  near: {preload: mimalloc, env: {MIMALLOC_SHOW_STAT: "1"}}
  neartc: {preload: tcmalloc_minimal, env: {TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTE: "1048576"}}
samples: 2
YAML
run_alloclab 4 check "$WORK/exact.yaml"
expect_contains "$ERR" "variant stats: MIMALLOC_STATS, MIMALLOC_ERRORS are not options of $mimalloc" "stats, errors"
expect_contains "$ERR" "variant commit: MIMALLOC_COMMIT is not an option of" "commit"
expect_contains "$ERR" "variant malloc: MIMALLOC_MALLOC is not an option of" "malloc"
expect_contains "$ERR" "variant arena: GLIBC_TUNABLES entry malloc.arena_max (did you mean glibc.malloc.arena_max?) is not a tunable of" "a tunable without glibc., and its whole name"
# A name one or two letters off names the one it may have meant, from the allocator's own list.
expect_contains "$ERR" "variant near: MIMALLOC_SHOW_STAT (did you mean MIMALLOC_SHOW_STATS?) is not an option of" \
    "mimalloc: the near name from its option table"
expect_contains "$ERR" "variant neartc: TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTE (did you mean TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES?)" \
    "tcmalloc: the near name among its getenv names"
[[ $ERR != *"variant tails"* ]] || fail "known names rejected: $ERR"
run_alloclab 9 run "$WORK/exact.yaml" --quiet
expect_eq "$(q "SELECT group_concat(v.name, ' ') FROM exclusions e JOIN variants v ON v.id = e.variant_id
                WHERE e.run_id = (SELECT max(id) FROM runs) ORDER BY v.position")" "stats commit malloc arena near neartc" \
    "run excludes exactly those"

# census says it too, for the options in the environment it runs the command in.
MIMALLOC_ARENA_EAGER_COMMIT=1 run_alloclab 1 census --preload mimalloc -- "$WORKLOAD" which
expect_contains "$ERR" "alloclab census: warning: MIMALLOC_ARENA_EAGER_COMMIT is not an option of $mimalloc" "census warns"
MIMALLOC_EAGER_COMMIT=1 run_alloclab 0 census --preload mimalloc -- "$WORKLOAD" which
[[ $ERR != *warning* ]] || fail "census warned about a known option: $ERR"
# A tunable the loader does not have is not shown as effective; a MALLOC_CONF jemalloc rejects is
# named in jemalloc's words, and census exits 1 (a warning).
GLIBC_TUNABLES=malloc.arena_max=2:glibc.malloc.tcache_count=0 run_alloclab 1 census -- "$WORKLOAD" which
expect_contains "$OUT" "GLIBC_TUNABLES glibc.malloc.tcache_count=0 (ignored, not tunables of the loader: malloc.arena_max=2)" \
    "census: an ignored tunable is not an effective option"
MALLOC_CONF=narenaz:1 run_alloclab 1 census --preload jemalloc -- "$WORKLOAD" which
expect_contains "$ERR" "alloclab census: warning: the allocator rejected its configuration: <jemalloc>: Invalid conf pair: narenaz:1" \
    "census: a MALLOC_CONF typo"
MALLOC_CONF=narenaz:1 run_alloclab 1 census --preload jemalloc --json -- "$WORKLOAD" which
expect_contains "$OUT" '"config_complaint": "<jemalloc>: Invalid conf pair: narenaz:1 (did you mean narenas?)"' "census JSON"
# census warns, and exits 1, for an option the allocator does not know too.
MIMALLOC_STATS=1 run_alloclab 1 census --preload mimalloc -- "$WORKLOAD" which
expect_contains "$ERR" "alloclab census: warning: MIMALLOC_STATS is not an option of" "census: exit 1 for an unknown option"

# check asks the allocator itself (a child of /bin/true with the variant's environment): a
# MALLOC_CONF jemalloc rejects fails check as it would fail the smoke run; with abort_conf:true
# jemalloc aborts, and the smoke run calls that config-rejected, not a crash.
cat >"$WORK/conf.yaml" <<YAML
experiment: conf
command: ["$WORKLOAD", which]
allocators:
  glibc: {}
  typo: {preload: jemalloc, env: {MALLOC_CONF: "narena:2"}}
  short: {preload: jemalloc, env: {MALLOC_CONF: "dirty_decay:1000"}}
  aborts: {preload: jemalloc, env: {MALLOC_CONF: "abort_conf:true,narenas:banana"}}
samples: 2
warmup: 0
YAML
run_alloclab 4 check "$WORK/conf.yaml"
expect_contains "$ERR" "$WORK/conf.yaml:5:35: variant typo: the allocator rejects its configuration: <jemalloc>: Invalid conf pair: narena:2" \
    "check: a MALLOC_CONF typo, where it is written"
expect_contains "$ERR" "variant typo: the allocator rejects its configuration: <jemalloc>: Invalid conf pair: narena:2 (did you mean narenas?)" \
    "check: the key jemalloc lists that the typo may have meant"
expect_contains "$ERR" "variant short: the allocator rejects its configuration: <jemalloc>: Invalid conf pair: dirty_decay:1000 (did you mean dirty_decay_ms?)" \
    "check: a key without its unit, the whole key"
expect_contains "$ERR" "variant aborts: the allocator rejects its configuration: <jemalloc>: Invalid conf value: narenas:banana" \
    "check: every bad variant"
run_alloclab 9 run "$WORK/conf.yaml" --quiet
expect_contains "$(q "SELECT e.reason FROM exclusions e JOIN variants v ON v.id = e.variant_id
                      WHERE e.run_id = (SELECT max(id) FROM runs) AND v.name = 'aborts'")" \
    "config-rejected: the allocator rejected its configuration and killed the program (signal 6): <jemalloc>: Invalid conf value" \
    "abort_conf: config-rejected, not a crash"

# A setting another allocator reads has no effect on its variant: warned where it is written, for
# a variant's own env, and for the experiment's env (shared by every variant) only when no
# variant uses that allocator. Warnings, not refusals: check passes, the run measures.
cat >"$WORK/foreign.yaml" <<YAML
experiment: foreign
command: ["$WORKLOAD", which]
env: {MIMALLOC_EAGER_COMMIT: "1", TCMALLOC_RELEASE_RATE: "2"}
allocators:
  glibc: {env: {MALLOC_CONF: "narenas:1", MALLOC_ARENA_MAX: "2"}}
  mimalloc: {preload: mimalloc}
  jemalloc: {preload: jemalloc, env: {MALLOC_ARENA_MAX: "2", GLIBC_TUNABLES: "glibc.malloc.arena_max=2", MALLOC_CONF: "narenas:1"}}
samples: 2
warmup: 0
YAML
run_alloclab 0 check "$WORK/foreign.yaml"
expect_eq "$(grep "configures" <<<"$ERR")" "$WORK/foreign.yaml:5:17: warning: variant glibc: MALLOC_CONF=narenas:1 configures jemalloc, not glibc: it has no effect on this variant
$WORK/foreign.yaml:7:39: warning: variant jemalloc: MALLOC_ARENA_MAX=2 configures glibc, not jemalloc: it has no effect on this variant
$WORK/foreign.yaml:7:62: warning: variant jemalloc: GLIBC_TUNABLES=glibc.malloc.arena_max=2 configures glibc, not jemalloc: it has no effect on this variant
$WORK/foreign.yaml:3:35: warning: TCMALLOC_RELEASE_RATE=2 configures tcmalloc, which no variant uses: it has no effect" \
    "check: every foreign setting, and nothing the variant's allocator reads"
run_alloclab 0 run "$WORK/foreign.yaml" --quiet
expect_contains "$ERR" "warning: variant jemalloc: MALLOC_ARENA_MAX=2 configures glibc, not jemalloc" "run warns too"
run_alloclab 0 quick -a glibc,jemalloc -e jemalloc:MALLOC_ARENA_MAX=2 -r 2 -w 0 --quiet -- "$WORKLOAD" which
expect_contains "$ERR" "alloclab quick: warning: variant jemalloc: MALLOC_ARENA_MAX=2 configures glibc, not jemalloc" \
    "quick warns without a position in a spec the user never wrote"

# Scudo reads SCUDO_OPTIONS at its first allocation and warns of a flag it does not know: check
# (whose child now allocates) and census say so in its words (on 7fba13f both passed it).
if "$ALLOCLAB" allocators --format json | python3 -c 'import json, sys
sys.exit(0 if any(a["name"] == "scudo" and a["installed"] for a in json.load(sys.stdin)) else 1)'; then
    cat >"$WORK/scudo.yaml" <<YAML
experiment: scudo
command: ["$WORKLOAD", which]
allocators:
  glibc: {}
  scudo: {preload: scudo, env: {SCUDO_OPTIONS: "bogus_opt=1"}}
samples: 2
YAML
    run_alloclab 4 check "$WORK/scudo.yaml"
    expect_contains "$ERR" "$WORK/scudo.yaml:5:32: variant scudo: the allocator rejects its configuration: Scudo WARNING: found 1 unrecognized flag(s): bogus_opt=1" \
        "check: a Scudo flag it does not know"
    SCUDO_OPTIONS=bogus_opt=1 run_alloclab 1 census --preload scudo -- "$WORKLOAD" which
    expect_contains "$ERR" "rejected its configuration: Scudo WARNING: found 1 unrecognized flag(s): bogus_opt=1" "census"
else
    skip_part "Scudo's options: needs libclang-rt-14-dev"
fi
