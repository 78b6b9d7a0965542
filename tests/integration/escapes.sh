#!/bin/bash
# What others wrote reaches a terminal, a file or a page only escaped (issue 25, item 3): a
# child that prints terminal escape sequences (clear the screen, set the title), a C1 control,
# a right-to-left override and a newline to its stderr and fails is shown by run, show (table,
# markdown, csv) with every control character escaped, and the HTML report stays
# well-formed XML (a noncharacter, U+FFFE, in it too). JSON keeps the text as it was (JSON escapes it itself).
. "$(dirname "$0")/lib.sh"

cat >"$WORK/loud.sh" <<'SH'
#!/bin/sh
printf '\033[2J\033]0;owned\007\302\23331m\342\200\256evil\357\277\276\nsecond line\n' >&2
exit 3
SH
chmod +x "$WORK/loud.sh"
cat >"$WORK/loud.yaml" <<YAML
experiment: loud
command: ["$WORK/loud.sh"]
allocators: {glibc: {}}
samples: 1
warmup: 0
probe: never
YAML
raw() { # TEXT: whether it holds ESC, BEL, CSI (U+009B) or the override U+202E
    [[ $1 == *$'\e'* || $1 == *$'\a'* || $1 == *$'\xc2\x9b'* || $1 == *$'\xe2\x80\xae'* ]]
}
run_alloclab 9 run "$WORK/loud.yaml"
! raw "$OUT$ERR" || fail "run printed control characters: $OUT"
expect_contains "$OUT" 'stderr: \x1b[2J\x1b]0;owned\x07\u{009b}31m\u{202e}evil\u{fffe}' "run shows the stderr escaped"
[[ $OUT != *"second line"* ]] || fail "a child's second stderr line in the table"
for format in table markdown csv; do
    run_alloclab 0 show --format "$format"
    ! raw "$OUT" || fail "show --format $format printed control characters"
done
run_alloclab 0 export --what samples --format csv
! raw "$OUT" || fail "export printed control characters"
run_alloclab 0 show --format json
expect_contains "$OUT" '\u001B[2J\u001B]0;owned\u0007' "JSON keeps the text, escaped as JSON"
# Markdown: a '|' in a cell would open a column, a '<b>' would be HTML where it is shown.
cat >"$WORK/md.yaml" <<YAML
experiment: md
command: [sh, -c, 'echo "<b>bold</b> & co [link](http://x.example) **b**" >&2; exit 1']
params: {p: ["a|b<i>&amp;"]}
allocators: {glibc: {}}
samples: 1
warmup: 0
probe: never
YAML
run_alloclab 9 run "$WORK/md.yaml" --format markdown
row=$(grep '^| p=' <<<"$OUT")
expect_eq "$(tr -cd '|' <<<"${row//\\|/}" | wc -c)" 3 "a row of two columns: $row"
[[ $OUT != *"<i>"* && $OUT != *"<b>"* ]] || fail "HTML passed into Markdown: $OUT"
expect_contains "$OUT" "&lt;b&gt;bold&lt;/b&gt; &amp; co" "stderr as text in Markdown"
expect_contains "$OUT" '\[link](http://x.example) \*\*b\*\*' "Markdown's syntax in stderr, escaped (a live link)"
# Markdown's own syntax in a value is shown as text (a '*' or '_' made emphasis, '~' struck out).
cat >"$WORK/syntax.yaml" <<'YAML'
experiment: syntax
command: [/bin/true]
params: {p: ["*a* _b_ ~c~ `d` [e](f)"]}
allocators: {glibc: {}}
samples: 1
warmup: 0
probe: never
YAML
run_alloclab 0 run "$WORK/syntax.yaml" --format markdown --db "$WORK/syntax.db"
expect_contains "$OUT" '| p=\*a\* \_b\_ \~c\~ \`d\` \[e](f) |' "Markdown's syntax escaped in a cell"
# Messages are lines: a newline in a program's path or a spec's text does not start another
# (it forged a line of diagnostics, or of compare's differences).
printf 'experiment: e\ncommand: ["/nope\\nFORGED: all is well"]\nallocators: {glibc: {}}\n' >"$WORK/newline.yaml"
run_alloclab 4 check "$WORK/newline.yaml"
expect_eq "$ERR" "$WORK/newline.yaml:2:10: cannot run '/nope\x0aFORGED: all is well': No such file or directory" "a newline in a diagnostic"
printf 'experiment: e\nbogus: "x\\ny"\ncommand: [/bin/true]\nallocators: {glibc: {}}\n' >"$WORK/newline.yaml"
run_alloclab 3 check "$WORK/newline.yaml"
expect_eq "$(wc -l <<<"$ERR")" 1 "one line for one problem: $ERR"
for d in 'one\nFORGED' 'two\nFORGED'; do
    printf 'experiment: described\ndescription: "%s"\ncommand: [/bin/true]\nallocators: {glibc: {}}\nsamples: 1\nwarmup: 0\nprobe: never\n' "$d" >"$WORK/described.yaml"
    run_alloclab 0 run "$WORK/described.yaml" --quiet --db "$WORK/described.db"
done
run_alloclab 7 compare 1 2 --db "$WORK/described.db" # NOT COMPARABLE: exit 7
expect_contains "$OUT" 'spec description: one\x0aFORGED -> two\x0aFORGED' "compare's difference on one line"
# A stored text with a newline (an imported run's message or exclusion reason) does not start a
# line of its own in show's note or in a table cell (it forged "md run 9: done").
sqlite3 "$DB" "UPDATE runs SET message = 'ok' || char(10) || 'FORGED run 9: done' WHERE id = 1;
               UPDATE exclusions SET reason = 'R1' || char(10) || 'FORGED-REASON'"
run_alloclab 0 show 1
[[ $OUT != *$'\n'FORGED* ]] || fail "a stored newline started a line: $OUT"
expect_contains "$OUT" 'note: ok\x0aFORGED run 9: done' "the note on one line"
printf 'experiment: named\ncommand: [/bin/true]\nallocators: {glibc: {}}\n' >"$WORK/"$'x\nFORGED.yaml'
run_alloclab 0 check "$WORK/"$'x\nFORGED.yaml'
expect_contains "$OUT" 'x\x0aFORGED.yaml: ok: ' "check's line, whatever the file's name"
run_alloclab 0 report 1 -o "$WORK/loud.html" # U+FFFE in it: no XML reader takes the page
python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$WORK/loud.html" ||
    fail "the report is not well-formed XML"
! raw "$(cat "$WORK/loud.html")" || fail "the report holds control characters"
exit 0
