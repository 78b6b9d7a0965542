#!/bin/bash
# The man pages alloclab(1), alloclab-spec(5) and alloclabd(8): clean under mandoc's lint,
# installed where man looks, and current: every command of `alloclab --help` and every key the
# spec loader accepts is described.
. "$(dirname "$0")/lib.sh"
: "${BUILD_DIR:?BUILD_DIR must point to the build tree}"
SOURCE=$(cd "$(dirname "$0")/../.." && pwd)
MAN="$SOURCE/docs/man"

if command -v mandoc >/dev/null; then
    for page in "$MAN"/*.[158]; do
        lint=$(mandoc -T lint -W warning "$page" 2>&1) || true
        [[ -z $lint ]] || fail "mandoc lint of $(basename "$page"):
$lint"
    done
else
    echo "mandoc not installed: the pages are not linted (apt-get install mandoc)"
fi

# Every command.
run_alloclab 0 --help
commands=$(awk '/^Commands:/ { on = 1; next } on && NF == 0 { exit } on { print $1 }' <<<"$OUT")
[[ $(wc -w <<<"$commands") -gt 10 ]] || fail "no commands in alloclab --help"
for c in $commands; do
    grep -Eq "^\.It Cm $c( |$)" "$MAN/alloclab.1" || fail "alloclab(1) does not describe '$c'"
done

# Every spec key, and every key of a variant.
keys=$(grep -o '{ "[a-z_0-9]*", parse_' "$SOURCE/configs/spec-load.c" | cut -d'"' -f2 | sort -u)
[[ $(wc -w <<<"$keys") -gt 30 ]] || fail "no keys found in configs/spec-load.c"
for k in $keys; do
    grep -Eq "^\.It Cm ([a-z_]+ , )*$k( |,|$)|Cm $k( |$)" "$MAN/alloclab-spec.5" || fail "alloclab-spec(5) does not describe '$k'"
done

# Installed where man finds them.
cmake --install "$BUILD_DIR" --prefix "$WORK/prefix" >/dev/null
for page in man1/alloclab.1 man5/alloclab-spec.5 man8/alloclabd.8; do
    [[ -f $WORK/prefix/share/man/$page ]] || fail "$page not installed"
done
found=$(man -M "$WORK/prefix/share/man" -w alloclab-spec)
expect_eq "$found" "$WORK/prefix/share/man/man5/alloclab-spec.5" "man finds alloclab-spec(5)"
rendered=$(MANWIDTH=80 man -M "$WORK/prefix/share/man" 8 alloclabd 2>/dev/null)
expect_contains "$rendered" "queue and run alloclab experiments one at a time" "alloclabd(8) renders"
