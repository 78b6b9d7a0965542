#!/bin/bash
# Submit acknowledgement under load: CLIENTS clients connect to one alloclabd at once and each
# submits the quickstart-shaped spec (4 cells x 4 variants: glibc, jemalloc, mimalloc,
# tcmalloc), each under its own experiment name (no two requests alike); each measures from its
# first byte sent to the reply (the job is stored by then).
# The clients run as nobody when the script runs as root. Prints p50, p90, p99 and max of the acknowledgement times, and the daemon's Ping latency
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
${DAEMON_WRAP:-} "$alloclabd" --db "$work/results.db" --socket "$work/ctl.sock" --specs-dir "$work/none" 2>"$work/daemon.log" &
daemon=$!
for _ in $(seq 100); do [[ -S $work/ctl.sock ]] && break; sleep 0.05; done
cat >"$work/spec.yaml" <<'YAML'
experiment: submitted-@N@
command: [sleep, "{n}"]
params: {n: ["10", "20"], w: ["1", "2"]}
allocators:
  glibc: {}
  jemalloc: {preload: jemalloc}
  mimalloc: {preload: mimalloc}
  tcmalloc: {preload: tcmalloc_minimal}
samples: 7
YAML

# The request each client sends: the spec's text, as `alloclab submit` sends it.
python3 -c 'import json, os, sys
spec = open(sys.argv[1]).read()
print(json.dumps({"method": "io.alloclab.Submit", "parameters": {
    "spec_path": sys.argv[1], "spec": spec, "cwd": os.path.dirname(sys.argv[1]),
    "env": ["PATH=/usr/bin:/bin"]}}), end="")' "$work/spec.yaml" >"$work/request.json"
cpu() { awk '{ print ($14 + $15) * 1000 / '"$(getconf CLK_TCK)"' }' "/proc/$daemon/stat"; }
before=$(cpu)
# Submitters are users, not root: the daemon checks each spec with the submitter's identity.
as_user=()
if [[ $(id -u) == 0 ]] && command -v setpriv >/dev/null; then
    chmod 0755 "$work"
    chmod 0666 "$work/ctl.sock" # as the unit's socket (docs/architecture.md)
    as_user=(setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups)
fi
"${as_user[@]}" "$build/bench/submit-flood" "$work/ctl.sock" "$work/request.json" "$clients"
echo "daemon CPU for the burst: $(( $(cpu) - before )) ms ($(( ($(cpu) - before) * 1000 / clients )) us per submission)"
kill -TERM "$daemon"
wait "$daemon" || true
daemon=
