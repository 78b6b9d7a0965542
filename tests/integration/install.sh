#!/bin/bash
# `cmake --install` puts alloclab into bin/ and the example specs into share/alloclab/examples,
# and the installed binary runs an installed example.
. "$(dirname "$0")/lib.sh"
: "${BUILD_DIR:?BUILD_DIR must point to the build tree}"

cmake --install "$BUILD_DIR" --prefix "$WORK/prefix" >/dev/null
[[ -x "$WORK/prefix/bin/alloclab" ]] || fail "alloclab not installed into bin/"
[[ -f "$WORK/prefix/share/alloclab/examples/quickstart.yaml" ]] || fail "examples not installed"
ALLOCLAB="$WORK/prefix/bin/alloclab" run_alloclab 0 check "$WORK/prefix/share/alloclab/examples/quickstart.yaml"
ls "$WORK"/prefix/lib*/alloclab/liballoclab-probe.so >/dev/null 2>&1 || fail "probe not installed"
# The installed binary finds the installed probe.
ALLOCLAB="$WORK/prefix/bin/alloclab" run_alloclab 0 census --json -- "$WORKLOAD" which
expect_contains "$OUT" '"loaded": true' "installed census"
