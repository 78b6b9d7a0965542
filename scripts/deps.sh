# Installs the Debian packages alloclab needs when they are missing. Sourced by quickstart.sh
# and test.sh. As root it runs apt-get; otherwise it prints the command and fails.

ALLOCLAB_PACKAGES=(
    # build
    gcc make cmake pkg-config
    # libraries (pkg-config names: libsystemd sqlite3 yaml-0.1 libxxhash jansson cmocka)
    libsystemd-dev libsqlite3-dev libyaml-dev libxxhash-dev libjansson-dev libcmocka-dev
    # the allocators under test
    libjemalloc-dev libmimalloc-dev libgoogle-perftools-dev libtbbmalloc2
    # the quickstart workload and the integration tests
    python3 sqlite3 procps systemd
    # the formatting check (style/clang-format)
    clang-format
)

alloclab_missing_packages() {
    local p
    for p in "${ALLOCLAB_PACKAGES[@]}" "$@"; do
        dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || echo "$p"
    done
}

# alloclab_install_deps [EXTRA_PACKAGE...]
alloclab_install_deps() {
    local missing
    missing=$(alloclab_missing_packages "$@")
    [[ -z "$missing" ]] && return 0
    if [[ $(id -u) != 0 ]]; then
        echo "missing packages; install them with:" >&2
        echo "  sudo apt-get install -y" $missing >&2
        return 1
    fi
    echo "installing:" $missing >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

# alloclab_build BUILD_DIR [CMAKE_ARGS...] [-- TARGET...]: everything, or only the targets.
alloclab_build() {
    local dir=$1 args=() targets=()
    shift
    while [[ $# -gt 0 && $1 != -- ]]; do args+=("$1"); shift; done
    [[ $# -gt 0 ]] && shift && targets=(--target "$@")
    cmake -S "$ALLOCLAB_ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${args[@]}" >/dev/null
    cmake --build "$dir" -j "$(nproc)" "${targets[@]}"
}
