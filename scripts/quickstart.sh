#!/bin/bash
# README quick start, command 1: install what is missing (as root), build, and run the
# quickstart experiment, printing its table. Extra arguments go to `alloclab run`.
set -euo pipefail
ALLOCLAB_ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ALLOCLAB_ROOT/scripts/deps.sh"

alloclab_install_deps
alloclab_build "$ALLOCLAB_ROOT/build" >/dev/null
exec "$ALLOCLAB_ROOT/build/cli/alloclab" run "$ALLOCLAB_ROOT/configs/examples/quickstart.yaml" "$@"
