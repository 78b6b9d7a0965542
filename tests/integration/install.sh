#!/bin/bash
# `cmake --install` puts alloclab into bin/, the example specs into share/alloclab/examples, the
# suite's workloads into LIBDIR/alloclab/workloads and the bash and zsh completions where those
# shells look,
# and the installed binary runs an installed example.
. "$(dirname "$0")/lib.sh"
: "${BUILD_DIR:?BUILD_DIR must point to the build tree}"

cmake --install "$BUILD_DIR" --prefix "$WORK/prefix" >/dev/null
[[ -x "$WORK/prefix/bin/alloclab" ]] || fail "alloclab not installed into bin/"
[[ -f "$WORK/prefix/share/alloclab/examples/quickstart.yaml" ]] || fail "examples not installed"
ALLOCLAB="$WORK/prefix/bin/alloclab" run_alloclab 0 check "$WORK/prefix/share/alloclab/examples/quickstart.yaml"
ls "$WORK"/prefix/lib*/alloclab/liballoclab-probe.so >/dev/null 2>&1 || fail "probe not installed"
ls "$WORK"/prefix/lib*/alloclab/alloclab-spawner >/dev/null 2>&1 || fail "spawner not installed"
# The installed binary finds the installed probe.
ALLOCLAB="$WORK/prefix/bin/alloclab" run_alloclab 0 census --json -- "$WORKLOAD" which
expect_contains "$OUT" '"loaded": true' "installed census"
# The installed binary finds the installed workloads and runs one.
ALLOCLAB="$WORK/prefix/bin/alloclab" run_alloclab 0 suite larson --threads 1 --scale 2 --samples 1 \
    --allocators glibc,jemalloc --quiet
expect_contains "$OUT" "larson" "installed suite"
expect_contains "$(q 'SELECT yaml FROM specs')" "$WORK/prefix/lib" "the installed workloads' directory"

# Shell completions: installed where bash-completion and zsh look, and bash's answers.
bash_completion="$WORK/prefix/share/bash-completion/completions/alloclab"
[[ -f $bash_completion ]] || fail "bash completion not installed"
[[ -f $WORK/prefix/share/zsh/vendor-completions/_alloclab ]] || fail "zsh completion not installed"
complete_words() { # WORDS...: what bash completes for the last word, with this alloclab on PATH
    PATH="$(dirname "$ALLOCLAB"):$PATH" bash -c \
        'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _alloclab; echo "${COMPREPLY[*]}"' \
        _ "$bash_completion" "$@"
}
expect_eq "$(complete_words alloclab ru)" "run runs" "bash: commands"
expect_eq "$(complete_words alloclab compare 1 2 --f)" "--format --fail-on" "bash: a command's options"
expect_eq "$(complete_words alloclab show --format "")" "table markdown csv json" "bash: an option's values"
expect_eq "$(complete_words alloclab status --format "")" "table json" "bash: the daemon's formats"
expect_eq "$(complete_words alloclab quick -a je)" "jemalloc" "bash: quick's allocators"
# The names are the catalog's (alloclab allocators --names): scudo was missing from a list by hand.
expect_eq "$(complete_words alloclab census --preload sc)" "scudo" "bash: the catalog's allocators"
if command -v zsh >/dev/null; then
    zsh -n "$WORK/prefix/share/zsh/vendor-completions/_alloclab" || fail "zsh completion does not parse"
else
    echo "zsh not installed: the zsh completion is not parsed (apt-get install zsh)"
fi
