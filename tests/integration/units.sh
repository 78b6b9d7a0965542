#!/bin/bash
# The systemd units are valid: systemd-analyze verify is clean for the service and the socket
# (with ExecStart pointed at the binary just built), and the service's exposure is what the
# README states.
. "$(dirname "$0")/lib.sh"
: "${ALLOCLABD:?}" "${BUILD_DIR:?}"
command -v systemd-analyze >/dev/null || fail "systemd-analyze missing (apt-get install systemd)"

sed "s|^ExecStart=[^ ]*|ExecStart=$ALLOCLABD|" "$BUILD_DIR/daemon/alloclabd.service" >"$WORK/alloclabd.service"
cp "$BUILD_DIR/daemon/alloclabd.socket" "$WORK/alloclabd.socket"
out=$(cd "$WORK" && systemd-analyze verify ./alloclabd.service ./alloclabd.socket 2>&1) || fail "verify: $out"
expect_eq "$out" "" "systemd-analyze verify output"
exposure=$(systemd-analyze security --offline=true "$WORK/alloclabd.service" 2>/dev/null | grep -o 'Overall exposure level for alloclabd.service: [0-9.]*')
expect_eq "$exposure" "Overall exposure level for alloclabd.service: 7.6" "security exposure"
