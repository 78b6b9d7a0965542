#!/bin/bash
# Import at scale: a history of RUNS runs (1,000,000 samples for 1,000: bench/history-db.sh) is
# exported to one bundle and imported into an empty database and into one holding a copy of
# itself (every run present: the check alone). Prints the time of each step and samples/s.
# Target (issue 13): importing 1M samples under 30 s.
#
#   bench/import.sh [BUILD_DIR] [RUNS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
runs=${2:-1000}
alloclab=$build/cli/alloclab
command -v sqlite3 >/dev/null || { echo "sqlite3 is needed: apt-get install sqlite3" >&2; exit 1; }
[[ -x $alloclab ]] || { echo "build alloclab first ($alloclab missing)" >&2; exit 1; }

work=$(mktemp -d)
[[ -n ${KEEP:-} ]] || trap 'rm -rf "$work"' EXIT
"$root/bench/history-db.sh" "$build" "$work/source.db" "$runs"
samples=$(sqlite3 "$work/source.db" "SELECT count(*) FROM samples")

timed() { # WHAT COMMAND...: runs it, prints its wall time
    local start end
    start=$(date +%s.%N)
    "${@:2}" >/dev/null
    end=$(date +%s.%N)
    printf '  %-44s %6.1f s  (%.0f samples/s)\n' "$1" "$(echo "$end - $start" | bc)" \
        "$(echo "$samples / ($end - $start)" | bc -l)"
}
timed "export all --bundle" "$alloclab" export all --bundle "$work/all.bundle" --db "$work/source.db"
printf '  bundle: %s MiB\n' "$(( $(stat -c %s "$work/all.bundle") / 1048576 ))"
timed "import into an empty database" "$alloclab" import "$work/all.bundle" --db "$work/target.db"
timed "import again (every run present)" "$alloclab" import "$work/all.bundle" --db "$work/target.db"
[[ $(sqlite3 "$work/target.db" "SELECT count(*) FROM samples") == "$samples" ]] || { echo "samples lost" >&2; exit 1; }
