#!/bin/bash
# The probe's forward mode against a real prefixed build, as the second seed did with its Rust
# probe: Debian's jemalloc source (apt-get source, from the archive this machine uses) built by
# alloclab twice, as the family builds it (preloaded) and with --with-jemalloc-prefix=_rjem_
# (forwarded to: the probe loads it privately and sends malloc to _rjem_malloc). Both serve
# every allocation of the program and are the same jemalloc; the run compares them.
. "$(dirname "$0")/lib.sh"

fetch_debian_source jemalloc "$WORK/jemalloc" || skip_test "cannot fetch jemalloc's source: $FETCH_REASON"
export XDG_CACHE_HOME="$WORK/cache"
cat >"$WORK/spec.yaml" <<YAML
experiment: rjem
command: ["$WORKLOAD", churn, "300000"]
allocators:
  direct: {build: {source: "$WORK/jemalloc", family: jemalloc}}
  forwarded:
    build:
      source: "$WORK/jemalloc"
      # A library loaded after the start cannot have initial-exec thread-locals (jemalloc's default).
      commands: ["./configure --with-jemalloc-prefix=_rjem_ --disable-initial-exec-tls", 'make -j"\$(nproc)" build_lib_shared']
      output: lib/libjemalloc.so.2
    forward: {prefix: _rjem_}
samples: 5
YAML
run_alloclab 0 run "$WORK/spec.yaml" --quiet
expect_contains "$OUT" "allocators: direct=jemalloc tree " "the direct build, named after its family"
expect_contains "$OUT" "forwarded=libjemalloc.so.2 tree " "the prefixed build"
# The prefixed build has no malloc of its own: only _rjem_malloc.
lib=$(q "SELECT a.path FROM variants v JOIN allocators a ON a.id = v.allocator_id WHERE v.name = 'forwarded'")
nm -D --defined-only "$lib" | grep -q ' _rjem_malloc$' || fail "$lib has no _rjem_malloc"
! nm -D --defined-only "$lib" | grep -q ' malloc$' || fail "$lib defines malloc: not a prefixed build"
# Every sample of both: ok. Every run of the forwarded variant went through the probe, served by
# the prefixed library; both are jemalloc of the same version, and served the same calls.
expect_eq "$(q "SELECT count(*) FROM samples WHERE status != 'ok'")" 0 "no failed sample"
expect_eq "$(q "SELECT count(*), min(p.effective_path = '$lib'), min(p.family) FROM probe_reports p JOIN samples s ON s.id = p.sample_id
                JOIN variants v ON v.id = s.variant_id WHERE v.name = 'forwarded'")" "7|1|jemalloc" "forwarded: every run through the probe, to the prefixed build"
versions=$(q "SELECT group_concat(DISTINCT p.version) FROM probe_reports p JOIN samples s ON s.id = p.sample_id JOIN variants v ON v.id = s.variant_id WHERE s.phase = 'smoke'")
[[ $versions == 5.3.0* && $versions != *,* ]] || fail "one jemalloc version in both: $versions"
# (the program's 300,000, and stdio's; the probe takes one of the forwarded ones for itself)
expect_eq "$(q "SELECT count(*) FROM probe_reports p JOIN samples s ON s.id = p.sample_id
                WHERE s.phase = 'smoke' AND json_extract(p.report, '$.counters.calls.malloc') BETWEEN 300000 AND 300002")" 2 \
    "the program's calls served in both"
# The comparison: the forwarded variant against the same jemalloc preloaded (every one of its
# calls passes through the probe, which costs a little).
expect_contains "$OUT" "Against direct" "compared with the direct preload"
echo "source: ok"
