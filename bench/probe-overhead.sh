#!/bin/bash
# Probe overhead: the same program with the allocator preloaded alone and with the probe
# preloaded in front of it, interleaved run by run in one session, compared as a ratio of
# medians. Target: at most 1.03 on a malloc-heavy workload.
#
#   bench/probe-overhead.sh [BUILD_DIR] [RUNS] [ALLOCATOR...]
#
# Two workloads:
#   json   the quickstart's Python JSON round trip (n=100000): a real malloc-heavy program;
#   micro  tests/workloads/alloclab-workload which: 50,000 malloc/free pairs of 1 B to 4 KiB,
#          each block written once, about 10 ms of almost nothing but allocator calls. This is
#          the worst case: the probe's fixed start-up cost (~0.3 ms) and its few nanoseconds
#          per call weigh most here.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
runs=${2:-40}
shift $(($# > 2 ? 2 : $#))
allocators=("$@")
[[ ${#allocators[@]} -gt 0 ]] || allocators=(glibc jemalloc mimalloc tcmalloc_minimal)

probe=$build/probe/liballoclab-probe.so
workload=$build/tests/workloads/alloclab-workload
[[ -f $probe && -x $workload ]] || { echo "build alloclab with tests first ($build)" >&2; exit 1; }

python3 - "$probe" "$workload" "$runs" "${allocators[@]}" <<'PY'
import os, statistics, subprocess, sys, time
probe, workload, runs, allocators = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
libs = {"glibc": None, "jemalloc": "libjemalloc.so.2", "mimalloc": "libmimalloc.so.2",
        "tcmalloc_minimal": "libtcmalloc_minimal.so.4", "tcmalloc": "libtcmalloc.so.4",
        "tbbmalloc": "libtbbmalloc_proxy.so.2"}
def find(name):
    for d in ("/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/local/lib", "/usr/lib"):
        if os.path.exists(os.path.join(d, name)):
            return os.path.join(d, name)
    raise SystemExit(f"{name} not found")
workloads = {
    "json": ["/usr/bin/python3", "-c", "import json; n=100000; d=[{'k': i, 's': 'x'*(i%64)} for i in range(n)];"
             " print(len(json.dumps(d)))"],
    "micro": [workload, "which"],
}
def timed(command, preload):
    env = {"PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0"}
    if preload:
        env["LD_PRELOAD"] = preload
    start = time.perf_counter()
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start
print(f"probe overhead, {runs} interleaved runs per cell, ratio of medians (probe+allocator / allocator)")
worst = {}
for (w, command), a in ((w, a) for w in workloads.items() for a in allocators):
    lib = find(libs[a]) if libs[a] else None
    alone = lib or ""
    probed = probe + (":" + lib if lib else "")
    for _ in range(3):
        timed(command, alone); timed(command, probed)
    t_alone, t_probed = [], []
    for i in range(runs):
        # Alternate which goes first so that neither always follows the other.
        pair = [(t_alone, alone), (t_probed, probed)]
        for bucket, preload in (pair if i % 2 == 0 else pair[::-1]):
            bucket.append(timed(command, preload))
    m_alone, m_probed = statistics.median(t_alone), statistics.median(t_probed)
    ratio = m_probed / m_alone
    worst[w] = max(worst.get(w, 0), ratio)
    print(f"  {w:5s} {a:17s} alone {m_alone * 1e3:8.2f} ms   with probe {m_probed * 1e3:8.2f} ms   ratio {ratio:.3f}")
for w, r in worst.items():
    print(f"worst ratio, {w}: {r:.3f} (target <= 1.03)")
PY
