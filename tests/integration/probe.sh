#!/bin/bash
# Smoke runs under the probe: the effective allocator, its version and options are stored per
# variant and shown by `alloclab show --allocators`; a misspelled jemalloc option is
# config-rejected; a static binary, a program with its own malloc and a setuid copy are
# preload-ineffective at pre-flight; probe: always stores a report per sample, counters counts
# every call of every sample, never stores none.
. "$(dirname "$0")/lib.sh"

# The probe needs nothing but libc. An object it needs joins every probed program's search order
# ahead of the allocator's own needs, and each symbol lookup of the loader then checks it too:
# needing ld.so (for _r_debug) cost tcmalloc's start-up 77,000 instructions.
expect_eq "$(readelf -d "$BUILD_DIR/probe/liballoclab-probe.so" | grep -o 'NEEDED.*')" \
    "NEEDED)             Shared library: [libc.so.6]" "the probe needs libc only"

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

run_alloclab 9 run "$WORK/spec.yaml" --quiet
expect_contains "$OUT" "CONFIG-REJECTED" "typo mark"
expect_eq "$(q "SELECT v.name, e.reason FROM exclusions e JOIN variants v ON v.id = e.variant_id ORDER BY v.position")" \
    "typo|config-rejected: the allocator rejected its configuration: <jemalloc>: Invalid conf pair: dirty_decay_msec:500 (did you mean dirty_decay_ms?)
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

# probe: counters counts every call of every sample; probe: never stores no report. Exact
# counts under 8 threads, in the timed runs as in the smoke run.
cat >"$WORK/always.yaml" <<YAML
experiment: always
command: ["$WORKLOAD", threads, "8", "20000"]
allocators: {glibc: {}, mimalloc: {preload: mimalloc}}
samples: 3
probe: counters
YAML
run_alloclab 0 run "$WORK/always.yaml" --quiet
# counts RUN: the run's probe reports, their fewest and most aligned_alloc calls, fewest threads
counts() {
    q "SELECT count(*), count(json_extract(p.report, '$.counters.calls.aligned_alloc')),
              min(json_extract(p.report, '$.counters.calls.aligned_alloc')),
              max(json_extract(p.report, '$.counters.calls.aligned_alloc')), min(json_extract(p.report, '$.counters.threads'))
       FROM probe_reports p JOIN samples s ON s.id = p.sample_id WHERE s.run_id = $1"
}
expect_eq "$(counts 2)" "10|10|160000|160000|9" "counters of every sample, 8 threads x 20000 aligned_alloc"
# Past the report's 64 slots the threads share the last one, through atomic additions: still
# exact.
sed -i 's/threads, "8", "20000"/threads, "100", "2000"/' "$WORK/always.yaml"
run_alloclab 0 run "$WORK/always.yaml" --quiet
expect_eq "$(counts 3)" "10|10|200000|200000|101" "counters of every sample, 100 threads x 2000 aligned_alloc"
# Bytes requested are counted with the calls; live bytes cost a size query per call: only the
# untimed smoke run measures them.
expect_eq "$(q "SELECT s.phase, count(*), count(json_extract(p.report, '$.counters.bytes_requested')),
                       min(json_extract(p.report, '$.counters.bytes_requested')) >= 160000 * 64,
                       count(json_extract(p.report, '$.counters.peak_live_bytes')),
                       min(json_extract(p.report, '$.counters.peak_live_bytes')) > 0
                FROM probe_reports p JOIN samples s ON s.id = p.sample_id WHERE s.run_id = 2
                GROUP BY s.phase ORDER BY s.phase")" \
    "sample|6|6|1|0|
smoke|2|2|1|2|1
warmup|2|2|1|0|" "live bytes in smoke runs only"
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
# Only outermost calls count: the prefixed stand-in's valloc allocates through the global malloc,
# which is the probe again (tests/workloads/prefixed-allocator.c). 1000 vallocs and their frees
# add 1000 valloc and 1000 free calls and not one malloc; a forked child's calls count too.
cat >"$WORK/nested.yaml" <<YAML
experiment: nested
command: ["$WORKLOAD", "{mode}", "{n}"]
params: {mode: [vallocs, fork], n: [0, 1000]}
allocators: {pfx: {forward: {library: "$PREFIXED", prefix: pfx_}}}
samples: 2
probe: counters
YAML
run_alloclab 0 run "$WORK/nested.yaml" --quiet
# delta FUNCTION: per phase, the fewest and most calls of FUNCTION with 1000 vallocs beyond those
# without any.
delta() {
    local x="json_extract(p.report, '$.counters.calls.$1')" n="CAST(json_extract(c.params, '$.n') AS INTEGER)"
    q "SELECT s.phase, min(CASE WHEN $n = 1000 THEN $x END) - max(CASE WHEN $n = 0 THEN $x END),
              max(CASE WHEN $n = 1000 THEN $x END) - min(CASE WHEN $n = 0 THEN $x END)
       FROM probe_reports p JOIN samples s ON s.id = p.sample_id JOIN cells c ON c.id = s.cell_id
       WHERE s.run_id = 4 AND json_extract(c.params, '$.mode') = 'vallocs' GROUP BY s.phase ORDER BY s.phase" | tr '\n' ' '
}
expect_eq "$(delta valloc)" "sample|1000|1000 smoke|1000|1000 warmup|1000|1000 " "each valloc counted once"
expect_eq "$(delta free)" "sample|1000|1000 smoke|1000|1000 warmup|1000|1000 " "each free counted once"
expect_eq "$(delta malloc)" "sample|0|0 smoke|0|0 warmup|0|0 " "the nested mallocs not counted"
expect_eq "$(q "SELECT s.phase, group_concat(DISTINCT json_extract(p.report, '$.counters.calls.valloc'))
                FROM probe_reports p JOIN samples s ON s.id = p.sample_id JOIN cells c ON c.id = s.cell_id
                WHERE s.run_id = 4 AND json_extract(c.params, '$.mode') = 'fork' GROUP BY s.phase ORDER BY s.phase" | tr '\n' ' ')" \
    "sample|200 smoke|200 warmup|200 " "a forked child's calls counted too"
# The family's documented behaviour through the probe, on its direct path (the timed samples of
# probe: always) and its slow one (the smoke run): tests/workloads/workload.c "semantics". mimalloc's and tcmalloc's
# own calloc leave errno alone on overflow: the probe checks for overflow itself.
cat >"$WORK/semantics.yaml" <<YAML
experiment: semantics
command: ["$WORKLOAD", semantics]
allocators:
  glibc: {}
  jemalloc: {preload: jemalloc}
  mimalloc: {preload: mimalloc}
  tcmalloc: {preload: tcmalloc}
samples: 2
probe: always
YAML
run_alloclab 0 run "$WORK/semantics.yaml" --quiet
expect_eq "$(q "SELECT count(*), group_concat(DISTINCT s.status) FROM samples s WHERE s.run_id = 5")" "16|ok" \
    "documented semantics under every allocator, with the probe"
# probe: always: every sample's report names the allocator that served malloc, and the process
# tree; the calls go straight to the allocator, so only the smoke run counts them.
expect_eq "$(q "SELECT s.phase, count(*), count(p.family), count(json_extract(p.report, '$.processes[0].program')),
                       count(json_extract(p.report, '$.counters.calls')), count(json_extract(p.report, '$.counters.threads'))
                FROM probe_reports p JOIN samples s ON s.id = p.sample_id
                WHERE s.run_id = 5 GROUP BY s.phase ORDER BY s.phase")" \
    "sample|8|8|8|0|0
smoke|4|4|4|4|4
warmup|4|4|4|0|0" "probe: always names the allocator of every sample and counts nothing"
# The probe adds nothing of its own to errno: the stand-in's free sets EIO, and the program sees
# it through the probe (here without a runner: direct, as in timed runs) as it would without.
expect_eq "$(LD_PRELOAD="$BUILD_DIR/probe/liballoclab-probe.so" ALLOCLAB_PROBE_FORWARD_LIBRARY="$PREFIXED" \
             ALLOCLAB_PROBE_FORWARD_PREFIX=pfx_ "$WORKLOAD" semantics)" "broken: errno == 4321" \
    "free() leaves errno as the allocator's free leaves it"

sed -i 's/probe: counters/probe: never/' "$WORK/always.yaml"
run_alloclab 0 run "$WORK/always.yaml" --quiet
expect_eq "$(q "SELECT count(*) FROM probe_reports p JOIN samples s ON s.id = p.sample_id WHERE s.run_id = 6")" 0 "probe: never"

# A glibc variant of a program with its own malloc: glibc does not serve it either, and the
# smoke run says who does.
cat >"$WORK/own.yaml" <<YAML
experiment: own
command: ["${WORKLOAD}-ownmalloc"]
allocators: {glibc: {}}
samples: 1
YAML
run_alloclab 9 run "$WORK/own.yaml" --quiet
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
run_alloclab 9 run "$WORK/forward.yaml" --quiet
expect_contains "$OUT" "FORWARD-REFUSED" "refused library"
expect_eq "$(q "SELECT e.reason FROM exclusions e JOIN variants v ON v.id = e.variant_id WHERE v.name = 'bad'")" \
    "forward-refused: forward mode refused $mimalloc: $mimalloc lacks core entry points: nope_malloc, nope_free, nope_calloc, nope_realloc, nope_posix_memalign|aligned_alloc|memalign, nope_malloc_usable_size|usable_size|malloc_size" \
    "refusal names what is missing"
# Every run of a forward variant goes through the probe: 1 smoke + 1 warmup + 2 samples each,
# all served by the forward library, the smoke run's count of the 2 x 1000 aligned
# allocations, and the loader's allocations during dlopen() served from the bootstrap arena.
for v in mi tc; do
    lib=$([[ $v == mi ]] && echo "$mimalloc" || echo "$tcmalloc")
    expect_eq "$(q "SELECT count(*), count(json_extract(p.report, '$.counters.calls.aligned_alloc')),
                    min(json_extract(p.report, '$.counters.calls.aligned_alloc')),
                    min(json_extract(p.report, '$.counters.bootstrap_bytes') > 0)
                    FROM probe_reports p JOIN samples s ON s.id = p.sample_id JOIN variants v ON v.id = s.variant_id
                    WHERE v.name = '$v' AND s.status = 'ok' AND p.effective_path = '$lib'")" \
        "4|1|2000|1" "forward mode through $v"
done
# When the program loads an object again (libm, loaded already), the loader frees some of what
# it allocated during the probe's dlopen(): blocks of the bootstrap arena reach a direct
# free(), which must keep them from the allocator (tcmalloc aborts on a pointer it does not
# own).
cat >"$WORK/reload.yaml" <<YAML
experiment: reload
command: ["$WORKLOAD", dlopen, libm.so.6]
allocators: {tc: {forward: {library: "$tcmalloc", prefix: tc_}}}
samples: 2
YAML
run_alloclab 0 run "$WORK/reload.yaml" --quiet
expect_eq "$(q "SELECT count(*), group_concat(DISTINCT s.status) FROM samples s JOIN runs r ON r.id = s.run_id
                JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'reload'")" "4|ok" \
    "bootstrap blocks freed on the direct path"

# A program that re-executes itself with an LD_PRELOAD of its own choosing runs, from then on,
# under that: the probe sees the exec, and the variant is preload-ineffective with what it was
# given and what it took (63f6da7 credited the allocator the first image had). Keeping the
# given LD_PRELOAD is fine; a child of the tree that executes a program without the probe (under
# whatever its LD_PRELOAD names) makes the variant preload-ineffective too, unless the spec's
# preload_ignore names that program (it ran unmeasured: run said nothing, census "not followed").
JEMALLOC=$(q "SELECT DISTINCT a.path FROM allocators a WHERE a.name = 'jemalloc'")
cat >"$WORK/reexec.yaml" <<YAML
experiment: reexec
command: ["$WORKLOAD", reexec, "="]
allocators:
  glibc: {}
  dropped: {preload: jemalloc, command: ["$WORKLOAD", reexec, "-"]}
  own: {command: ["$WORKLOAD", reexec, "$JEMALLOC"]}
  kept: {preload: jemalloc}
  child: {preload: jemalloc, command: [sh, -c, "LD_PRELOAD= $WORKLOAD which; $WORKLOAD which"]}
  glibc_child: {command: [sh, -c, "LD_PRELOAD= $WORKLOAD which; $WORKLOAD which"]}
samples: 1
warmup: 0
verify: none
YAML
run_alloclab 9 run "$WORK/reexec.yaml" --quiet
expect_eq "$(q "SELECT v.name, substr(e.reason, 1, 60) FROM exclusions e JOIN variants v ON v.id = e.variant_id
                JOIN runs r ON r.id = e.run_id JOIN experiments x ON x.id = r.experiment_id
                WHERE x.name = 'reexec' AND v.name <> 'child' ORDER BY v.position")" \
    "dropped|preload-ineffective: the program re-executed /proc/self/exe 
own|preload-ineffective: the program re-executed /proc/self/exe " "re-executions that change LD_PRELOAD"
expect_contains "$(q "SELECT e.reason FROM exclusions e JOIN variants v ON v.id = e.variant_id WHERE v.name = 'child'")" \
    "executed $WORKLOAD with LD_PRELOAD=, without the probe: it ran unmeasured, without the variant's $JEMALLOC" \
    "a child that drops the probe"
# The same child in the glibc variant took glibc's malloc (a dynamically linked program without
# its own, LD_PRELOAD empty): not excluded (on 7fba13f: preload-ineffective, "not under glibc",
# and the variants after it skipped for a reference that failed).
expect_eq "$(q "SELECT count(*) FROM exclusions e JOIN variants v ON v.id = e.variant_id WHERE v.name = 'glibc_child'")" 0 \
    "a child without the probe under glibc"
printf 'preload_ignore: [%s]\n' "$(basename "$WORKLOAD")" >>"$WORK/reexec.yaml"
run_alloclab 9 run "$WORK/reexec.yaml" --quiet
expect_eq "$(q "SELECT count(*) FROM exclusions e JOIN variants v ON v.id = e.variant_id
                WHERE v.name = 'child' AND e.run_id = (SELECT max(id) FROM runs)")" 0 "preload_ignore names it"
expect_contains "$(q "SELECT e.reason FROM exclusions e JOIN variants v ON v.id = e.variant_id WHERE v.name = 'own'")" \
    "with LD_PRELOAD=$JEMALLOC (it was given " "what the re-execution took"

# The process tree: the probe follows execs and children that load it too. A wrapper that
# executes the program lists both images; one that starts it as a child lists the child; a
# child that takes another allocator for most of the tree's calls makes the variant
# preload-ineffective, naming that allocator and program (63f6da7 judged the wrapper alone).
TCMALLOC=$("$ALLOCLAB" allocators --format json |
    python3 -c 'import json, sys; print(next(a["path"] for a in json.load(sys.stdin) if a["name"] == "tcmalloc"))')
cat >"$WORK/tree.yaml" <<YAML
experiment: tree
command: [sh, -c, 'exec "$WORKLOAD" vallocs 2000']
allocators:
  wrapped: {preload: jemalloc}
  spawns: {preload: jemalloc, command: [sh, -c, '"$WORKLOAD" vallocs 2000; true']}
  server: {preload: jemalloc, command: [sh, -c, '"$WORKLOAD" vallocs 2000 & wait']}
  other: {preload: jemalloc, command: [sh, -c, 'LD_PRELOAD="\${{LD_PRELOAD%%:*}}:$TCMALLOC" "$WORKLOAD" vallocs 20000; true']}
samples: 1
warmup: 0
verify: none
YAML
run_alloclab 9 run "$WORK/tree.yaml" --quiet
child_pid=$(q "SELECT json_extract(p.report, '$.processes[1].pid') FROM probe_reports p
                JOIN samples s ON s.id = p.sample_id JOIN variants v ON v.id = s.variant_id
                WHERE v.name = 'other' AND s.phase = 'smoke'")
expect_eq "$(q "SELECT v.name, e.reason FROM exclusions e JOIN variants v ON v.id = e.variant_id
                JOIN runs r ON r.id = e.run_id JOIN experiments x ON x.id = r.experiment_id
                WHERE x.name = 'tree' ORDER BY v.position" | sed -E 's/: (99|100)% of/: most of/')" \
    "other|preload-ineffective: $(readlink -f "$WORKLOAD") (pid $child_pid) ran with LD_PRELOAD=$BUILD_DIR/probe/liballoclab-probe.so:$TCMALLOC, not the variant's $BUILD_DIR/probe/liballoclab-probe.so:$JEMALLOC: malloc was served by $TCMALLOC (tcmalloc) (if it does not matter, spec key preload_ignore names it)" \
    "a child under another allocator"
# The whole tree, not most of its calls: a child that re-executes under another LD_PRELOAD (the
# measured program then ran under mimalloc in a "jemalloc" variant), a wrapper that puts another
# allocator before the probe; both named, whoever made most of the calls.
MIMALLOC=$("$ALLOCLAB" allocators --format json |
    python3 -c 'import json, sys; print(next(a["path"] for a in json.load(sys.stdin) if a["name"] == "mimalloc"))')
cat >"$WORK/foreign.yaml" <<YAML
experiment: foreign
command: [sh, -c, 'env LD_PRELOAD=$MIMALLOC "$WORKLOAD" vallocs 2000; true']
allocators:
  glibc: {}
  first: {preload: jemalloc, command: [sh, -c, 'LD_PRELOAD="$MIMALLOC:\$LD_PRELOAD" "$WORKLOAD" vallocs 2000; true']}
samples: 1
warmup: 0
verify: none
YAML
run_alloclab 9 run "$WORK/foreign.yaml" --quiet
expect_contains "$(q "SELECT e.reason FROM exclusions e JOIN variants v ON v.id = e.variant_id WHERE v.name = 'glibc'
                      AND e.run_id = (SELECT max(id) FROM runs)")" \
    "executed $WORKLOAD with LD_PRELOAD=$MIMALLOC, without the probe: it ran unmeasured, under $MIMALLOC (mimalloc), not under glibc" \
    "a child that re-executes under another allocator"
expect_contains "$(q "SELECT e.reason FROM exclusions e JOIN variants v ON v.id = e.variant_id WHERE v.name = 'first'
                      AND e.run_id = (SELECT max(id) FROM runs)")" \
    "ran with LD_PRELOAD=$MIMALLOC:" "a wrapper that puts another allocator before the probe"
run_alloclab 1 census --preload jemalloc -- sh -c "env LD_PRELOAD=$MIMALLOC \"$WORKLOAD\" which; true"
expect_contains "$ERR" "executed $WORKLOAD with LD_PRELOAD=$MIMALLOC, without the probe: what that program ran under is not shown above" \
    "census warns of a program it did not follow"
expect_contains "$OUT" ") in the processes followed; not known for the 1 program that ran without the probe" \
    "census: the effective allocator is not said to be the unfollowed program's"
# The started process itself executes the program with another allocator before the probe: the
# exclusion names who served malloc from then on.
cat >"$WORK/wrapexec.yaml" <<YAML
experiment: wrapexec
command: [sh, -c, 'LD_PRELOAD="$MIMALLOC:\$LD_PRELOAD" exec "$WORKLOAD" vallocs 2000']
allocators:
  glibc: {}
  jemalloc: {preload: jemalloc}
samples: 1
warmup: 0
verify: none
YAML
run_alloclab 9 run "$WORK/wrapexec.yaml" --quiet
expect_contains "$(q "SELECT e.reason FROM exclusions e JOIN variants v ON v.id = e.variant_id WHERE v.name = 'jemalloc'
                      AND e.run_id = (SELECT max(id) FROM runs)")" \
    "what runs after that is not measured under $JEMALLOC; malloc is served by $MIMALLOC (mimalloc)" \
    "a wrapper that executes the program with another allocator first: who served malloc"
# Past the 32 processes the probe lists, each process still checks its LD_PRELOAD and its execs:
# a tree of 44 processes is proven, and one whose last child (a subshell, past the table) drops
# the probe is not.
cat >"$WORK/many.yaml" <<YAML
experiment: many
command: [sh, -c, 'for i in \$(seq 40); do "$WORKLOAD" vallocs 10 >/dev/null; done']
allocators:
  glibc: {}
  dropped: {command: [sh, -c, 'for i in \$(seq 40); do "$WORKLOAD" vallocs 10 >/dev/null; done; (LD_PRELOAD= exec "$WORKLOAD" which)']}
samples: 1
warmup: 0
verify: none
YAML
run_alloclab 9 run "$WORK/many.yaml" --quiet
expect_eq "$(q "SELECT v.name FROM exclusions e JOIN variants v ON v.id = e.variant_id
                WHERE e.run_id = (SELECT max(id) FROM runs)")" dropped "a tree past the probe's table, proven"
expect_contains "$(q "SELECT e.reason FROM exclusions e WHERE e.run_id = (SELECT max(id) FROM runs)")" \
    "processes of the tree past the 32 the probe lists, one ran with another LD_PRELOAD than the started program or executed a program without the probe" \
    "a process past the table that drops the probe"
tree() { # VARIANT: its smoke run's processes as "how program family copies calls>0", one per line
    q "SELECT json_extract(value, '$.how') || ' ' || json_extract(value, '$.program') || ' ' ||
              json_extract(value, '$.family') || ' ' || json_extract(value, '$.allocator_copies') || ' ' ||
              (json_extract(value, '$.calls') > 0)
       FROM probe_reports p JOIN samples s ON s.id = p.sample_id JOIN variants v ON v.id = s.variant_id
            JOIN runs r ON r.id = s.run_id JOIN experiments x ON x.id = r.experiment_id,
            json_each(p.report, '$.processes')
       WHERE x.name = 'tree' AND v.name = '$1' AND s.phase = 'smoke' ORDER BY key"
}
SH=$(readlink -f /bin/sh) PROG=$(readlink -f "$WORKLOAD")
expect_eq "$(tree wrapped)" "started $SH jemalloc 1 1
executed $PROG jemalloc 1 1" "a wrapper that executes the program"
expect_eq "$(tree spawns)" "started $SH jemalloc 1 1
spawned $PROG jemalloc 1 1" "a wrapper that starts the program as a child"
expect_eq "$(tree server)" "started $SH jemalloc 1 1
forked $SH jemalloc 1 1
executed $PROG jemalloc 1 1" "a script that starts a server in the background"
expect_eq "$(q "SELECT p.effective_path FROM probe_reports p JOIN samples s ON s.id = p.sample_id
                JOIN variants v ON v.id = s.variant_id WHERE v.name = 'wrapped' AND s.phase = 'smoke'")" \
    "$JEMALLOC" "the wrapped program's allocator is the report's"

# census names the program the started process executed, not the wrapper, and lists the tree.
# An allocator setting the process did not have is said to be unset (it printed the name alone).
env -u GLIBC_TUNABLES "$ALLOCLAB" census -- "$WORKLOAD" vallocs 10 >"$WORK/census.out" 2>/dev/null ||
    fail "census of a glibc program"
grep -q "GLIBC_TUNABLES (not set: the allocator's defaults)" "$WORK/census.out" ||
    fail "an unset GLIBC_TUNABLES: $(cat "$WORK/census.out")"
# A misspelt allocator: usage, with the name it may have meant (it said "Invalid argument").
run_alloclab 2 census --preload jemaloc -- true
expect_contains "$ERR" "alloclab census: unknown allocator 'jemaloc' (did you mean 'jemalloc'?) (known: glibc," "census: a misspelt allocator"
run_alloclab 0 census --preload jemalloc -- sh -c "exec \"$WORKLOAD\" vallocs 10"
expect_contains "$OUT" "program: $PROG (the started process executed it; it began as $SH)" "census: the final program"
expect_contains "$OUT" "#1 pid " "census: the tree"
run_alloclab 1 census --preload jemalloc -- sh -c "LD_PRELOAD= \"$WORKLOAD\" vallocs 10; true"
expect_contains "$OUT" "then executed $WORKLOAD without the probe (LD_PRELOAD=): not followed" \
    "census: a program that dropped the probe"

# The memory overhead: each variant's median peak RSS over one figure common to its cell, the
# peak of the bytes the program asked for (it was each allocator's RSS over its own peak of
# usable sizes, which hid size-class rounding and gave every allocator another denominator).
# 400,000 blocks of 17 bytes kept (and 3 MiB of pointers to them): 9.5 MiB asked for, the blocks
# rounded up by every allocator.
cat >"$WORK/overhead.yaml" <<YAML
experiment: overhead
command: ["$WORKLOAD", "{mode}", "{a}", "{b}"]
params: {mode: [keep], a: [400000], b: [17]}
allocators:
  glibc: {}
  jemalloc: {preload: jemalloc}
  mimalloc: {preload: mimalloc}
  rejected: {preload: mimalloc, env: {MIMALLOC_STATS: "1"}}
samples: 2
warmup: 0
YAML
run_alloclab 9 run "$WORK/overhead.yaml" --quiet
expect_contains "$OUT" "Memory overhead (median peak RSS / the cell's peak of bytes the program asked for and had not freed" \
    "overhead section"
expect_contains "$OUT" "rejected: none: no measured peak RSS in the cells judged" "no variant left out without a word"
run_alloclab 0 show --format json
python3 -c '
import json, sys
cell = json.load(sys.stdin)["cells"][0]
asked = cell["peak_requested_bytes"]
assert 400000 * (17 + 8) <= asked < 400000 * (17 + 8) + (1 << 20), asked  # the blocks and their pointers
assert cell["results"]["glibc"]["smoke_peak_requested_bytes"] == asked, cell  # the baseline'"'"'s
for name, r in cell["results"].items():
    if name == "rejected":
        assert r["memory_overhead"] is None, r
        continue
    # Rounding to size classes is the allocator'"'"'s waste: RSS is well above what was asked for.
    assert r["memory_overhead"] > 1.3, (name, r["memory_overhead"])
    assert r["smoke_peak_live_bytes"] > asked, (name, r["smoke_peak_live_bytes"])  # usable: rounded up
' <<<"$OUT" || fail "one denominator for every variant: $OUT"
run_alloclab 0 report latest --output "$WORK/overhead.html"
grep -q "<h2>Memory overhead</h2>" "$WORK/overhead.html" || fail "the HTML report shows the overhead"
grep -q "rejected: none: no measured peak RSS" "$WORK/overhead.html" || fail "the HTML report says what the text says"

# Too small to judge (the code and libraries of a process outweigh a few KiB of heap): no
# figure, and why; more asked for than written: below 1, and why.
sed -i 's/params: .*/params: {mode: [keep], a: [10], b: [100]}/' "$WORK/overhead.yaml"
sed -i '/^  rejected:/d' "$WORK/overhead.yaml"
run_alloclab 0 run "$WORK/overhead.yaml" --quiet
expect_contains "$OUT" "not given: in the smoke runs the program asked for at most" "too small"
run_alloclab 0 show --format json
python3 -c 'import json, sys; assert all(r["memory_overhead"] is None for r in json.load(sys.stdin)["cells"][0]["results"].values())' \
    <<<"$OUT" || fail "no figure for a program too small"
sed -i 's/params: .*/params: {mode: [untouched], a: [256], b: [0]}/' "$WORK/overhead.yaml"
run_alloclab 0 run "$WORK/overhead.yaml" --quiet
expect_contains "$OUT" "below 1x: less resident than the cell's figure of what the program asked for: it asked for memory it never wrote" "below 1 explained"
# A program whose demand differs from run to run (a heap that depends on thread scheduling; here
# a variant that keeps five times as much): the one figure per cell is said to be rough.
cat >"$WORK/varied.yaml" <<YAML
experiment: varied
command: ["$WORKLOAD", keep, "400000", "17"]
allocators:
  glibc: {}
  more: {command: ["$WORKLOAD", keep, "2000000", "17"]}
samples: 2
warmup: 0
verify: none
YAML
run_alloclab 0 run "$WORK/varied.yaml" --quiet
expect_contains "$OUT" "rough in 1 of 1 cells: the program's own peak demand differed between the variants' smoke runs" \
    "a demand that differs between smoke runs"
# A cell without a figure (the baseline asked for too little) is not also "rough".
sed -i 's/keep, "400000", "17"/keep, "50000", "17"/' "$WORK/varied.yaml"
run_alloclab 0 run "$WORK/varied.yaml" --quiet
expect_contains "$OUT" "not given: in the smoke runs the program asked for at most" "the baseline's figure too small"
[[ $OUT != *"rough in"* ]] || fail "a cell without a figure said to be rough: $OUT"
# A program with an allocator layer of its own: CPython serves small objects from pymalloc's
# arenas, which the allocator under test never sees; check, run, show, the report and census say
# so, with the setting that routes them to malloc, and say nothing once it is set.
PY=/usr/bin/python3
cat >"$WORK/layer.yaml" <<YAML
experiment: layer
command: ["$PY", -c, "d = [str(i) for i in range(200000)]; print(len(d))"]
allocators: {glibc: {}, jemalloc: {preload: jemalloc}}
samples: 2
warmup: 0
YAML
run_alloclab 0 check "$WORK/layer.yaml"
expect_contains "$ERR" "alloclab check: note: every variant runs python3" "check: the layer"
expect_contains "$ERR" "PYTHONMALLOC=malloc in the environment routes them to malloc (spec key env: {PYTHONMALLOC: malloc})" \
    "check: the setting, where a spec sets it"
# quick builds its children's environment from empty too: its own flag is what works.
PYTHONMALLOC=malloc "$ALLOCLAB" quick -a glibc -r 1 -w 0 --db "$WORK/layer-quick.db" -- "$PY" -c pass >/dev/null 2>"$WORK/quick.err" ||
    fail "quick of python3"
grep -q "(quick --env PYTHONMALLOC=malloc)" "$WORK/quick.err" || fail "quick's remedy: $(cat "$WORK/quick.err")"
grep -q "note: variant glibc runs python3" "$WORK/quick.err" || fail "the one variant named: $(cat "$WORK/quick.err")"
run_alloclab 0 run "$WORK/layer.yaml" --quiet
run_alloclab 0 show
expect_contains "$OUT" "Allocator layer of the program's own:" "show: the layer"
expect_contains "$OUT" "(in 1 of 1 cells' smoke runs) serves objects up to 512 bytes from pymalloc's arenas" "show: where"
run_alloclab 0 show --format json
python3 -c 'import json, sys; r = json.load(sys.stdin)["cells"][0]["results"]; assert r["glibc"]["own_allocator_layer"].startswith("/usr/bin/python3"), r' \
    <<<"$OUT" || fail "the layer in JSON"
run_alloclab 0 report latest --output "$WORK/layer.html"
grep -q "Allocator layer of the program" "$WORK/layer.html" || fail "the report names the layer"
run_alloclab 0 census -- "$PY" -c pass
expect_contains "$ERR" "alloclab census: note: /usr/bin/python3" "census: the layer"
# Behind a wrapper whose tree passes the 32 processes the probe lists (a pyenv shim is a bash
# tree of about 80), CPython is still named: the process past the table sets a bit.
cat >"$WORK/shim.yaml" <<YAML
experiment: shim
command: [sh, -c, 'for i in \$(seq 40); do /bin/true; done; exec $PY -c pass']
allocators: {glibc: {}}
samples: 1
warmup: 0
YAML
run_alloclab 0 run "$WORK/shim.yaml" --quiet
expect_contains "$OUT" "python (in 1 of 1 cells' smoke runs) serves objects up to 512 bytes from pymalloc's arenas" \
    "a CPython past the probe's table"
run_alloclab 0 census -- sh -c "for i in \$(seq 40); do /bin/true; done; exec $PY -c pass"
expect_contains "$ERR" "alloclab census: note: python (past the processes the probe lists) serves objects" "census: past the table"
printf 'env: {PYTHONMALLOC: malloc}\n' >>"$WORK/layer.yaml"
run_alloclab 0 check "$WORK/layer.yaml"
[[ $ERR != *pymalloc* ]] || fail "a note with PYTHONMALLOC=malloc set: $ERR"
run_alloclab 0 run "$WORK/layer.yaml" --quiet
[[ $OUT != *"Allocator layer"* ]] || fail "the layer said with PYTHONMALLOC=malloc: $OUT"
PYTHONMALLOC=malloc run_alloclab 0 census -- "$PY" -c pass
[[ $ERR != *pymalloc* ]] || fail "census: a note with PYTHONMALLOC=malloc: $ERR"

printf 'probe: never\n' >>"$WORK/overhead.yaml"
run_alloclab 0 run "$WORK/overhead.yaml" --quiet
[[ $OUT != *"Memory overhead"* ]] || fail "an overhead without the probe: $OUT"

# C++ operator new and delete are counted under every catalog allocator: Debian's jemalloc,
# mimalloc and tcmalloc define their own, which C++ programs call without passing through malloc
# (before, 1 M new/delete pairs counted 4 calls under mimalloc, 1 M frees and no mallocs under
# jemalloc). Every form: sized delete, array, aligned, nothrow.
if command -v g++ >/dev/null; then
    cat >"$WORK/pairs.cpp" <<'CPP'
#include <cstdio>
#include <new>
struct alignas(64) Line { char b[64]; };
int main() {
    unsigned long sink = 0;
    for (int i = 0; i < 250000; i++) {
        int *a = new int(i); sink += *a; delete a;                // _Znwm, _ZdlPvm
        int *b = new int[4]; b[0] = i; sink += b[0]; delete[] b;  // _Znam, _ZdaPv
        Line *c = new Line; c->b[0] = 1; sink += c->b[0]; delete c; // aligned new and delete
        int *d = new (std::nothrow) int(1); sink += *d; delete d; // nothrow new
    }
    std::printf("%lu\n", sink);
}
CPP
    g++ -O0 -o "$WORK/pairs" "$WORK/pairs.cpp"
    run_alloclab 0 allocators --format json
    catalog=$(python3 -c 'import json, sys
for a in json.load(sys.stdin): print(a["name"], "yes" if a["installed"] else a["package"])' <<<"$OUT")
    while read -r a installed; do
        if [[ $installed != yes ]]; then
            skip_part "C++ new and delete under $a: needs $installed"
            continue
        fi
        run_alloclab 0 census --preload "$a" --json -- "$WORK/pairs"
        expect_eq "$(python3 -c 'import json, sys; c = json.load(sys.stdin)["counters"]["calls"]
print(c["new"] >= 1000000 and c["delete"] >= 1000000, c["malloc"] < 100)' <<<"$OUT")" "True True" \
            "$a: 1 M new and delete counted as such"
        # A usable peak is never below the requested one (tcmalloc could not size the C++
        # runtime's start-up pool, and census printed 4.0 KiB usable for 75.0 KiB requested).
        run_alloclab 0 census --preload "$a" -- "$WORK/pairs"
        python3 -c '
import re, sys
m = re.search(r"peak live ([0-9.]+) KiB requested \(([0-9.]+) KiB usable\)", sys.stdin.read())
assert not m or float(m.group(2)) >= float(m.group(1)), m.group(0)' <<<"$OUT" || fail "$a: a usable peak below the requested one"
    done <<<"$catalog"
else
    skip_part "C++ new and delete: needs g++ (apt-get install g++)"
fi

# A program that barely calls the allocator (a CPU loop: the timed loop a compiler emptied) is
# said to, from its smoke run's counters; one that allocates is not (before: not a word).
run_alloclab 0 quick -a glibc,jemalloc -r 2 -w 0 --quiet -- "$WORKLOAD" spin 20000000
expect_contains "$OUT" "Allocator barely exercised:" "a CPU loop"
expect_contains "$OUT" "glibc's smoke run made 1 allocator call in" "its count"
expect_contains "$OUT" "comes from their start-up and own memory, code and data layout" \
    "what a difference can come from (memory too: an allocator's own, not a stream of allocations)"
run_alloclab 0 show latest --format json
expect_eq "$(python3 -c 'import json, sys
print(all(r["smoke_allocator_calls"] < 10 for c in json.load(sys.stdin)["cells"] for r in c["results"].values()))' <<<"$OUT")" \
    True "JSON: the smoke runs' calls"
run_alloclab 0 quick -a glibc,jemalloc -r 2 -w 0 --quiet -- "$WORKLOAD" vallocs 100000
[[ $OUT != *"barely exercised"* ]] || fail "a program that allocates: $OUT"

# A baseline whose smoke run failed gives no figure: the one figure is another variant's, and the
# notes say whose (on 19d64e5 the header said "the baseline's smoke run" of a figure jemalloc gave).
cat >"$WORK/borrowed.yaml" <<YAML
experiment: borrowed
command: ["$WORKLOAD", keep, "400000", "17"]
allocators:
  glibc: {command: [sh, -c, "exit 3"]}
  jemalloc: {preload: jemalloc}
  mimalloc: {preload: mimalloc}
reference: jemalloc
verify: none
samples: 2
warmup: 0
YAML
run_alloclab 9 run "$WORK/borrowed.yaml" --quiet
expect_contains "$OUT" "in 1 of 1 cells glibc's smoke run gave no figure (it failed or ran without the probe): there the largest of the other variants' smoke runs is the one figure" \
    "whose figure the overhead divides by, said"

# A program of the tree that ran without the probe (its LD_PRELOAD unset, under glibc all the
# same): the counts are of the rest alone, so no figure is drawn from them (on 19d64e5: "barely
# exercised: 286 calls" and "asked for at most 13.2 KiB" of a shell around the real work).
cat >"$WORK/unprobed.yaml" <<YAML
experiment: unprobed
command: [sh, -c, 'env -u LD_PRELOAD "$WORKLOAD" keep 400000 17']
allocators: {glibc: {}, twin: {preload: glibc}}
verify: none
samples: 2
warmup: 0
YAML
run_alloclab 0 run "$WORK/unprobed.yaml" --quiet
expect_contains "$OUT" "not given: $WORKLOAD ran without the probe in the smoke runs, so what the program asked for is not known" \
    "the overhead not drawn from a part of the tree"
[[ $OUT != *"Allocator barely exercised"* ]] || fail "calls of a part of the tree judged as the program's: $OUT"

# A tree's memory overhead: a sample's peak RSS is the largest single process's, what the program
# asked for the tree's sum. Two processes each holding 50 MB to their exit: no overhead (it read
# 0.51x, "it asked for memory it never wrote"); two that write 100 MB each and free it before
# they exit: below 1x with that cause named; one large process under a shell keeps its figure.
while IFS='|' read -r shape want; do
    cat >"$WORK/tree.yaml" <<YAML
experiment: tree
command: [sh, -c, "$shape"]
allocators: {glibc: {}}
verify: none
samples: 2
YAML
    run_alloclab 0 run "$WORK/tree.yaml"
    expect_contains "$OUT" "$want" "the overhead of: $shape"
done <<EOF
$WORKLOAD keep 50000 1000 & $WORKLOAD keep 50000 1000; wait|not given: several processes of the program's tree each held a large part of its memory
$WORKLOAD touch 100 200 & $WORKLOAD touch 100 200; wait|as here several processes of the tree called the allocator, the figure is their sum while a sample's peak RSS is the largest single process's
$WORKLOAD keep 100000 1000; true|glibc: 1.0
EOF
