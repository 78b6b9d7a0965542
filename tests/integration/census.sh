#!/bin/bash
# The probe through `alloclab census`: effective allocator, version and options of each catalog
# allocator; exact counters from 8 threads; counts across fork; a report from a crashed child;
# the census of a process with two allocators; a static binary the probe cannot enter.
. "$(dirname "$0")/lib.sh"

# json FIELD-EXPRESSION ARGS...: runs census --json and evaluates a Python expression on it (d).
json() {
    local expr=$1
    shift
    "$ALLOCLAB" census --json "$@" 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print($expr)"
}

declare -A file=([jemalloc]=libjemalloc.so.2 [mimalloc]=libmimalloc.so.2 [tcmalloc]=libtcmalloc.so.4
    [tcmalloc_minimal]=libtcmalloc_minimal.so.4 [tbbmalloc]=libtbbmalloc_proxy.so.2)
declare -A family=([jemalloc]=jemalloc [mimalloc]=mimalloc [tcmalloc]=tcmalloc [tcmalloc_minimal]=tcmalloc
    [tbbmalloc]=tbbmalloc)
for a in "${!file[@]}"; do
    got=$(json 'd["effective"]["path"].rsplit("/",1)[1], d["effective"]["family"], d["allocator_copies"]' \
        --preload "$a" -- "$WORKLOAD" which)
    expect_eq "$got" "${file[$a]} ${family[$a]} 1" "census of $a"
done
expect_eq "$(json 'd["effective"]["family"], d["effective"]["version"]' -- "$WORKLOAD" which)" \
    "glibc $(ldd --version | head -1 | grep -o '[0-9.]*$')" "glibc without preload"
expect_contains "$(json 'd["effective"]["version"]' --preload jemalloc -- "$WORKLOAD" which)" "5.3.0" "jemalloc version"
expect_eq "$(MALLOC_CONF=dirty_decay_ms:500,narenas:3 json 'd["effective"]["options"]["dirty_decay_ms"], d["effective"]["options"]["narenas"]' \
    --preload jemalloc -- "$WORKLOAD" which)" "500 3" "jemalloc options from MALLOC_CONF"
expect_eq "$(MIMALLOC_ALLOW_DECOMMIT=0 json 'd["effective"]["version"], d["effective"]["options"]["allow_decommit"]' \
    --preload mimalloc -- "$WORKLOAD" which)" "2.0.9 0" "mimalloc options from the environment"
expect_contains "$(json 'd["effective"]["version"]' --preload tcmalloc -- "$WORKLOAD" which)" "gperftools" "tcmalloc version"

# Counters: exact under 8 threads (aligned_alloc is used by nothing but the workload here).
expect_eq "$(json 'd["counters"]["calls"]["aligned_alloc"], d["counters"]["threads"]' -- "$WORKLOAD" threads 8 20000)" \
    "160000 9" "8 threads x 20000 aligned_alloc"
expect_eq "$(json 'd["counters"]["calls"]["aligned_alloc"]' --preload mimalloc -- "$WORKLOAD" threads 8 20000)" \
    "160000" "the same under mimalloc"
expect_eq "$(json 'd["counters"]["calls"]["valloc"]' -- "$WORKLOAD" fork)" 200 "parent and forked child"
expect_eq "$(json 'd["counters"]["calls"]["pvalloc"], d["exited"], d["signal"], d["counters"]["peak_live_bytes"] >= 10*4096' \
    --preload jemalloc -- "$WORKLOAD" crashalloc)" "10 False 11 True" "report of a crashed child"

# Two allocators in one process: jemalloc preloaded, mimalloc dlopen()ed by the program.
rc=0
"$ALLOCLAB" census --preload jemalloc -- "$WORKLOAD" dlopen "$(ldconfig -p | grep -o '/[^ ]*libmimalloc.so.2$' | head -1)" \
    >"$WORK/two.txt" 2>/dev/null || rc=$?
expect_eq "$rc" 1 "census exit status with two allocators"
expect_contains "$(cat "$WORK/two.txt")" "WARNING: 2 allocator implementations" "two-allocator warning"

# A static binary: the probe never loads.
expect_eq "$(json 'd["loaded"]' -- "${WORKLOAD}-static" which)" "False" "static binary"
run_alloclab 2 census
run_alloclab 4 census -- /no/such/program

# A descriptor that is not the runner's report is never written: here a program inherits
# ALLOCLAB_PROBE_FD=4 while its fd 4 is a file of its own.
run_alloclab 0 census -- /bin/sh -c "exec 4>'$WORK/own-file'; ALLOCLAB_PROBE_FD=4 '$WORKLOAD' which"
expect_eq "$(stat -c %s "$WORK/own-file")" 0 "the program's own fd 4 untouched"

# Forward mode through a prefixed "jemalloc" (tests/workloads/prefixed-allocator.c): identified
# by its prefixed mallctl, version and options read through it.
cat >"$WORK/pfx.yaml" <<YAML
experiment: prefixed
command: ["$WORKLOAD", threads, "1", "100"]
allocators:
  glibc: {}
  pfx: {forward: {library: "$PREFIXED", prefix: pfx_}}
samples: 1
YAML
run_alloclab 0 run "$WORK/pfx.yaml" --quiet
expect_eq "$(q "SELECT p.family, p.version, json_extract(p.report, '$.effective.prefix'),
                json_extract(p.report, '$.effective.options.narenas'),
                json_extract(p.report, '$.counters.calls.aligned_alloc')
                FROM probe_reports p JOIN samples s ON s.id = p.sample_id JOIN variants v ON v.id = s.variant_id
                WHERE v.name = 'pfx' AND s.phase = 'smoke'")" "jemalloc|5.3.0-prefixed-test|pfx_|7|100" \
    "prefixed jemalloc identified through pfx_mallctl"

# The usable peak is exact where requested sizes are tracked: never below the requested peak
# (on 7fba13f, a small program's usable peak was its last flushed total: 8.9 KiB usable against
# 30.4 KiB requested for sqlite3 :memory:).
for a in glibc jemalloc; do
    run_alloclab 0 census --preload "$a" --json -- sqlite3 :memory: 'select 1;'
    expect_eq "$(python3 -c 'import json, sys; c = json.load(sys.stdin)["counters"]
print(c["peak_live_bytes"] >= c["peak_live_requested_bytes"] >= 20000)' <<<"$OUT")" True "$a: usable peak >= requested peak"
done

# A shell that ends with _exit() (dash) exited with status 0: said as what the probe saw, not as
# an abnormal end (on 7fba13f: "the process did not exit normally").
run_alloclab 0 census -- sh -c 'true; /bin/true'
expect_contains "$OUT" "(the process ended without running its exit handlers: _exit() or a signal)" "an _exit()"
[[ $OUT != *"did not exit normally"* ]] || fail "an exit status 0 called abnormal: $OUT"
