#!/bin/bash
# Command-line surface: help, version, usage errors, the allocator catalog.
. "$(dirname "$0")/lib.sh"

run_alloclab 0 --version
expect_contains "$OUT" "alloclab " "version"
run_alloclab 0 --help
help=$OUT
for c in run check runs show allocators; do
    expect_contains "$help" "  $c " "command list"
    run_alloclab 0 "$c" --help
    expect_contains "$OUT" "Usage: alloclab $c" "$c --help"
done
run_alloclab 2
run_alloclab 2 frobnicate
run_alloclab 2 run
run_alloclab 2 run a.yaml b.yaml
run_alloclab 2 run a.yaml --format xml
run_alloclab 2 run a.yaml --samples 0

run_alloclab 0 allocators
for name in glibc jemalloc mimalloc tcmalloc tcmalloc_minimal tbbmalloc; do
    expect_contains "$OUT" "$name " "catalog entry"
done
expect_contains "$OUT" "libjemalloc.so.2" "jemalloc path"
sha=$(sha256sum "$(grep -o '/[^ ]*libmimalloc.so.2' <<<"$OUT")" | cut -d' ' -f1)
expect_contains "$OUT" "$sha" "mimalloc sha256"

# The default database: $XDG_DATA_HOME/alloclab/results.db, else ~/.local/share/alloclab.
cat >"$WORK/true.yaml" <<YAML
experiment: default-db
command: [/bin/true]
allocators: {glibc: {}}
samples: 1
YAML
(
    unset ALLOCLAB_DB XDG_DATA_HOME
    export HOME="$WORK/home"
    run_alloclab 0 run "$WORK/true.yaml" --quiet
    [[ -f "$WORK/home/.local/share/alloclab/results.db" ]] || fail "no database under HOME"
    XDG_DATA_HOME="$WORK/xdg" run_alloclab 0 run "$WORK/true.yaml" --quiet
    [[ -f "$WORK/xdg/alloclab/results.db" ]] || fail "no database under XDG_DATA_HOME"
    run_alloclab 0 runs
    expect_contains "$OUT" "default-db" "runs reads the default database"
)

# Every command that prints data honours --format json, or refuses a format it cannot print.
run_alloclab 0 run "$WORK/true.yaml" --quiet
run_alloclab 0 runs --format json
python3 -c 'import json, sys; r = json.load(sys.stdin); assert r and len(r[0]["uuid"]) == 36 and r[0]["run_id"] >= 1, r' \
    <<<"$OUT" || fail "runs --format json: $OUT"
run_alloclab 0 runs --format csv
expect_contains "$(head -1 <<<"$OUT")" "run_id,uuid,experiment,status" "runs --format csv"
run_alloclab 0 show --allocators --format json
python3 -c 'import json, sys; v = json.load(sys.stdin); assert v[0]["variant"] and "sha256" in v[0] and "probe" in v[0], v' \
    <<<"$OUT" || fail "show --allocators --format json: $OUT"
run_alloclab 2 show --allocators --format csv
expect_contains "$ERR" "--allocators prints a table or JSON" "show --allocators refuses csv"
run_alloclab 0 allocators --format json
expect_eq "$(python3 -c 'import json, sys; print(next(a["installed"] for a in json.load(sys.stdin) if a["name"] == "glibc"))' <<<"$OUT")" \
    True "allocators --format json"
run_alloclab 2 allocators --format csv

# Colour: verdicts and failures on a terminal, never with NO_COLOR, never into a pipe.
cat >"$WORK/colour.yaml" <<YAML
experiment: colour
command: ["$WORKLOAD", which]
allocators:
  glibc: {}
  crashing: {command: ["$WORKLOAD", crash]}
samples: 1
warmup: 0
YAML
run_alloclab 9 run "$WORK/colour.yaml" --quiet
esc=$'\033['
[[ $OUT != *"$esc"* ]] || fail "colour into a pipe"
CLICOLOR_FORCE=1 run_alloclab 0 show
expect_contains "$OUT" "${esc}1;31mCRASH SIGSEGV${esc}0m" "the failure in red"
NO_COLOR=1 CLICOLOR_FORCE=1 run_alloclab 0 show
[[ $OUT != *"$esc"* ]] || fail "colour despite NO_COLOR"
tty_out=$(TERM=xterm script -qec "$ALLOCLAB show" /dev/null)
expect_contains "$tty_out" "${esc}1;31mCRASH SIGSEGV${esc}0m" "colour on a terminal"
tty_out=$(TERM=xterm NO_COLOR=1 script -qec "$ALLOCLAB show" /dev/null)
[[ $tty_out != *"$esc"* ]] || fail "colour on a terminal despite NO_COLOR"

# Output that cannot be written is an error, in every format (tables, CSV and Markdown exited 0).
for args in "show" "show --format csv" "show --format markdown" "runs" "export --what samples"; do
    rc=0
    "$ALLOCLAB" $args >/dev/full 2>"$WORK/full.err" || rc=$?
    expect_eq "$rc" 4 "alloclab $args >/dev/full"
    expect_eq "$(cat "$WORK/full.err")" "alloclab: cannot write the output: No space left on device" "what $args says"
done

# Small things a new user trips on (issue 27, item 10; each failed on 54e620f).
cat >"$WORK/piped.yaml" <<YAML
experiment: piped
command: [echo, "{rows}"]
params: {rows: ["1"]}
allocators: {glibc: {}}
YAML
run_alloclab 0 check - <"$WORK/piped.yaml"
run_alloclab 0 check <(cat "$WORK/piped.yaml")
run_alloclab 3 run <(cat "$WORK/piped.yaml")
expect_contains "$ERR" "not a regular file (a pipe or a device); run needs a spec file, alloclab check also reads one from a pipe" \
    "run of a pipe says what reads one"
run_alloclab 2 check "$WORK/piped.yaml" --format json
expect_contains "$ERR" "unknown option '--format': check takes one SPEC" "check names the unknown option"
sed 's/"{rows}"/"{rowz}"/' "$WORK/piped.yaml" >"$WORK/typo.yaml"
run_alloclab 3 check - <"$WORK/typo.yaml"
expect_contains "$ERR" "-:2:19: undefined parameter '{rowz}' (did you mean 'rows'?)" "a near-miss parameter name"
run_alloclab 2 suite --list --format json
expect_contains "$ERR" "--list prints a list, in no other format" "suite --list refuses --format"
run_alloclab 2 suite larson --print-spec --format markdown
expect_contains "$ERR" "--print-spec prints YAML, in no other format" "suite --print-spec refuses --format"
run_alloclab 2 quick -a glibc --print-spec --format csv -- true
expect_contains "$ERR" "--print-spec prints YAML, in no other format" "quick --print-spec refuses --format"
run_alloclab 2 export latest --what hyperfine --format csv
expect_contains "$ERR" "--what hyperfine writes hyperfine's JSON layout, in no other format" "hyperfine export refuses csv"
