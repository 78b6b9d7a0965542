#!/bin/bash
# Every catalog allocator really serves malloc in its own child, and only there: the workload
# reports (dladdr) which shared object provides the malloc it calls, and its output (the same
# under every allocator) verifies against the glibc reference.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/spec.yaml" <<YAML
experiment: preload-check
command: ["$WORKLOAD", which]
params: {round: [1, 2]}
allocators:
  glibc: {}
  jemalloc: {preload: jemalloc, env: {MALLOC_CONF: "dirty_decay_ms:500,muzzy_decay_ms:1000,background_thread:true"}}
  mimalloc: {preload: mimalloc}
  tcmalloc: {preload: tcmalloc}
  tcmalloc_minimal: {preload: tcmalloc_minimal}
  tbbmalloc: {preload: tbbmalloc}
samples: 3
warmup: 1
YAML

run_alloclab 0 run "$WORK/spec.yaml" --quiet

declare -A provider=(
    [glibc]=libc.so.6
    [jemalloc]=libjemalloc.so.2
    [mimalloc]=libmimalloc.so.2
    [tcmalloc]=libtcmalloc.so.4
    [tcmalloc_minimal]=libtcmalloc_minimal.so.4
    [tbbmalloc]=libtbbmalloc_proxy.so.2
)
for variant in "${!provider[@]}"; do
    # 2 cells x (1 warmup + 3 samples) timed runs, every one served by the expected allocator
    # (in the smoke runs the probe comes first and answers dladdr itself).
    got=$(q "SELECT count(*) FROM samples s JOIN variants v ON v.id = s.variant_id
             JOIN sample_metrics m ON m.sample_id = s.id
             WHERE v.name = '$variant' AND s.status = 'ok' AND s.phase <> 'smoke'
             AND m.name = 'malloc_provider.${provider[$variant]}'")
    expect_eq "$got" 8 "$variant samples served by ${provider[$variant]}"
    # The probe saw the same allocator serve malloc in both smoke runs.
    got=$(q "SELECT count(*) FROM probe_reports p JOIN samples s ON s.id = p.sample_id
             JOIN variants v ON v.id = s.variant_id
             WHERE v.name = '$variant' AND s.phase = 'smoke' AND p.effective_path LIKE '%/${provider[$variant]}'")
    expect_eq "$got" 2 "$variant smoke runs: effective allocator found by the probe"
    others=$(q "SELECT count(*) FROM samples s JOIN variants v ON v.id = s.variant_id
                JOIN sample_metrics m ON m.sample_id = s.id
                WHERE v.name = '$variant' AND m.name LIKE 'malloc_provider.%'
                AND m.name <> 'malloc_provider.${provider[$variant]}' AND s.phase <> 'smoke'")
    expect_eq "$others" 0 "$variant samples served by another allocator"
    expect_contains "$OUT" "$variant" "table column"
done

expect_eq "$(q "SELECT status, n_failures FROM runs")" "done|0" "run status"
expect_eq "$(q "SELECT count(*) FROM samples WHERE verified = 1 AND status = 'ok'")" \
    $((6 * 10 - 2)) "verified samples (all but the two oracle smoke runs)"
# The recorded allocator is the file that was preloaded.
expect_eq "$(q "SELECT a.path LIKE '%/libjemalloc.so.2' FROM allocators a JOIN variants v ON v.allocator_id = a.id WHERE v.name = 'jemalloc'")" \
    1 "jemalloc path"

# The file a catalog name preloads, given by its path, is that allocator: its name and package
# version (it was the path itself, version "unknown", while the probe named it jemalloc 5.3).
JEMALLOC=$(q "SELECT a.path FROM allocators a JOIN variants v ON v.allocator_id = a.id WHERE v.name = 'jemalloc' LIMIT 1")
run_alloclab 0 quick -a glibc,"$JEMALLOC" -r 1 -w 0 --quiet -- "$WORKLOAD" which
expect_eq "$(q "SELECT a.name || ' ' || (a.version <> 'unknown') FROM allocators a JOIN variants v ON v.allocator_id = a.id
                WHERE v.run_id = (SELECT max(id) FROM runs) AND v.position = 1")" "jemalloc 1" "a catalog file by path"

# Scudo (LLVM's compiler-rt, Debian's libclang-rt-14-dev) is a catalog entry found under LLVM's
# directory, and the probe knows it by its symbols: the variant is proven, named scudo both ways
# (it was "(none)", an allocator the probe could not tell), and census says so.
if SCUDO=$("$ALLOCLAB" allocators --format json | python3 -c '
import json, sys
print(next(a["path"] for a in json.load(sys.stdin) if a["name"] == "scudo" and a["path"]))' 2>/dev/null) && [[ -n $SCUDO ]]; then
    cat >"$WORK/scudo.yaml" <<YAML
experiment: scudo
command: ["$WORKLOAD", which]
allocators: {glibc: {}, scudo: {preload: scudo}, bypath: {preload: "$SCUDO"}}
samples: 2
warmup: 0
YAML
    run_alloclab 0 run "$WORK/scudo.yaml" --quiet
    expect_eq "$(q "SELECT group_concat(v.name || '=' || p.family, ' ') FROM probe_reports p JOIN samples s ON s.id = p.sample_id
                    JOIN variants v ON v.id = s.variant_id JOIN runs r ON r.id = s.run_id
                    WHERE r.id = (SELECT max(id) FROM runs) AND s.phase = 'smoke' ORDER BY v.position")" \
        "glibc=glibc scudo=scudo bypath=scudo" "scudo proven and named, by catalog name and by path"
    run_alloclab 0 census --preload scudo -- "$WORKLOAD" which
    expect_contains "$OUT" "effective allocator: $SCUDO (scudo)" "census names scudo"
    # quick names a variant preloaded by the path of a catalog allocator's file by that allocator
    # when the file's name does not say it (it named Scudo's "libclang_rt").
    run_alloclab 0 quick -a glibc,"$SCUDO" -r 1 -w 0 --print-spec -- "$WORKLOAD" which
    expect_contains "$OUT" "  \"scudo\": {preload: \"$SCUDO\"}" "a path of scudo named scudo"
else
    skip_part "libclang-rt-14-dev is not installed (apt-get install libclang-rt-14-dev): no Scudo to preload"
fi

# The table's columns are as wide as their widest value: every digest starts in one column (on
# 7fba13f the tbbmalloc and scudo rows, whose path or version is longer, pushed theirs right).
run_alloclab 0 allocators
expect_eq "$(python3 -c 'import re, sys
print(len({m.start() for m in (re.search("[0-9a-f]{64}$", l) for l in sys.stdin.read().splitlines()[1:]) if m}))' <<<"$OUT")" 1 \
    "aligned digests"
