#!/bin/bash
# hyperfine's and pyperf's JSON: imported as runs (one variant per command or benchmark, the
# times as samples, failures as failures), and runs exported in hyperfine's layout with the same
# times again.
. "$(dirname "$0")/lib.sh"
if ! command -v hyperfine >/dev/null; then
    skip_test "hyperfine is not installed (apt-get install hyperfine)"
fi
cd "$WORK"

hyperfine -N --runs 5 --warmup 1 --export-json hf.json "$WORKLOAD which" "$WORKLOAD usable" >/dev/null 2>&1 ||
    fail "hyperfine"
run_alloclab 0 import hf.json
expect_contains "$OUT" "imported hf.json as run 1: 2 variants (which: unknown, usable: unknown) in 1 cell, order sequential" \
    "the import says what it made: no LD_PRELOAD, no allocator named"
expect_eq "$(q "SELECT e.name, r.trigger, r.label FROM runs r JOIN experiments e ON e.id = r.experiment_id")" \
    "hyperfine-hf|import|imported from hyperfine" "the run"
expect_eq "$(q "SELECT count(*) FROM samples WHERE phase = 'sample' AND status = 'ok'")" 10 "5 samples per command"
# No file of an allocator was recorded: said, not an empty hash.
run_alloclab 0 show 1 --allocators
expect_contains "$OUT" "which: unknown
  file (nothing preloaded)
  sha256 (not recorded)" "an import's allocator: nothing recorded, said"
expect_eq "$(q "SELECT group_concat(name, ' ') FROM (SELECT name FROM variants ORDER BY position)")" \
    "which usable" "one variant per command, named by the words that tell the commands apart"
# hyperfine ran each command's runs after the other's: sequential, compared as independent
# samples, never paired by a "round" that never was; nothing claims this machine's glibc.
expect_eq "$(q "SELECT DISTINCT order_mode FROM runs")" sequential "order sequential"
expect_eq "$(q "SELECT count(*), count(cpu_us), count(cpu_source), count(peak_kib), count(memory_source) FROM samples")" \
    "10|0|0|0|0" "no tree CPU time or memory claimed (they read 0 from 'rusage')"
expect_eq "$(q "SELECT group_concat(a.name || '|' || a.path || '|' || a.version, ' ') FROM variants v
    JOIN allocators a ON a.id = v.allocator_id")" "unknown|| unknown||" "allocator unknown, no version"
python3 - hf.json "$DB" <<'PY' || fail "the imported times"
import json, sqlite3, sys
want = [round(t * 1e9) for r in json.load(open(sys.argv[1]))["results"] for t in r["times"]]
got = [w for (w,) in sqlite3.connect(sys.argv[2]).execute(
    "SELECT wall_ns FROM samples JOIN variants v ON v.id = samples.variant_id ORDER BY v.position, samples.round")]
assert got == want, (got, want)
PY
run_alloclab 0 show
expect_contains "$OUT" "imported from hyperfine's JSON hf.json" "show names the file"
expect_contains "$OUT" "order sequential, verify none" "show: the order, and no seed it never had"
expect_contains "$OUT" "which=unknown (version not recorded), usable=unknown (version not recorded)" "show's allocators"
expect_contains "$OUT" "order sequential: each variant's samples were taken after the other's" "the method says so"
run_alloclab 0 show --format json
python3 - "$OUT" <<'PY' || fail "the design in JSON"
import json, sys
d = json.loads(sys.argv[1])
assert d["order"] == "sequential" and d["seed"] is None, (d["order"], d["seed"])
assert [v["version"] for v in d["variants"]] == [None, None], d["variants"]
tests = {r.get("test") for c in d["cells"] for r in c["results"].values()}
assert tests == {None, "mann-whitney"}, tests  # the baseline has no test
PY
# The same bytes again add nothing.
runs=$(q 'SELECT count(*) FROM runs')
run_alloclab 0 import hf.json
expect_contains "$OUT" "hf.json: imported before as run 1 (the same content); nothing added" "a re-import"
# The same content written otherwise (indented, keys reordered) is the same import (on 7fba13f,
# the bytes were hashed: re-indented JSON made a new run).
python3 -c 'import json, sys; print(json.dumps(json.load(open("hf.json")), indent=7, sort_keys=True))' >hf-indented.json
run_alloclab 0 import hf-indented.json
expect_contains "$OUT" "hf-indented.json: imported before as run 1 (the same content); nothing added" "re-indented"
expect_eq "$(q 'SELECT count(*) FROM runs')" "$runs" "a re-import adds no run"
# Within-run ratios need rounds: an import has none.
run_alloclab 2 history hyperfine-hf --relative
expect_contains "$ERR" "runs in blocked order and imports, which have none, are left out" "history --relative"

# Exported in hyperfine's layout: the same times, and hyperfine's mean CPU times (it exports no
# CPU time per run, so alloclab keeps the means with the run).
run_alloclab 0 export 1 --what hyperfine
printf '%s\n' "$OUT" >back.json
python3 - hf.json back.json <<'PY' || fail "the round trip"
import json, sys
a, b = (json.load(open(p))["results"] for p in sys.argv[1:])
assert len(a) == len(b) == 2, b
for x, y in zip(a, b):
    assert all(abs(s - t) < 1e-9 for s, t in zip(x["times"], y["times"])), (x, y)
    assert abs(x["median"] - y["median"]) < 1e-9 and y["exit_codes"] == [0] * 5, y
    assert y["min"] <= y["median"] <= y["max"] and y["stddev"] > 0, y
    assert abs(x["user"] - y["user"]) < 1e-12 and abs(x["system"] - y["system"]) < 1e-12, (x, y)
    assert ("memory_usage_byte" in y) == ("memory_usage_byte" in x), y  # none where none was measured
PY

# An allocator comparison as hyperfine users write it: the allocator is the one LD_PRELOAD names
# (libc.so.6 is glibc), the parameter that sets it tells variants apart, and the other parameter
# makes cells.
hyperfine -N --runs 4 --export-json alloc.json -L lib libc.so.6,libjemalloc.so.2 -L n 100,200 \
    "env LD_PRELOAD={lib} $WORKLOAD vallocs {n}" >/dev/null 2>&1 || fail "hyperfine over allocators"
run_alloclab 0 import alloc.json
expect_contains "$OUT" "2 variants (glibc: glibc, jemalloc: jemalloc) in 2 cells of n, order sequential" "the layout"
alloc_run=$(q "SELECT max(id) FROM runs")
expect_eq "$(q "SELECT group_concat(v.name || '=' || a.name || ':' || a.path, ' ') FROM variants v
    JOIN allocators a ON a.id = v.allocator_id WHERE v.run_id = $alloc_run ORDER BY v.position")" \
    "glibc=glibc:libc.so.6 jemalloc=jemalloc:libjemalloc.so.2" "allocators from LD_PRELOAD"
expect_eq "$(q "SELECT group_concat(label, ' ') FROM cells WHERE run_id = $alloc_run ORDER BY position")" \
    "n=100 n=200" "the other parameter's cells"
expect_eq "$(q "SELECT count(*) FROM samples WHERE run_id = $alloc_run AND status = 'ok'")" 16 "2 x 2 x 4 samples"
# The stored spec says what the run says of its order, and the HTML report draws no time/memory
# heading over nothing (on 7fba13f: "order: blocked" alone, and an empty "Time and memory").
expect_contains "$(q "SELECT s.yaml FROM specs s JOIN runs r ON r.spec_id = s.id WHERE r.id = $alloc_run")" "the run's order: sequential" "the spec's order"
run_alloclab 0 report "$alloc_run" --output "$WORK/import.html"
! grep -q "Time and memory" "$WORK/import.html" || fail "a time/memory heading for an import without memory"
run_alloclab 2 compare 1 "$alloc_run" --relative
expect_contains "$ERR" "run 1 was measured in sequential order, without such rounds" "compare --relative refuses an import"
# The same commands measured again and imported from another file: the runs compare (the file's
# name and hash are the run's, not its spec's), and the names say what tells commands apart.
hyperfine -N --runs 4 --export-json alloc2.json -L lib libc.so.6,libjemalloc.so.2 -L n 100,200 \
    "env LD_PRELOAD={lib} $WORKLOAD vallocs {n}" >/dev/null 2>&1 || fail "hyperfine again"
run_alloclab 0 import alloc2.json --experiment hyperfine-alloc
run_alloclab 0 compare "$alloc_run" latest
[[ $OUT != *"NOT COMPARABLE"* ]] || fail "two imports of the same commands not comparable: $OUT"
# ... as far as recorded: hyperfine records no machine, so a "same host" is not claimed (on 19d64e5:
# "comparable: same host fingerprint"), nor in the report's host and start (the importing ones).
expect_contains "$OUT" "comparable as far as recorded: same spec, cells and variants; the host is where each run was imported and no allocator file was recorded (hyperfine records neither)" \
    "no claim of one machine, nor of the same allocator files (nothing of them was recorded)"
grep -q "where it was imported: hyperfine records no machine" "$WORK/import.html" || fail "the report's host, unqualified"
grep -q "when it was imported: hyperfine records no time" "$WORK/import.html" || fail "the report's start, unqualified"
hyperfine -N --runs 2 --export-json names.json "$WORKLOAD which" "env LD_PRELOAD=libjemalloc.so.2 $WORKLOAD which" \
    "env LD_PRELOAD=libjemalloc.so.2 MALLOC_CONF=narenas:1 $WORKLOAD which" >/dev/null 2>&1 || fail "hyperfine names"
run_alloclab 0 import names.json
expect_contains "$OUT" "3 variants (alloclab-workload: unknown, libjemalloc: jemalloc, libjemalloc-narenas-1: jemalloc)" \
    "names from what tells the commands apart"
# alloclab's own export is no hyperfine file: importing it back would relabel an alloclab run.
run_alloclab 0 export latest --what hyperfine
printf '%s\n' "$OUT" >own.json
run_alloclab 3 import own.json
expect_contains "$ERR" "own.json is alloclab's own export of a run" "alloclab's export refused"
python3 - alloc.json "$DB" "$alloc_run" <<'PY' || fail "each command's times in its cell and variant"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[2])
for r in json.load(open(sys.argv[1]))["results"]:
    variant = "glibc" if r["parameters"]["lib"] == "libc.so.6" else "jemalloc"
    got = [w for (w,) in db.execute(
        "SELECT s.wall_ns FROM samples s JOIN cells c ON c.id = s.cell_id JOIN variants v ON v.id = s.variant_id"
        " WHERE s.run_id = ? AND c.label = ? AND v.name = ? ORDER BY s.round",
        (sys.argv[3], "n=" + r["parameters"]["n"], variant))]
    assert got == [round(t * 1e9) for t in r["times"]], (r["command"], got)
PY

# Failures stay failures; a parameter the commands take makes cells; --experiment names it.
hyperfine -N -i --runs 3 --export-json fails.json "$WORKLOAD exit 3" -L n 1,2 "$WORKLOAD vallocs {n}" >/dev/null 2>&1 ||
    true
run_alloclab 0 import fails.json --experiment scan
# hyperfine scans every command over the parameter: 2 x 2 commands, 3 runs each.
expect_eq "$(q "SELECT count(*) FROM samples s JOIN runs r ON r.id = s.run_id WHERE r.id = 5 AND s.status = 'exit'")" 6 \
    "the failed runs"
# Two commands over n: n makes two cells of the two commands.
expect_eq "$(q "SELECT count(*) FROM variants WHERE run_id = 5")" 2 "two commands"
expect_eq "$(q "SELECT count(*) FROM cells WHERE run_id = 5")" 2 "two cells"
expect_eq "$(q "SELECT e.name FROM runs r JOIN experiments e ON e.id = r.experiment_id WHERE r.id = 5")" scan "--experiment"

# pyperf's JSON layout version 1.0, as pyperf 2.x writes it (pyperf is not packaged in Debian 12
# and nothing is downloaded here: its documented format, written by hand).
cat >pyperf.json <<'JSON'
{"version": "1.0", "metadata": {"unit": "second", "python_version": "3.11", "hostname": "other-host",
  "cpu_model_name": "AMD EPYC 7B13", "cpu_count": 64, "platform": "Linux-6.1.0-13-amd64-x86_64-with-glibc2.36"},
 "benchmarks": [
  {"metadata": {"name": "json_dumps", "loops": 8},
   "runs": [{"metadata": {}, "warmups": [[8, 0.5]], "values": [0.0102, 0.0101, 0.0103]},
            {"values": [0.0100, 0.0104, 0.0102]}]},
  {"metadata": {"name": "json_loads"},
   "runs": [{"values": [0.0201, 0.0199, 0.0203]}, {"values": [0.0200, 0.0202, 0.0198]}]}]}
JSON
run_alloclab 0 import pyperf.json
expect_eq "$(q "SELECT count(*) FROM samples WHERE run_id = 6")" 12 "every value, no warm-up"
# The file's warm-ups are left out: the header does not say there were none (it said "0 warmup").
run_alloclab 0 show 6
expect_contains "$OUT" "samples (warm-ups not stored), order sequential" "warm-ups said not stored"
# A file's benchmarks are different programs under one configuration: cells of one variant,
# never compared with each other (on 19d64e5: variants, "json_loads 1.97x slower" than json_dumps).
expect_eq "$(q "SELECT group_concat(name, ' ') FROM (SELECT name FROM variants WHERE run_id = 6 ORDER BY position)")" \
    "pyperf" "one variant"
expect_eq "$(q "SELECT group_concat(label, ' ') FROM (SELECT label FROM cells WHERE run_id = 6 ORDER BY position)")" \
    "benchmark=json_dumps benchmark=json_loads" "a cell per benchmark"
run_alloclab 0 show 6
expect_contains "$OUT" "benchmark=json_loads" "pyperf run shown"
[[ $OUT != *slower* && $OUT != *faster* ]] || fail "two benchmarks compared with each other: $OUT"
# The machine is the one pyperf's metadata names, not the importing one (on 7fba13f: this VM), its
# kernel the release alone (on 19d64e5 with the machine: 6.1.0-13-amd64-x86_64).
expect_contains "$OUT" "host other-host: AMD EPYC 7B13, 64 cpus, kernel 6.1.0-13-amd64, glibc 2.36, THP unknown" \
    "pyperf's machine"
run_alloclab 0 show 1
expect_contains "$OUT" "(where it was imported: hyperfine records no machine)" "hyperfine's: said to be the importing one"

# A native run with a parameter in hyperfine's layout: its parameters and cell.
run_alloclab 0 quick -a glibc,jemalloc --param n=10,20 -r 2 -w 0 --quiet -- "$WORKLOAD" vallocs '{n}'
run_alloclab 0 export latest --what hyperfine
python3 - "$OUT" <<'PY' || fail "export of a matrix"
import json, sys
r = json.loads(sys.argv[1])["results"]
assert [x["command"] for x in r] == ["glibc [n=10]", "jemalloc [n=10]", "glibc [n=20]", "jemalloc [n=20]"], r
assert r[2]["parameters"] == {"n": "20"} and len(r[2]["times"]) == 2 and r[2]["memory_usage_byte"][0] > 0, r[2]
PY

# What is not hyperfine's or pyperf's is refused, and nothing is written.
runs=$(q 'SELECT count(*) FROM runs')
echo '{"foo": 1}' >other.json
run_alloclab 3 import other.json
expect_contains "$ERR" "neither hyperfine's --export-json nor pyperf's JSON" "another JSON"
printf '{"results": [\n  {"command": "x", "times": [1,]}]}\n' >broken.json
run_alloclab 3 import broken.json
expect_contains "$ERR" "broken.json:2:" "malformed JSON at its position"
# Times no sample could have: a negative one, one of 1e308 s (stored as a negative number of
# nanoseconds), and a negative memory figure; named by their JSON path.
for bad in 'times: [0.1, -0.5]|results[0].times[1] is -0.5, which is not from 0 to 86400 seconds' \
    'times: [1e308]|results[0].times[0] is 1e+308, which is not from 0 to 86400 seconds' \
    'times: [0.1], "memory_usage_byte": [-4]|results[0].memory_usage_byte[0] is -4, which is not from 0 to' \
    'times: [0.1, 0.0]|results[0].times[1] is 0: no command runs in no time at all' \
    'times: [0.1], "mean": -1|results[0].mean is not a time from 0 to 86400 seconds' \
    'times: null|results[0].times is not an array of times'; do
    printf '{"results": [{"command": "x", "exit_codes": [0, 0], %s}]}\n' "${bad%%|*}" | sed 's/times:/"times":/' >bad.json
    run_alloclab 3 import bad.json
    expect_contains "$ERR" "${bad#*|}" "an impossible value (on 7fba13f, 0 and a mean of -1 were taken)"
done
printf '{"benchmarks": [{"metadata": {"name": "b", "unit": "second"}, "runs": [{"warmups": [[1, 0.1]]}, {"values": [0.1, "x"]}]}]}\n' >bad.json
run_alloclab 3 import bad.json
expect_contains "$ERR" "benchmarks[0].runs[1].values[1] is not a number" "pyperf's values, a run of warm-ups skipped"
run_alloclab 2 import hf.json "$WORK/results.db"
# A usage error makes no database where there was none.
run_alloclab 2 import hf.json "$WORK/results.db" --db "$WORK/new.db"
expect_contains "$ERR" "bundles and JSON files cannot be imported at once" "a bundle and a JSON file"
[[ ! -e $WORK/new.db ]] || fail "a usage error made a database"
expect_eq "$(q 'SELECT count(*) FROM runs')" "$runs" "nothing written by the refusals"

# A program whose path holds a parameter's value (a build directory "build-2"): the value is
# taken out of the arguments only (the commands fell apart into 4 variants of one cell).
mkdir -p build-2 && cp "$WORKLOAD" build-2/
hyperfine -N --runs 2 --export-json digits.json -L n 1,2 "$WORK/build-2/alloclab-workload vallocs {n}" \
    "$WORK/build-2/alloclab-workload exit 0" >/dev/null 2>&1 || fail "hyperfine in build-2"
run_alloclab 0 import digits.json
expect_contains "$OUT" "2 variants (vallocs: unknown, exit-0: unknown) in 2 cells of n" "a digit in the program's path"

# env's options are env's, not the program: the allocator is still the one LD_PRELOAD names (on
# 7fba13f: unknown, named "-u-FOO-libtcmalloc_minimal").
hyperfine -N --runs 2 --export-json envopts.json "env -u FOO LD_PRELOAD=libtcmalloc_minimal.so.4 $WORKLOAD which" \
    "env -u FOO $WORKLOAD which" >/dev/null 2>&1 || fail "hyperfine env -u"
run_alloclab 0 import envopts.json
expect_contains "$OUT" "2 variants (libtcmalloc_minimal: tcmalloc_minimal, alloclab-workload: unknown)" "env -u before LD_PRELOAD"

# A run is dated when it was measured: pyperf's runs' date (the first) and date + duration (the
# last), in the measuring machine's local time, said to be so; a hyperfine file, which says
# nothing of when, is dated at its import, said too (on ab58ed7: both at the import time, unsaid).
cat >dated.json <<'JSON'
{"version": "1.0", "metadata": {"unit": "second", "hostname": "dated-host"},
 "benchmarks": [
  {"metadata": {"name": "a"},
   "runs": [{"metadata": {"date": "2020-10-13 10:14:44.091061", "duration": 0.75}, "warmups": [[8, 0.5]]},
            {"metadata": {"date": "2020-10-13 10:14:45.5", "duration": 0.6}, "values": [0.0100, 0.0104]}]},
  {"metadata": {"name": "b"},
   "runs": [{"metadata": {"date": "2020-10-13 10:14:47", "duration": 1.25}, "values": [0.0201, 0.0199]}]}]}
JSON
run_alloclab 0 import dated.json
dated=$(q "SELECT max(id) FROM runs")
expect_eq "$(q "SELECT started_at || ' ' || ended_at FROM runs WHERE id = $dated")" \
    "2020-10-13T10:14:44.091 2020-10-13T10:14:48.250" "a pyperf run dated by its runs"
run_alloclab 0 show "$dated"
expect_contains "$OUT" "done, 2020-10-13T10:14:44.091 - 2020-10-13T10:14:48.250" "the dates shown"
expect_contains "$OUT" "in the measuring machine's local time (pyperf records no time zone)" "their zone said"
run_alloclab 0 show 1
expect_contains "$OUT" "started and ended when imported (the file does not say when it was measured)" \
    "a hyperfine import's date said to be the import's"

# Two runs a command: no interval can bound the ratio, and the geometric mean says so rather than
# "[0.000, inf]" (on 19d64e5).
run_alloclab 0 show "$(q "SELECT max(id) FROM runs WHERE experiment_id = (SELECT id FROM experiments WHERE name = 'hyperfine-envopts')")"
expect_contains "$OUT" "(no interval: a cell's own is unbounded)" "an unbounded interval said to be none"
[[ $OUT != *"inf]"* ]] || fail "an infinite bound printed: $OUT"

# A re-import under another --experiment adds nothing, and says that it renames nothing either.
run_alloclab 0 import dated.json --experiment renamed
expect_contains "$OUT" "nothing added, and --experiment does not rename it" "--experiment on a re-import, said"

# Two pyperf files of the same benchmarks (the habit of pyperf compare_to): their runs compare
# benchmark by benchmark.
sed -e 's/0.0100, 0.0104/0.0101, 0.0104/' dated.json >dated1.json
sed -e 's/0.0100, 0.0104/0.0150, 0.0156/' -e 's/0.0201, 0.0199/0.0302, 0.0298/' dated.json >dated2.json
run_alloclab 0 import dated1.json --experiment pair
run_alloclab 0 import dated2.json --experiment pair
run_alloclab 0 compare "$(q "SELECT max(id) - 1 FROM runs")" latest
expect_contains "$OUT" "benchmark=a  pyperf" "benchmark a compared"
expect_contains "$OUT" "benchmark=b  pyperf" "benchmark b compared"
[[ $OUT != *"NOT COMPARABLE"* ]] || fail "two pyperf files of the same benchmarks not comparable: $OUT"
# pyperf records its machine, but no allocator file: "same allocator files" is not claimed.
expect_contains "$OUT" "spec, cells and variants (an import records no allocator file)" "no claim of the same allocator files"

# Two files of the same commands imported under their own names are two experiments: compare
# says so and how to import them into one.
python3 -c 'import json, sys
d = json.load(open("hf.json")); d["results"][0]["times"][0] *= 1.01; json.dump(d, open("hfb.json", "w"))'
run_alloclab 0 import hfb.json
run_alloclab 7 compare 1 latest
expect_contains "$OUT" "experiment: hyperfine-hf -> hyperfine-hfb" "the experiments differ"
expect_contains "$OUT" "(files of the same commands compare when imported into one experiment: alloclab import FILE --experiment NAME)" \
    "how to make them comparable"
