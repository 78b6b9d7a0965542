#!/bin/bash
# Probe overhead: the same program with the allocator preloaded alone and with the probe
# preloaded in front of it, interleaved run by run in one session, compared as a ratio of
# medians. Target: at most 1.03 on a malloc-heavy workload.
#
#   bench/probe-overhead.sh [BUILD_DIR] [RUNS] [ALLOCATOR...]
#   WORKLOADS="micro" bench/probe-overhead.sh ...    (a subset of json perl micro)
#
# Three workloads:
#   json   the quickstart's Python JSON round trip (n=100000): a real malloc-heavy program;
#   perl   a Perl hash of 100,000 small arrays and strings (Debian's perl uses the system
#          malloc): a real program that does little else than allocate;
#   micro  tests/workloads/alloclab-workload which: 50,000 malloc/free pairs of 1 B to 4 KiB,
#          each block written once, about 10 ms of almost nothing but allocator calls. This is
#          the synthetic worst case: the probe's fixed start-up cost and its few nanoseconds
#          per call weigh most here.
# The probe runs as it does in timed samples with `probe: always`: counters, no live bytes
# (those are measured in the untimed smoke run only, see docs/probe.md).
# The line under each micro result splits its overhead into the start-up cost (the `exit 0`
# mode: load, resolve, identify), of which "any preload" is the part an empty preloaded object
# (bench/empty-preload.c) costs as well, and the cost per counted call.
# Wall-clock times on a shared VM move by several percent between identical runs (the host's
# neighbours; CPU time moves with them), and a busy spell lasts seconds. The three preloads of
# a cell therefore run in rounds, one run each, back to back, and the wall-clock ratio is the
# median over the rounds of each round's ratio: a spell that slows a round slows both sides of
# it (the pairing alloclab's own comparisons use). Each cell also runs a control, an empty
# preloaded object in front of the allocator: its ratio is what the noise alone makes of a
# ratio in that cell. The micro workload, ten milliseconds a run, runs five times RUNS rounds.
# Besides the wall-clock ratio (the target's) the CPU-time medians and the least CPU times are
# compared. The workloads are also counted in instructions (valgrind --tool=callgrind, the
# whole process from exec to exit): the same figure on every run, whatever the machine does.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
runs=${2:-40}
shift $(($# > 2 ? 2 : $#))
allocators=("$@")
[[ ${#allocators[@]} -gt 0 ]] || allocators=(glibc jemalloc mimalloc tcmalloc_minimal)

probe=$build/probe/liballoclab-probe.so
workload=$build/tests/workloads/alloclab-workload
empty=$build/bench/libempty-preload.so
[[ -f $probe && -x $workload && -f $empty ]] || { echo "build alloclab with tests first ($build)" >&2; exit 1; }

python3 - "$probe" "$workload" "$empty" "$runs" "${allocators[@]}" <<'PY'
import os, shutil, statistics, subprocess, sys, time
probe, workload, empty, runs, allocators = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5:]
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
    "perl": ["/usr/bin/perl", "-e", 'my %h; for my $i (1..100000) { $h{"k$i"} = [$i, "x" x ($i % 64)] }'
             ' my $n = 0; $n += length($_->[1]) for values %h; print "$n\\n"'],
    "micro": [workload, "which"],
}
workloads = {w: c for w, c in workloads.items() if w in os.environ.get("WORKLOADS", "json perl micro").split()}
MICRO_CALLS = 100000  # the micro workload's malloc and free calls
class Cell:
    """Per preload: the median wall-clock time, the median CPU time of the child (user +
    system), its least CPU time, and the median over the rounds of its wall-clock time over
    the first preload's in the same round."""
    def __init__(self, times, first):
        self.wall = statistics.median(t[0] for t in times)
        self.cpu = statistics.median(t[1] for t in times)
        self.least_cpu = min(t[1] for t in times)
        self.paired = statistics.median(t[0] / f[0] for t, f in zip(times, first))
def interleaved(command, preloads, rounds):
    """Runs command under each preload in rounds, one run of each per round, rotating which
    goes first; returns a Cell per preload."""
    for preload in preloads * 2:
        timed(command, preload)
    times = [[] for _ in preloads]
    for i in range(rounds):
        for k in range(len(preloads)):
            j = (i + k) % len(preloads)
            times[j].append(timed(command, preloads[j]))
    return [Cell(ts, times[0]) for ts in times]
def timed(command, preload):
    """Wall-clock and CPU time of one run, from fork to reap."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0"}
    if preload:
        env["LD_PRELOAD"] = preload
    start = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{command[0]} failed ({os.waitstatus_to_exitcode(status)})")
    return wall, usage.ru_utime + usage.ru_stime
print(f"probe overhead, {runs} rounds per cell ({5 * runs} for micro): ratios probe+allocator / allocator, the")
print("wall-clock one the median of the rounds' ratios, then of the CPU-time medians and of the least CPU")
print("times; control: the wall-clock ratio of an empty preloaded object + allocator / allocator, what the")
print("machine's noise alone makes of a ratio")
worst = {}
for (w, command), a in ((w, a) for w in workloads.items() for a in allocators):
    lib = find(libs[a]) if libs[a] else None
    preloads = [lib or "", probe + (":" + lib if lib else ""), empty + (":" + lib if lib else "")]
    rounds = 5 * runs if w == "micro" else runs
    alone, probed, control = interleaved(command, preloads, rounds)
    worst[w] = max(worst.get(w, 0), probed.paired)
    print(f"  {w:5s} {a:17s} alone {alone.wall * 1e3:7.2f} ms  probe {probed.wall * 1e3:7.2f} ms  ratio {probed.paired:.3f}"
          f"  cpu {probed.cpu / alone.cpu:.3f}  least cpu {probed.least_cpu / alone.least_cpu:.3f}  control {control.paired:.3f}")
    if w == "micro":
        s_alone, s_probed, s_empty = interleaved([workload, "exit", "0"], preloads, rounds)
        startup = s_probed.wall - s_alone.wall
        per_call = (probed.wall - alone.wall - startup) / MICRO_CALLS
        print(f"        {'':17s} start-up {startup * 1e6:4.0f} us (any preload {(s_empty.wall - s_alone.wall) * 1e6:4.0f} us)"
              f"   per call {per_call * 1e9:4.1f} ns")
for w, r in worst.items():
    print(f"worst ratio, {w}: {r:.3f} (target <= 1.03)")
def instructions(command, preload):
    env = {"PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0", "LD_PRELOAD": preload}
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command],
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True).stderr
    return int(out.rsplit("refs:", 1)[1].split()[0].replace(",", ""))
if shutil.which("valgrind"):
    print("instructions (callgrind), ratio probe+allocator / allocator")
    worst = {}
    for (w, command), a in ((w, a) for w in workloads.items() for a in allocators):
        lib = find(libs[a]) if libs[a] else ""
        alone, probed = instructions(command, lib), instructions(command, probe + (":" + lib if lib else ""))
        worst[w] = max(worst.get(w, 0), probed / alone)
        print(f"  {w:5s} {a:17s} alone {alone:13,d}   with probe {probed:13,d}   ratio {probed / alone:.3f}")
    for w, r in worst.items():
        print(f"worst instruction ratio, {w}: {r:.3f} (target <= 1.03)")
PY
