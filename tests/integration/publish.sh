#!/bin/bash
# alloclab publish: a static site of a database with two experiments on two machines, a suite
# invocation and a history with a real change point. Every page is well-formed XHTML, every link
# leads to a page, and laid out by headless Chromium at 1400 px no page scrolls sideways, no word
# is broken and no two chart labels overlap (page_check.py); the suite chart's numbers are
# `alloclab suite --format json`'s; publishing again writes only the pages that changed. The
# screenshots of the index, a timeline and the suite chart are left for a person to look at.
. "$(dirname "$0")/lib.sh"

command -v chromium >/dev/null || fail "chromium is needed (scripts/test.sh installs it)"
CHECK="$(dirname "$0")/page_check.py"
SHOTS="${ALLOCLAB_SCREENSHOTS:-$PWD/screenshots}/publish"

# The checker itself finds what it must: a word broken by the stylesheet in a narrow column, two
# chart labels on top of each other, a link to nothing, a page wider than the window.
mkdir -p "$WORK/bad"
cat >"$WORK/bad/page.html" <<'HTML'
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" lang="en"><head><meta charset="utf-8"/><title>bad</title>
<style>td{overflow-wrap:anywhere}</style></head><body>
<table style="width:60px"><tr><td>tcmalloc_minimal</td></tr></table>
<svg xmlns="http://www.w3.org/2000/svg" width="300" height="50"><text x="10" y="20">glibc</text><text x="14" y="22">jemalloc</text></svg>
<a href="nowhere.html">x</a><div style="width:1600px">wide</div>
</body></html>
HTML
python3 "$CHECK" "$WORK/bad/page.html" >"$WORK/bad.out" 2>&1 && fail "the checker passed a broken page"
for breach in "broken across lines: 'tcmalloc_minimal'" "labels overlap: 'glibc' and 'jemalloc'" \
    "a link to nowhere.html leads nowhere" "scrolls"; do
    expect_contains "$(cat "$WORK/bad.out")" "$breach" "the checker's own check"
done

# trend: a cost each run reports, 10 three times then 15 (a regression, confirmed) on machine
# alpha, with labels and commits; on the machine $BETA (a long name, as a cluster's nodes have),
# three nightly runs, the last of a changed command (a new baseline, not a change point).
cat >"$WORK/trend.yaml" <<YAML
experiment: trend
command: [sh, -c, 'echo "cost \$(cat $WORK/cost)" >&\$ALLOCLAB_METRICS_FD']
params: {size: ["1", "2"]}
allocators: {glibc: {}, tcmalloc_minimal: {}}
metric: reported:cost
verify: none
samples: 6
YAML
i=0
for cost in 10 10 10 15 15 15; do
    i=$((i + 1))
    echo $cost >"$WORK/cost"
    run_alloclab 0 run "$WORK/trend.yaml" --quiet --machine alpha --label "v1.$i" --commit "c0ffee$i"
done
BETA=compute-node-beta-02.cluster.example.org
for cost in 20 20; do
    echo $cost >"$WORK/cost"
    run_alloclab 0 run "$WORK/trend.yaml" --quiet --machine $BETA --label nightly
done
echo 21 >"$WORK/cost"
sed 's/cost \$(cat/cost  $(cat/' "$WORK/trend.yaml" >"$WORK/trend2.yaml"
run_alloclab 0 run "$WORK/trend2.yaml" --quiet --machine $BETA --label nightly
# spin: real children under real allocators, one variant that fails its smoke run (excluded, with
# its reason), one with GLIBC_TUNABLES set empty (no option in effect), on both machines.
cat >"$WORK/spin.yaml" <<YAML
experiment: spin
command: ["$WORKLOAD", spin, "3000000"]
params: {n: ["1", "2"]}
allocators:
  glibc: {env: {GLIBC_TUNABLES: ""}}
  longer: {command: ["$WORKLOAD", spin, "6000000"]}
  jemalloc: {preload: jemalloc, env: {MALLOC_CONF: "dirty_decay_ms:500"}}
  tcmalloc_minimal: {preload: tcmalloc_minimal}
  broken: {command: ["$WORKLOAD", exit, "3"]}
samples: 12
YAML
run_alloclab 9 run "$WORK/spin.yaml" --quiet --machine alpha
run_alloclab 9 run "$WORK/spin.yaml" --quiet --machine $BETA
run_alloclab 0 suite xmalloc larson --threads 1 --scale 5 --samples 8 \
    --allocators glibc,jemalloc,mimalloc,tcmalloc_minimal --machine alpha --quiet --format json
echo "$OUT" >"$WORK/suite.json"

run_alloclab 0 publish "$WORK/site"
pages=$(find "$WORK/site" -name '*.html' | wc -l)
expect_eq "$OUT" "$WORK/site/index.html: $pages pages, $pages written" "the first publish writes every page"
# 13 runs, 4 experiments (trend, spin, two suite workloads) x (timelines, fleet), 1 suite, index
expect_eq "$pages" 23 "a page per run, per experiment twice, per suite, the index"

# Every page, as a person at 1400 px reads it.
python3 "$CHECK" $(find "$WORK/site" -name '*.html' | sort) >"$WORK/check.out" 2>&1 ||
    fail "pages a person cannot read: $(cat "$WORK/check.out")"

# What the pages say.
python3 - "$WORK/site" "$WORK/suite.json" "$BETA" <<'PY' || fail "the site's content"
import glob, json, os, sys, xml.etree.ElementTree as ET
H, S = "{http://www.w3.org/1999/xhtml}", "{http://www.w3.org/2000/svg}"
site, suite, BETA = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3]
def page(path):
    return ET.parse(os.path.join(site, path)).getroot()
def text(el):
    return "".join(el.itertext())

# Every chart has axis titles and its numbers in a table beneath it.
for path in glob.glob(os.path.join(site, "**", "*.html"), recursive=True):
    body = ET.parse(path).getroot().find(H + "body")
    children = list(body)
    for i, el in enumerate(children):
        if el.tag != H + "figure":
            continue
        after = children[i + 1] if i + 1 < len(children) else None
        assert after is not None and after.tag == H + "details" and after.find(".//" + H + "table") is not None, \
            (path, el.find(H + "figcaption").text)
        titles = [t for t in el.iter(S + "text") if t.get("class") != "tick" and t.get("font-weight") != "bold"]
        assert titles, (path, "no axis title")

index = page("index.html")
head = [text(th) for th in index.iter(H + "th")]
assert head[:3] == ["experiment", "alpha", BETA], head
rows = {text(tr[0]).replace("across machines", ""): [text(td) for td in tr[1:]] for tr in index.iter(H + "tr") if tr[0].tag == H + "td"}
assert set(rows) >= {"trend", "spin", "suite-xmalloc", "suite-larson"}, rows
assert rows["trend"][0].startswith("run 6 ") and rows["trend"][1].startswith("run 9 "), rows["trend"]
assert "broken: not compared" in rows["spin"][0] and "longer " in rows["spin"][0], rows["spin"]
assert rows["suite-xmalloc"][1] == "-", rows

# The timeline: the regression marked (a red triangle) at the run of commit c0ffee4, the x axis by commit on alpha
# and by time on beta (its labels are all "nightly"), a table of the numbers beside each chart.
trend = page("experiment/trend.html")
figures = list(trend.iter(H + "figure"))
assert len(figures) == 8, len(figures)            # 2 machines x 2 cells x 2 variants
alpha = figures[0]
ticks = [t.text for t in alpha.iter(S + "text") if t.get("class") == "tick"]
assert "c0ffee1" in ticks and "c0ffee6" in ticks, ticks
titles = [text(t) for t in alpha.iter(S + "title")]
assert any(t.startswith("run 4: 15") and t.endswith("regression") for t in titles), titles
assert [p.get("fill") for p in alpha.iter(S + "polygon")] == ["#d00"], "one confirmed regression, marked"
assert any(text(t) == "run, by commit" for t in alpha.iter(S + "text")), "x axis title"
beta_ticks = [t.text for t in figures[4].iter(S + "text") if t.get("class") == "tick"]
assert any(":" in t for t in beta_ticks) and not any("nightly" in t for t in beta_ticks), beta_ticks
baselines = ["".join(t.itertext()) for t in figures[4].iter(S + "title") if "new baseline" in "".join(t.itertext())]
assert len(baselines) == 1 and "command" in baselines[0], baselines   # the changed command, marked
numbers = [tr for tr in trend.iter(H + "tr") if tr[0].tag == H + "td" and text(tr[0]) == "4"]
assert numbers and "regression" in text(numbers[0]), [text(t) for t in numbers]
links = {a.get("href") for a in alpha.iter(S + "a")}
assert "../run/4.html" in links, links

# The fleet page: each machine's ratios, its hardware.
fleet = page("fleet/spin.html")
first = next(fleet.iter(H + "table"))
machines = [text(tr[0]) for tr in first.iter(H + "tr") if tr[0].tag == H + "td"]
assert machines == ["alpha", BETA], machines
notes = [text(p) for p in fleet.iter(H + "p") if p.get("class") == "warn"]
assert any(f"machines alpha and {BETA} have one host fingerprint" in n for n in notes), notes   # as fleet says
groups = [text(t) for t in fleet.iter(S + "text") if t.get("font-weight") == "bold"]
assert "[n=1] longer" in groups and "[n=1] broken" in groups, groups
assert "not compared: EXIT 3" in [text(t) for t in fleet.iter(S + "text")], "the excluded variant's row says why"

# The suite chart's numbers are suite --format json's, to the last digit.
suite_page = page(glob.glob(os.path.join(site, "suite", "*.html"))[0].split(site + "/")[1])
tables = [t for t in suite_page.iter(H + "table") if "".join(text(t).split()).startswith("workloadallocatorratio")]
assert len(tables) == 2, len(tables)               # time, then peak RSS
for table, prefix in zip(tables, ("", "peak_rss_")):
    shown = {}
    for tr in table.iter(H + "tr"):
        if tr[0].tag != H + "td":
            continue
        values = [float(td.get("data-value")) if td.get("data-value") else None for td in tr[2:5]]
        shown[(text(tr[0]), text(tr[1]))] = values + [text(tr[5])]
    expected = {}
    for w in suite["workloads"]:
        for v in w["variants"]:
            ratio = v[prefix + "ratio"]
            if ratio is None:
                continue
            lo, hi = v[prefix + ("ci_low" if prefix else "ratio_ci_low")], v[prefix + ("ci_high" if prefix else "ratio_ci_high")]
            bounded = lo is not None and hi is not None and lo > 0
            word = v[prefix + "verdict"]
            expected[(w["workload"], v["name"])] = [ratio, lo if bounded else None, hi if bounded else None,
                                                    "inconclusive" if word == "~" else word]
    assert shown == expected, (prefix, shown, expected)
    assert len(shown) == 6, shown                  # 2 workloads x 3 allocators besides glibc
print("content ok")
PY

# The report page's fixes, on a run page of the site.
python3 - "$WORK/site/run" <<'PY' || fail "the run's report page"
import os, sys, xml.etree.ElementTree as ET
H, S = "{http://www.w3.org/1999/xhtml}", "{http://www.w3.org/2000/svg}"
def text(el):
    return "".join(el.itertext())
spin = ET.parse(os.path.join(sys.argv[1], "10.html")).getroot()      # spin on alpha
page = ET.tostring(spin, encoding="unicode")
assert "GLIBC_TUNABLES =" not in text(spin), "an empty GLIBC_TUNABLES shown as an option in effect"
assert "dirty_decay_ms = 500" in text(spin), "the options in effect"
cells = [text(td) for td in spin.iter(H + "td")]
assert any(c.startswith("excluded") and "exit code 3" in c for c in cells), cells   # why excluded
assert 'class="worse"' in page, "the slower variant's verdict in colour"           # longer
ticks = [t.text for t in spin.iter(S + "text") if t.get("class") == "tick"]
assert ticks and not any(t.endswith((".000 s", ".0 ms")) for t in ticks), ticks
assert any(text(t) == "median peak RSS" for t in spin.iter(S + "text")), "the memory axis titled"
print("report ok")
PY

# Publishing again: nothing changed, nothing written; one new run rewrites its page, its
# experiment's two pages and the index, and no other file.
touch -d "2020-01-01" "$WORK/site/run/1.html"
run_alloclab 0 publish "$WORK/site"
expect_eq "$OUT" "$WORK/site/index.html: 23 pages, 0 written" "nothing changed"
touch "$WORK/marker"
echo 21 >"$WORK/cost"
run_alloclab 0 run "$WORK/trend2.yaml" --quiet --machine $BETA --label nightly
run_alloclab 0 publish "$WORK/site"
expect_eq "$OUT" "$WORK/site/index.html: 24 pages, 4 written" "one new run"
expect_eq "$(find "$WORK/site" -name '*.html' -newer "$WORK/marker" | sort | sed "s|$WORK/site/||" | tr '\n' ' ')" \
    "experiment/trend.html fleet/trend.html index.html run/14.html " "the pages rewritten"
expect_eq "$(date -r "$WORK/site/run/1.html" +%Y)" 2020 "an unchanged page left alone"
rm "$WORK/site/experiment/spin.html"
run_alloclab 0 publish "$WORK/site" --quiet
[[ -z $OUT && -f $WORK/site/experiment/spin.html ]] || fail "a page removed by hand is written again: $OUT"

# The site is as readable as the database: a private database makes a private site, and a
# database made private since makes the site it published before private, every file of it.
expect_eq "$(stat -c %a "$WORK/site/index.html" "$WORK/site/run")" $'644\n755' "a site as readable as its database"
chmod 0600 "$DB"
run_alloclab 0 publish "$WORK/private" --quiet
expect_eq "$(stat -c %a "$WORK/private" "$WORK/private/run" "$WORK/private/index.html" "$WORK/private/run/1.html")" \
    $'700\n700\n600\n600' "a private database, a private site"
run_alloclab 0 publish "$WORK/site"
expect_eq "$OUT" "$WORK/site/index.html: 24 pages, 0 written" "nothing new"
expect_eq "$(find "$WORK/site" -perm /077 | wc -l)" 0 "the site published before, private now"
chmod 0644 "$DB"

# Errors, each said with what to do: no directory given, or two; a file; a directory of someone's
# own files (never written over); a directory under a file.
run_alloclab 2 publish
expect_contains "$ERR" "give the site's directory" "usage"
run_alloclab 2 publish ""
expect_contains "$ERR" "give the site's directory" "an empty name"
run_alloclab 2 publish "$WORK/a" "$WORK/b"
expect_contains "$ERR" "one directory, got 2 operands" "two operands"
touch "$WORK/file"
run_alloclab 4 publish "$WORK/file"
expect_contains "$ERR" "alloclab publish: $WORK/file is not a directory: give a directory for the site" "a file"
mkdir "$WORK/mine" && echo "my page" >"$WORK/mine/index.html"
run_alloclab 4 publish "$WORK/mine"
expect_contains "$ERR" "$WORK/mine holds files alloclab publish did not write (it has no .alloclab-site): give a new or empty directory" \
    "someone's own directory"
expect_eq "$(cat "$WORK/mine/index.html")" "my page" "their page left alone"
run_alloclab 4 publish "$WORK/file/site"
expect_contains "$ERR" "alloclab publish: cannot use $WORK/file/site: Not a directory" "a directory under a file"

# For a person: the index, a timeline and the suite chart.
mkdir -p "$SHOTS"
for shot in index experiment/trend "suite/$(basename "$(ls "$WORK"/site/suite/*.html)" .html)"; do
    chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,2000 \
        --user-data-dir="$WORK/chromium" --screenshot="$SHOTS/${shot%%/*}.png" "file://$WORK/site/$shot.html" \
        >/dev/null 2>&1 || fail "no screenshot of $shot"
    [[ -s $SHOTS/${shot%%/*}.png ]] || fail "an empty screenshot of $shot"
done
echo "screenshots: $SHOTS/{index,experiment,suite}.png"
echo "ok"
