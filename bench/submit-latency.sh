#!/bin/bash
# Submit acknowledgement under load: CLIENTS clients connect to one alloclabd at once and each
# submits the quickstart-shaped spec (4 cells x 4 variants: glibc, jemalloc, mimalloc,
# tcmalloc); each measures from its first byte sent to the reply (the job is stored by then).
# Prints p50, p90, p99 and max of the acknowledgement times, and the daemon's Ping latency
# measured meanwhile by another client. Target (issue 12): p99 under 100 ms for 1000 clients.
# The jobs then run one after another; the script cancels them and stops the daemon.
#
#   bench/submit-latency.sh [BUILD_DIR] [CLIENTS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
clients=${2:-1000}
alloclabd=$build/daemon/alloclabd
[[ -x $alloclabd ]] || { echo "build alloclabd first ($alloclabd missing)" >&2; exit 1; }

work=$(mktemp -d)
daemon=
trap '[[ -n $daemon ]] && kill -9 $daemon 2>/dev/null; [[ -n ${KEEP:-} ]] || rm -rf "$work"' EXIT
ulimit -n 4096
"$alloclabd" --db "$work/results.db" --socket "$work/ctl.sock" --specs-dir "$work/none" 2>"$work/daemon.log" &
daemon=$!
for _ in $(seq 100); do [[ -S $work/ctl.sock ]] && break; sleep 0.05; done
cat >"$work/spec.yaml" <<'YAML'
experiment: submitted
command: [sleep, "{n}"]
params: {n: ["10", "20"], w: ["1", "2"]}
allocators:
  glibc: {}
  jemalloc: {preload: jemalloc}
  mimalloc: {preload: mimalloc}
  tcmalloc: {preload: tcmalloc_minimal}
samples: 7
YAML

python3 - "$work/ctl.sock" "$work/spec.yaml" "$clients" <<'PY'
import asyncio, json, os, sys, time

path, spec_path, clients = sys.argv[1], sys.argv[2], int(sys.argv[3])
spec = open(spec_path).read()
request = json.dumps({"method": "io.alloclab.Submit", "parameters": {
    "spec_path": spec_path, "spec": spec, "cwd": os.path.dirname(spec_path),
    "env": ["PATH=/usr/bin:/bin"]}}).encode() + b"\0"

async def call(req):
    reader, writer = await asyncio.open_unix_connection(path)
    t0 = time.perf_counter()
    writer.write(req)
    await writer.drain()
    reply = await reader.readuntil(b"\0")
    dt = time.perf_counter() - t0
    writer.close()
    return dt, json.loads(reply[:-1])

async def pinger(stop, out):
    ping = json.dumps({"method": "io.alloclab.Ping"}).encode() + b"\0"
    while not stop.is_set():
        dt, _ = await call(ping)
        out.append(dt)
        await asyncio.sleep(0.01)

async def main():
    stop, pings = asyncio.Event(), []
    p = asyncio.create_task(pinger(stop, pings))
    results = await asyncio.gather(*(call(request) for _ in range(clients)))
    stop.set()
    await p
    failed = [r for _, r in results if "error" in r]
    if failed:
        sys.exit(f"{len(failed)} submissions failed, e.g. {failed[0]}")
    times = sorted(dt for dt, _ in results)
    q = lambda s, f: s[min(len(s) - 1, int(f * len(s)))] * 1000
    print(f"{clients} concurrent submissions: ack p50 {q(times, .5):.1f} ms, p90 {q(times, .9):.1f} ms, "
          f"p99 {q(times, .99):.1f} ms, max {times[-1] * 1000:.1f} ms")
    pings.sort()
    print(f"Ping meanwhile ({len(pings)}): p50 {q(pings, .5):.1f} ms, max {pings[-1] * 1000:.1f} ms")

asyncio.run(main())
PY
kill -TERM "$daemon"
wait "$daemon" || true
daemon=
