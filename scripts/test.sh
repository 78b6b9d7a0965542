#!/bin/bash
# README quick start, command 2 (and CI): install what is missing (as root), build with
# warnings as errors, run the whole test suite.
set -euo pipefail
ALLOCLAB_ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ALLOCLAB_ROOT/scripts/deps.sh"

# tests/integration/report.sh renders the HTML report; slurm.sh makes a Slurm cluster; install.sh
# parses the zsh completion; man.sh lints the man pages; deb.sh builds and installs the package;
# schema.sh validates the example specs against docs/spec.schema.json; interop.sh reads and
# writes hyperfine's JSON; bundle.sh watches which files import opens; allocators.sh preloads
# LLVM's Scudo from libclang-rt-14-dev; maxrss.sh checks peak RSS against GNU time's; probe.sh
# builds a C++ program; build.sh and bisect.sh make git repositories of an allocator; suite.sh
# runs the lua5.4 workload; source.sh unpacks Debian's jemalloc source (dpkg-source); instructions.sh
# counts instructions with valgrind's callgrind.
alloclab_install_deps chromium fonts-liberation slurm-wlm munge zsh mandoc dpkg-dev debhelper \
    python3-jsonschema python3-yaml hyperfine strace libclang-rt-14-dev time g++ git lua5.4 valgrind
alloclab_build "$ALLOCLAB_ROOT/build-test" -DALLOCLAB_WERROR=ON -DBUILD_TESTING=ON

# What could not be tested here, and why: every test that skips itself or a part of itself
# (tests/integration/lib.sh skip_test, skip_part; a timing check on a busy machine, a test that
# needs root or a package) says so in this file, listed at the end, whatever the outcome.
export ALLOCLAB_SKIP_LOG="$ALLOCLAB_ROOT/build-test/skipped.txt"
: >"$ALLOCLAB_SKIP_LOG"
list_skips() {
    local n
    n=$(sort -u "$ALLOCLAB_SKIP_LOG" | grep -c . || true)
    echo
    echo "Skipped here: $n test$([[ $n == 1 ]] || echo s) or parts of tests"
    sort -u "$ALLOCLAB_SKIP_LOG" | sed 's/^/  /'
}
trap list_skips EXIT

cd "$ALLOCLAB_ROOT/build-test"
ctest --output-on-failure -j "$(nproc)"

# Everything once more under AddressSanitizer and UBSan, every finding fatal: the unit and
# integration tests (real children, the real daemon) and the fuzz targets of the parsers of what
# children, runner processes and users write.
# Tests labelled 'timing' judge measured time, which the sanitizers' own cost in the runner
# biases, and 'package' builds the .deb its own way; they ran in the plain pass above.
alloclab_build "$ALLOCLAB_ROOT/build-asan" -DALLOCLAB_SANITIZE=ON -DBUILD_TESTING=ON
cd "$ALLOCLAB_ROOT/build-asan"
echo "sanitized pass: every test but those labelled 'timing' or 'package' ($(ctest -N -L 'timing|package' | grep -c 'Test #') of them, run above)"
ctest --output-on-failure -j "$(nproc)" -LE 'timing|package'
