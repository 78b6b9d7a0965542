#!/bin/bash
# Smoke runs under the probe: the effective allocator, its version and options are stored per
# variant and shown by `alloclab show --allocators`; a misspelled jemalloc option is
# config-rejected; a static binary, a program with its own malloc and a setuid copy are
# preload-ineffective at pre-flight; probe: always stores counters per sample, never none.
. "$(dirname "$0")/lib.sh"

cp "$WORKLOAD" "$WORK/setuid-workload"
chmod u+s "$WORK/setuid-workload"
cat >"$WORK/spec.yaml" <<YAML
experiment: probe
command: ["$WORKLOAD", which]
allocators:
  glibc: {}
  jemalloc: {preload: jemalloc, env: {MALLOC_CONF: "dirty_decay_ms:500,background_thread:true"}}
  typo: {preload: jemalloc, env: {MALLOC_CONF: "dirty_decay_msec:500"}}
  static: {preload: mimalloc, command: ["${WORKLOAD}-static", which]}
  own: {preload: tcmalloc_minimal, command: ["${WORKLOAD}-ownmalloc"]}
  setuid: {preload: jemalloc, command: ["$WORK/setuid-workload", which]}
  mimalloc: {preload: mimalloc, env: {MIMALLOC_ALLOW_DECOMMIT: "0"}}
samples: 2
verify: none
YAML

run_alloclab 1 run "$WORK/spec.yaml" --quiet
expect_contains "$OUT" "CONFIG-REJECTED" "typo mark"
expect_eq "$(q "SELECT v.name, e.reason FROM exclusions e JOIN variants v ON v.id = e.variant_id ORDER BY v.position")" \
    "typo|config-rejected: the allocator rejected its configuration: <jemalloc>: Invalid conf pair: dirty_decay_msec:500
static|preload-ineffective: pre-flight: ${WORKLOAD}-static is statically linked: nothing can be preloaded into it
own|preload-ineffective: pre-flight: ${WORKLOAD}-ownmalloc defines its own malloc: its calls never reach a preloaded allocator
setuid|preload-ineffective: pre-flight: $WORK/setuid-workload is setuid: the loader runs it in secure-execution mode and ignores LD_PRELOAD" \
    "exclusions"
expect_eq "$(q "SELECT v.name, p.family, p.allocator_copies FROM probe_reports p JOIN samples s ON s.id = p.sample_id
                JOIN variants v ON v.id = s.variant_id WHERE s.status = 'ok' ORDER BY v.position")" \
    "glibc|glibc|0
jemalloc|jemalloc|1
mimalloc|mimalloc|1" "effective allocators of the smoke runs"
expect_eq "$(q "SELECT json_extract(p.report, '$.effective.options.dirty_decay_ms'), json_extract(p.report, '$.effective.options.background_thread')
                FROM probe_reports p JOIN samples s ON s.id = p.sample_id JOIN variants v ON v.id = s.variant_id
                WHERE v.name = 'jemalloc'")" "500|true" "jemalloc effective options"
expect_eq "$(q "SELECT count(*) FROM probe_reports p JOIN samples s ON s.id = p.sample_id WHERE s.phase <> 'smoke'")" \
    0 "timed samples run without the probe by default"
expect_eq "$(q "SELECT probe FROM runs")" smoke "probe mode"

run_alloclab 0 show 1 --allocators
expect_contains "$OUT" "jemalloc: jemalloc" "variant header"
expect_contains "$OUT" "dirty_decay_ms         500" "jemalloc option shown"
expect_contains "$OUT" "allow_decommit          0" "mimalloc option shown"
expect_contains "$OUT" "effective allocator: /lib/x86_64-linux-gnu/libc.so.6 (glibc" "glibc shown"

# probe: always stores counters for every sample; probe: never stores none.
cat >"$WORK/always.yaml" <<YAML
experiment: always
command: ["$WORKLOAD", threads, "4", "1000"]
allocators: {glibc: {}, mimalloc: {preload: mimalloc}}
samples: 3
probe: always
YAML
run_alloclab 0 run "$WORK/always.yaml" --quiet
expect_eq "$(q "SELECT count(*), min(json_extract(p.report, '$.counters.calls.aligned_alloc')), max(json_extract(p.report, '$.counters.calls.aligned_alloc'))
                FROM probe_reports p JOIN samples s ON s.id = p.sample_id WHERE s.run_id = 2")" \
    "10|4000|4000" "counters of every sample"
# Live bytes cost a size query per call: only the untimed smoke run measures them.
expect_eq "$(q "SELECT s.phase, count(*), count(json_extract(p.report, '$.counters.peak_live_bytes')),
                       min(json_extract(p.report, '$.counters.peak_live_bytes')) > 0
                FROM probe_reports p JOIN samples s ON s.id = p.sample_id WHERE s.run_id = 2
                GROUP BY s.phase ORDER BY s.phase")" \
    "sample|6|0|
smoke|2|2|1
warmup|2|0|" "live bytes in smoke runs only"
# Version, options and census cost start-up time (jemalloc's first mallctl builds its
# statistics): smoke runs only. Every timed report still names the allocator that served malloc.
expect_eq "$(q "SELECT s.phase, v.name, p.family, count(p.version), count(p.allocator_copies),
                       json_type(p.report, '$.census'), json_type(p.report, '$.effective.options')
                FROM probe_reports p JOIN samples s ON s.id = p.sample_id JOIN variants v ON v.id = s.variant_id
                WHERE s.run_id = 2 GROUP BY s.phase, v.name ORDER BY s.phase, v.position")" \
    "sample|glibc|glibc|0|0|null|null
sample|mimalloc|mimalloc|0|0|null|null
smoke|glibc|glibc|1|1|array|object
smoke|mimalloc|mimalloc|1|1|array|object
warmup|glibc|glibc|0|0|null|null
warmup|mimalloc|mimalloc|0|0|null|null" "identity in smoke runs only"
sed -i 's/probe: always/probe: never/' "$WORK/always.yaml"
run_alloclab 0 run "$WORK/always.yaml" --quiet
expect_eq "$(q "SELECT count(*) FROM probe_reports p JOIN samples s ON s.id = p.sample_id WHERE s.run_id = 3")" 0 "probe: never"

# A glibc variant of a program with its own malloc: glibc does not serve it either, and the
# smoke run says who does.
cat >"$WORK/own.yaml" <<YAML
experiment: own
command: ["${WORKLOAD}-ownmalloc"]
allocators: {glibc: {}}
samples: 1
YAML
run_alloclab 1 run "$WORK/own.yaml" --quiet
expect_contains "$OUT" "preload-ineffective: malloc is served by ${WORKLOAD}-ownmalloc (none), not by glibc" \
    "a program's own malloc under the glibc variant"

# Forward mode: the probe loads a library privately and forwards the malloc family to its
# prefixed entry points (mimalloc's mi_, tcmalloc's tc_); a library without them is refused.
mimalloc=$(ldconfig -p | grep -o '/[^ ]*libmimalloc.so.2$' | head -1)
tcmalloc=$(ldconfig -p | grep -o '/[^ ]*libtcmalloc_minimal.so.4$' | head -1)
cat >"$WORK/forward.yaml" <<YAML
experiment: forward
command: ["$WORKLOAD", threads, "2", "1000"]
allocators:
  glibc: {}
  mi: {forward: {library: "$mimalloc", prefix: mi_}}
  tc: {forward: {library: "$tcmalloc", prefix: tc_}}
  bad: {forward: {library: "$mimalloc", prefix: nope_}}
samples: 2
YAML
run_alloclab 1 run "$WORK/forward.yaml" --quiet
expect_contains "$OUT" "FORWARD-REFUSED" "refused library"
expect_eq "$(q "SELECT e.reason FROM exclusions e JOIN variants v ON v.id = e.variant_id WHERE v.name = 'bad'")" \
    "forward-refused: forward mode refused $mimalloc: $mimalloc lacks core entry points: nope_malloc, nope_free, nope_calloc, nope_realloc, nope_posix_memalign|aligned_alloc|memalign, nope_malloc_usable_size|usable_size|malloc_size" \
    "refusal names what is missing"
# Every run of a forward variant goes through the probe: 1 smoke + 1 warmup + 2 samples each,
# all served by the forward library, all 2 x 1000 aligned allocations seen, and the loader's
# allocations during dlopen() served from the bootstrap arena.
for v in mi tc; do
    lib=$([[ $v == mi ]] && echo "$mimalloc" || echo "$tcmalloc")
    expect_eq "$(q "SELECT count(*), min(json_extract(p.report, '$.counters.calls.aligned_alloc')),
                    min(json_extract(p.report, '$.counters.bootstrap_bytes') > 0)
                    FROM probe_reports p JOIN samples s ON s.id = p.sample_id JOIN variants v ON v.id = s.variant_id
                    WHERE v.name = '$v' AND s.status = 'ok' AND p.effective_path = '$lib'")" \
        "4|2000|1" "forward mode through $v"
done
