#!/bin/bash
# The Debian package: dpkg-buildpackage -us -uc -b builds it from a copy of the source tree; it
# installs, creates the alloclab group, enables the socket unit (and starts it where systemd
# runs); the installed alloclabd takes a job from the installed alloclab and runs it with the
# installed probe and allocators; purging removes the programs and the database.
. "$(dirname "$0")/lib.sh"
SOURCE=$(cd "$(dirname "$0")/../.." && pwd)

if [[ $(id -u) != 0 ]]; then
    skip_test "installing a package needs root"
fi
for tool in dpkg-buildpackage dh; do
    command -v $tool >/dev/null || skip_test "$tool missing (apt-get install dpkg-dev debhelper)"
done
if dpkg-query -W -f='${Status}' alloclab 2>/dev/null | grep -q 'install ok installed'; then
    skip_test "an alloclab package is installed on this machine; not replacing it"
fi

# Build from a copy: dpkg-buildpackage writes into the tree and beside it.
mkdir "$WORK/src"
(cd "$SOURCE" && { git ls-files -co --exclude-standard 2>/dev/null || find . -type f -not -path './build*' -not -path './.git/*'; } |
    grep -v '^build' | tar -cf - -T -) | tar -xf - -C "$WORK/src"
(cd "$WORK/src" && dpkg-buildpackage -us -uc -b >"$WORK/build.log" 2>&1) || fail "dpkg-buildpackage failed:
$(tail -30 "$WORK/build.log")"
deb=$(ls "$WORK"/alloclab_*_*.deb)
contents=$(dpkg -c "$deb")
for path in ./usr/bin/alloclab ./usr/sbin/alloclabd ./lib/systemd/system/alloclabd.socket \
    ./usr/share/man/man1/alloclab.1.gz ./usr/share/man/man5/alloclab-spec.5.gz ./usr/share/man/man8/alloclabd.8.gz \
    ./usr/lib/sysusers.d/alloclab.conf; do
    expect_contains "$contents" "$path" "the package's files"
done
expect_contains "$contents" "alloclab/liballoclab-probe.so" "the probe"
expect_contains "$contents" "alloclab/alloclab-spawner" "the spawner, which starts every child"
expect_contains "$contents" "alloclab/workloads/alloclab-stress" "the suite's workloads"

# Install; whatever happens next, purge it again (and the group, when this test made it).
group_before=$(getent group alloclab || true)
cleanup() {
    [[ -n ${daemon:-} ]] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
    dpkg --purge alloclab >/dev/null 2>&1 || true
    [[ -z $group_before ]] && getent group alloclab >/dev/null && groupdel alloclab
    rm -rf "$WORK"
}
trap cleanup EXIT
dpkg -i "$deb" >"$WORK/install.log" 2>&1 || fail "dpkg -i failed:
$(cat "$WORK/install.log")"
getent group alloclab >/dev/null || fail "the package made no alloclab group"
[[ -L /etc/systemd/system/sockets.target.wants/alloclabd.socket ]] || fail "alloclabd.socket not enabled"
[[ ! -e /etc/systemd/system/multi-user.target.wants/alloclabd.service ]] || fail "the service itself was enabled"
if [[ -d /run/systemd/system ]]; then
    systemctl is-active --quiet alloclabd.socket || fail "alloclabd.socket not started"
    socket=/run/alloclab/control.sock
else
    # No systemd here (a container): the installed daemon, started by hand, stands in for it.
    echo "systemd is not running: starting the installed alloclabd by hand"
    socket="$WORK/control.sock"
    /usr/sbin/alloclabd --db "$WORK/daemon.db" --socket "$socket" --specs-dir "$WORK" 2>"$WORK/daemon.log" &
    daemon=$!
    for _ in $(seq 100); do [[ -S $socket ]] && break; sleep 0.1; done
fi
cat >"$WORK/spec.yaml" <<YAML
experiment: deb
command: ["$WORKLOAD", which]
allocators:
  glibc: {}
  jemalloc: {preload: jemalloc}
samples: 2
warmup: 0
YAML
ALLOCLAB_SOCKET=$socket ALLOCLAB=/usr/bin/alloclab run_alloclab 0 submit "$WORK/spec.yaml" --wait
expect_contains "$OUT" "jemalloc" "the installed daemon's table"
ALLOCLAB=/usr/bin/alloclab run_alloclab 0 suite --list
expect_contains "$OUT" "larson" "the installed suite"

if [[ -n ${daemon:-} ]]; then
    kill "$daemon"
    wait "$daemon" || true
    daemon=
fi
dpkg --purge alloclab >"$WORK/purge.log" 2>&1 || fail "dpkg --purge failed: $(cat "$WORK/purge.log")"
[[ ! -e /usr/bin/alloclab && ! -e /usr/sbin/alloclabd ]] || fail "purge left the programs"
[[ ! -e /var/lib/alloclab ]] || fail "purge left /var/lib/alloclab"
[[ ! -e /etc/systemd/system/sockets.target.wants/alloclabd.socket ]] || fail "purge left the socket enabled"
