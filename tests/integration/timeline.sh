#!/bin/bash
# Memory over time (spec memory_timeline): the spawner reads the tree's memory while the child
# runs, the program marks its phases on the metrics fd, and the figures read from the timeline
# are metrics like the others.
. "$(dirname "$0")/lib.sh"

jemalloc=$(ls /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 2>/dev/null || true)
mimalloc=$(ls /usr/lib/x86_64-linux-gnu/libmimalloc.so.2 2>/dev/null || true)
[[ -n $jemalloc && -n $mimalloc ]] || skip_test "jemalloc or mimalloc is not installed (apt-get install libjemalloc2 libmimalloc2.0)"

# 200 MiB in 10 steps of 20 MiB, each marked, then all freed and marked; each allocator set to
# give freed memory back at once (jemalloc's and mimalloc's defaults keep it for a while).
cat >"$WORK/spec.yaml" <<YAML
experiment: steps
command: ["$WORKLOAD", steps, "200", "20", "60"]
memory_timeline: 20ms
samples: 2
allocators:
  glibc: {}
  jemalloc: {preload: jemalloc, env: {MALLOC_CONF: "dirty_decay_ms:0,muzzy_decay_ms:0"}}
  mimalloc:
    preload: mimalloc
    env: {MIMALLOC_RESET_DELAY: "0", MIMALLOC_PAGE_RESET: "1", MIMALLOC_SEGMENT_DECOMMIT_DELAY: "0"}
YAML
run_alloclab 0 run "$WORK/spec.yaml"
shown=$OUT
within() { # within GOT WANT PERCENT
    python3 -c "import sys; got, want, pct = map(float, sys.argv[1:]); sys.exit(abs(got - want) > want * pct / 100)" "$@"
}
for v in glibc jemalloc mimalloc; do
    figures=$(q "SELECT $(for m in at_free at_step1 at_step5 at_step10 peak; do
                    printf "max(CASE m.name WHEN 'mem_%s_bytes' THEN CAST(m.value / 1024 AS INTEGER) END), " $m
                 done | sed 's/, $//') FROM samples s JOIN variants v ON v.id = s.variant_id
                 JOIN sample_metrics m ON m.sample_id = s.id
                 WHERE s.phase = 'sample' AND v.name = '$v' GROUP BY s.id ORDER BY s.id" | tr '|' ' ')
    expect_eq "$(wc -l <<<"$figures")" 2 "$v: a timeline per sample"
    # What the allocator keeps of its own once all is freed: the floor every step stands on.
    while read -r free s1 s5 s10 peak; do
        [[ -n $peak ]] || fail "$v: a figure is missing ($free $s1 $s5 $s10)"
        (( free < 20 * 1024 )) || fail "$v: $free KiB still resident after all 200 MiB were freed"
        within "$s1" $((free + 20 * 1024)) 10 || fail "$v: after step 1, $s1 KiB (20 MiB more than the $free KiB floor expected)"
        within "$s5" $((free + 100 * 1024)) 10 || fail "$v: after step 5, $s5 KiB"
        within "$s10" $((free + 200 * 1024)) 10 || fail "$v: after step 10, $s10 KiB"
        within "$peak" $((200 * 1024)) 10 || fail "$v: highest reading $peak KiB, not 200 MiB"
    done <<<"$figures"
done
# The readings themselves: they rise and fall, in time order, 20 ms apart or more.
expect_eq "$(q "SELECT count(*), min(source), min(period_ns) FROM sample_timelines tl
                JOIN samples s ON s.id = tl.sample_id WHERE s.phase = 'sample'")" "6|proc|20000000" \
    "a timeline per measured sample, from /proc (no memory controller delegated here), at the spec's period"
python3 - "$DB" <<'PY' || fail "the stored readings do not rise to 200 MiB and fall"
import json, sqlite3, struct, sys
db = sqlite3.connect(sys.argv[1])
for sample, points, marks in db.execute(
        "SELECT tl.sample_id, tl.points, tl.marks FROM sample_timelines tl JOIN samples s ON s.id = tl.sample_id"
        " WHERE s.phase = 'sample'"):
    pairs = list(struct.iter_unpack("<II", points))
    times = [t for t, _ in pairs]
    assert times == sorted(times) and len(pairs) >= 30, (sample, len(pairs))
    top = max(k for _, k in pairs)
    at_top = [t for t, k in pairs if k == top][0]
    assert top > 190 * 1024 and pairs[-1][1] < 20 * 1024, (sample, top, pairs[-1])
    assert any(k < 30 * 1024 for t, k in pairs if t < at_top), sample  # it rose
    names = [m["name"] for m in json.loads(marks)]
    assert names == [f"step{i}" for i in range(1, 11)] + ["free"], names
PY
expect_contains "$shown" "Memory over time (memory_timeline: the tree's resident memory (/proc/PID/statm), read every 20.0 ms" "show's section"
expect_contains "$shown" "glibc: highest reading" "a line per variant"
expect_contains "$shown" "; after step1" "the phases, in the order marked"

# The report draws each variant's median sample on one chart, with the marks, and says the figures.
run_alloclab 0 report latest -o "$WORK/report.html"
python3 - "$WORK/report.html" <<'PY' || fail "the report's memory chart"
import sys, xml.dom.minidom
doc = xml.dom.minidom.parse(sys.argv[1])
svg = [f for f in doc.getElementsByTagName("figure")
       if "median sample" in f.getElementsByTagName("figcaption")[0].firstChild.data]
assert len(svg) == 1, "one chart for the one cell"
lines = svg[0].getElementsByTagName("polyline")
assert len(lines) == 3, len(lines)
marks = [t.firstChild.data for t in svg[0].getElementsByTagName("title")]
assert "glibc: after free" in marks and "mimalloc: after step10" in marks, marks
ticks = [t.firstChild.data for t in svg[0].getElementsByTagName("text")]
assert "200 MiB" in ticks and "0 ms" in ticks and "time since the child started" in ticks and "resident memory" in ticks, ticks
PY
expect_contains "$(cat "$WORK/report.html")" "glibc: highest reading" "the report's figures"

# The figures are metrics: compare and history take them, with their unit.
run_alloclab 0 history steps --metric mem_at_free_bytes
expect_contains "$OUT" "MiB" "history of a timeline figure, in bytes"
sed -i 's/^samples: 2/samples: 2\nmetric: mem_at_free_bytes/' "$WORK/spec.yaml"
run_alloclab 0 run "$WORK/spec.yaml"
expect_contains "$OUT" "metric reported:mem_at_free_bytes: median of 2 samples" "a timeline figure as the primary metric"
expect_contains "$(grep -A1 "^cell" <<<"$OUT")" " MiB " "in its unit"

# JSON export carries the readings; a bundle carries them to another database.
run_alloclab 0 export --what samples --format json
echo "$OUT" | python3 -c 'import json, sys
d = json.load(sys.stdin)
t = [s["memory_timeline"] for s in d if s["phase"] == "sample" and s.get("memory_timeline")]
assert len(t) == 6 and t[0]["source"] == "proc" and t[0]["period_ns"] == 20000000, t[:1]
assert max(k for _, k in t[0]["points"]) > 190 << 10 and t[0]["marks"][-1]["name"] == "free", t[0]["marks"]
assert "metric:mem_at_free_bytes" in d[0]' || fail "export --format json lacks the readings"
run_alloclab 0 export all --bundle "$WORK/steps.bundle"
run_alloclab 0 import "$WORK/steps.bundle" --db "$WORK/other.db"
expect_eq "$(sqlite3 "$WORK/other.db" "SELECT count(*), sum(length(points)) FROM sample_timelines")" \
    "$(q "SELECT count(*), sum(length(points)) FROM sample_timelines")" "bundles keep every reading"

# A phase mark must be a name; a timeline figure needs the timeline; the period has bounds.
cat >"$WORK/bad.yaml" <<YAML
experiment: bad
command: ["$WORKLOAD", report, phase, "a/b"]
memory_timeline: 20ms
verify: none
allocators: {glibc: {}}
YAML
run_alloclab 9 run "$WORK/bad.yaml"
expect_contains "$OUT$ERR" "a phase's name is 1-51 letters, digits, '_', '-' or '.'" "a bad phase name, said"
printf 'phase\n' >"$WORK/bare"
cat >"$WORK/bare.yaml" <<YAML
experiment: bare
command: [sh, -c, "cat $WORK/bare >&3"]
memory_timeline: 20ms
verify: none
samples: 1
allocators: {glibc: {}}
YAML
run_alloclab 9 run "$WORK/bare.yaml"
expect_contains "$OUT$ERR" "a phase mark needs the phase's name: phase NAME" "a bare phase line, said"

# A figure that is not there says why, and what to do: a child shorter than the period has only
# the reading at its exec, which is no figure; a mark the child did not outlive by a period has
# no reading after it (a period of 1 s: the child marks 0.3 s after a reading and exits at once).
cat >"$WORK/short.yaml" <<YAML
experiment: short
command: ["$WORKLOAD", hugepage, "16"]
memory_timeline: 500ms
metric: mem_peak_bytes
verify: none
samples: 1
allocators: {glibc: {}}
YAML
run_alloclab 9 run "$WORK/short.yaml"
expect_contains "$OUT" "the child ended before the first reading of its memory (every 500 ms): give memory_timeline a shorter period" "a child shorter than the period"
expect_eq "$(q "SELECT count(*) FROM sample_metrics m JOIN samples s ON s.id = m.sample_id JOIN runs r ON r.id = s.run_id
                JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'short' AND m.name LIKE 'mem_%'")" 0 \
    "no figure from the exec's reading alone"
cat >"$WORK/late.yaml" <<YAML
experiment: late
command: [sh, -c, "sleep 1.3; exec $WORKLOAD report phase free"]
memory_timeline: 1s
metric: mem_at_free_bytes
verify: none
samples: 1
warmup: 0
allocators: {glibc: {}}
YAML
run_alloclab 9 run "$WORK/late.yaml"
expect_contains "$OUT" "the program marked phase free, then ended before the next reading of its memory (every 1 s): let it wait one period after the mark" "a mark the child did not outlive"
sed -i 's/metric: mem_at_free_bytes/metric: mem_at_done_bytes/' "$WORK/late.yaml"
run_alloclab 9 run "$WORK/late.yaml"
expect_contains "$OUT" "the program wrote no 'phase done' line to ALLOCLAB_METRICS_FD" "a phase never marked"
printf 'experiment: x\ncommand: [true]\nmetric: mem_peak_bytes\nallocators: {glibc: {}}\n' >"$WORK/nofigure.yaml"
run_alloclab 3 run "$WORK/nofigure.yaml"
expect_contains "$ERR" "nofigure.yaml:3:9: metric mem_peak_bytes is read from the memory timeline: set memory_timeline:" "figure without a timeline"
printf 'experiment: x\ncommand: [true]\nmemory_timeline: 100us\nallocators: {glibc: {}}\n' >"$WORK/fast.yaml"
run_alloclab 3 run "$WORK/fast.yaml"
expect_contains "$ERR" "fast.yaml:3:18: memory_timeline" "a period below 1 ms"

# Under callgrind (metric instructions without a PMU) the memory read would be valgrind's: refused.
if [[ -r /proc/sys/kernel/perf_event_paranoid ]] && ! grep -q "cycles" <<<"$(q "SELECT counters FROM runs ORDER BY id DESC LIMIT 1" | sed 's/unavailable.*//')" &&
    command -v valgrind >/dev/null; then
    printf 'experiment: x\ncommand: [true]\nmemory_timeline: 20ms\nmetric: instructions\nallocators: {glibc: {}}\n' >"$WORK/cg.yaml"
    run_alloclab 4 run "$WORK/cg.yaml" --db "$WORK/none.db"
    expect_contains "$ERR" "cg.yaml:4:9: metric instructions is counted by callgrind here (no PMU), and memory_timeline would read valgrind's memory" "refused under callgrind"
    [[ ! -e $WORK/none.db ]] || fail "a refused spec wrote a database"
else
    skip_part "the refusal under callgrind: this machine counts instructions itself, or valgrind is missing"
fi

# The figures' names are memory_timeline's, with it or without it: a program's own mem_peak_bytes
# was shown as the highest reading.
printf 'experiment: own\ncommand: ["%s", report, mem_peak_bytes, "5"]\nverify: none\nsamples: 1\nallocators: {glibc: {}}\n' \
    "$WORKLOAD" >"$WORK/own.yaml"
run_alloclab 9 run "$WORK/own.yaml"
expect_contains "$OUT" "the program reported mem_peak_bytes: names mem_*_bytes are memory_timeline's figures" "a program's mem_*_bytes refused"
