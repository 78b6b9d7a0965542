#!/bin/bash
# alloclab report: one self-contained HTML page, well-formed (it is XHTML: every SVG and the page
# parse as XML), without scripts or external references, rendered by headless Chromium into a
# screenshot that is not blank and without console errors.
. "$(dirname "$0")/lib.sh"

command -v chromium >/dev/null || fail "chromium is needed (scripts/test.sh installs it)"
cat >"$WORK/spec.yaml" <<YAML
experiment: report
command: ["$WORKLOAD", spin, "3000000"]
params: {n: ["1", "2"]}
allocators:
  glibc: {}
  # Twice the work: "slower" however busy the machine is with other work.
  longer: {command: ["$WORKLOAD", spin, "6000000"]}
  jemalloc: {preload: jemalloc, env: {MALLOC_CONF: "dirty_decay_ms:500"}}
  broken: {command: ["$WORKLOAD", exit, "3"]}
samples: 6
YAML
run_alloclab 9 run "$WORK/spec.yaml" --quiet
printf 'calibrate: true\n' >>"$WORK/spec.yaml"
run_alloclab 9 run "$WORK/spec.yaml" --quiet --label nightly --commit 4b0a99e
run_alloclab 0 report 2 --compare 1 --history -o "$WORK/report.html"

python3 - "$WORK/report.html" <<'PY' || fail "report structure"
import sys, xml.etree.ElementTree as ET
ns = {"h": "http://www.w3.org/1999/xhtml", "s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()            # the whole page is well-formed XML
svgs = root.findall(".//s:svg", ns)
# 2 strip plots + 1 forest plot + 2 time/memory plots + history series (2 cells x 3 measured variants)
assert len(svgs) >= 11, len(svgs)
for svg in svgs:
    ET.fromstring(ET.tostring(svg))               # and each SVG on its own
headings = [h.text for h in root.findall(".//h:h2", ns)]
for wanted in ("Results", "Samples", "Ratios to glibc", "Time and memory", "Change from run 1 to run 2", "History", "Run"):
    assert wanted in headings, (wanted, headings)
text = ET.tostring(root, encoding="unicode")
assert "<script" not in text and "http://" not in text.replace("http://www.w3.org/", ""), "external or scripted content"
items = [ET.tostring(li, encoding="unicode", method="text").strip() for li in root.findall(".//h:li", ns)]
assert "[n=1] broken: exit: exit code 3" in items, items                 # smoke-phase findings
assert "dirty_decay_ms = 500" in text, "the probe's effective options"    # allocator metadata
assert "slower" in text, "verdicts"
rows = {ET.tostring(tr[0], encoding="unicode", method="text"): ET.tostring(tr[1], encoding="unicode", method="text")
        for tr in root.findall(".//h:tr", ns) if len(tr) == 2}
assert rows["isolation"].startswith(("children in a cgroup under ", "process groups only: ")), rows
assert rows["start-up (null workload)"].startswith("glibc "), rows               # calibrate: true
assert rows["label"] == "nightly" and rows["commit"] == "4b0a99e", rows         # run --label, --commit
# Ticks at round values, in human units: "12.0 ms", "1.05x", never "2.381e+05".
ticks = [t.text for t in root.findall(".//s:text[@class='tick']", ns)]
assert ticks and not any("e+" in t or "e-" in t for t in ticks), ticks
ratio_ticks = [float(t[:-1]) for t in ticks if t.endswith("x")]
assert ratio_ticks and all(abs(r * 100 - round(r * 100)) < 1e-6 for r in ratio_ticks), ratio_ticks
# A point's colour says its verdict, as its words do: "longer" does twice the work, slower (red).
def colours(svg, label_suffix, shape):
    found, items = set(), list(svg)
    for i, el in enumerate(items):
        if el.tag.endswith("text") and (el.text or "").endswith(label_suffix):
            nxt = next(x for x in items[i + 1:] if x.tag.endswith(shape))
            found.add(nxt.get("fill") if shape == "circle" else nxt.get("stroke"))
    return found
forest = next(f.find("s:svg", ns) for f in root.findall(".//h:figure", ns)
              if f.find("h:figcaption", ns).text == "Each variant's ratio to the baseline, per cell")
assert [t.text for t in forest.iter("{http://www.w3.org/2000/svg}text") if t.get("font-weight") == "bold"] == ["n=1", "n=2"]
assert colours(forest, "longer", "circle") == {"#d62728"}, colours(forest, "longer", "circle")
# Each variant keeps its colour in the charts that draw variants: the samples' and the history's.
figures = root.findall(".//h:figure", ns)
for variant in ("longer", "jemalloc"):
    in_samples = colours(figures[0].find("s:svg", ns), variant, "circle")
    in_history = {f.find("s:svg/s:polyline", ns).get("stroke") for f in figures
                  if f.find("h:figcaption", ns).text.endswith("] " + variant) and f.find("s:svg/s:polyline", ns) is not None}
    assert len(in_samples) == 1 and in_history == in_samples, (variant, in_samples, in_history)
PY

# The results table states its intervals' level, the one the forest plot states (it said "at
# 1 - alpha" while the plot said 99.8333%; fresh-eyes review of issue 26).
level=$(sed -n 's|.*with its \([0-9.]*%\) interval; .*|\1|p' "$WORK/report.html" | head -1)
[[ -n $level ]] || fail "no level in the forest's caption"
expect_contains "$(cat "$WORK/report.html")" "the ratio to the baseline with its $level interval and verdict" \
    "the results table at the forest's level"

# As a person at 1400 px reads it: no sideways scrolling, no word broken ("ce|ll", "varia|nt",
# "tcmalloc_mini|mal" in the table headers), no two chart labels on top of each other.
python3 "$(dirname "$0")/page_check.py" "$WORK/report.html" >"$WORK/check.out" 2>&1 ||
    fail "a page a person cannot read: $(cat "$WORK/check.out")"

# The change table gives both runs' medians, as compare prints them; the history's x axis names
# the runs by what they carry (here their start times: one run has no label or commit), never
# "run 1"; ticks are round ("10 ms", not "10.0 ms").
python3 - "$WORK/report.html" <<'PY' || fail "the change table and the history's axis"
import re, sys, xml.etree.ElementTree as ET
H, S = "{http://www.w3.org/1999/xhtml}", "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
heads = [["".join(th.itertext()) for th in tr] for tr in root.iter(H + "tr") if tr[0].tag == H + "th"]
assert ["cell", "variant", "run 1", "run 2", "change"] in heads, heads
ticks = [t.text for t in root.iter(S + "text") if t.get("class") == "tick"]
assert not any(t.startswith("run ") for t in ticks), ticks
assert not any(t.endswith(".000 s") for t in ticks), ticks
assert any(re.fullmatch(r"\d+ (ms|s)", t) for t in ticks), ticks  # whole units without decimals
assert len(set(t for t in ticks if t.count(":") == 2)) > 1, ticks     # two runs, two names
titles = ["".join(t.itertext()) for t in root.iter(S + "text")]
assert any(t.startswith("run, by start time (UTC) on ") for t in titles) and "median wall time" in titles, titles
PY

# A real browser: the screenshot has content and the console stays quiet.
cd "$WORK"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1100,2400 \
    --screenshot="$WORK/report.png" --enable-logging=stderr --v=0 "file://$WORK/report.html" \
    >"$WORK/chromium.out" 2>"$WORK/chromium.err" || fail "chromium failed: $(tail -5 "$WORK/chromium.err")"
[[ -s $WORK/report.png ]] || fail "no screenshot"
grep -q "CONSOLE" "$WORK/chromium.err" && fail "console messages: $(grep CONSOLE "$WORK/chromium.err")"
python3 - "$WORK/report.png" <<'PY' || fail "blank screenshot"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat, width, height = 8, b"", 0, 0
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    if kind == b"IHDR":
        width, height = struct.unpack(">II", body[:8])
    elif kind == b"IDAT":
        idat += body
    pos += 12 + length
raw = zlib.decompress(idat)
ink = sum(1 for b in raw if b < 0xF0)             # anything darker than near-white
assert width >= 1000 and height >= 2000, (width, height)
assert ink > len(raw) * 0.005, (ink, len(raw))    # text, points and lines, not an empty page
PY

# Cells a thousand times apart: one shared axis would squash the small one into a dot, so each
# cell gets its own, and the page says so.
cat >"$WORK/scales.yaml" <<YAML
experiment: scales
command: ["$WORKLOAD", report, cost, "{n}"]
params: {n: ["1", "1000"]}
allocators: {glibc: {}, twin: {}}
metric: reported:cost
verify: none
samples: 3
YAML
run_alloclab 0 run "$WORK/scales.yaml" --quiet
run_alloclab 0 report latest -o "$WORK/scales.html"
grep -q "Each cell has its own axis" "$WORK/scales.html" || fail "per-cell axes not used"
grep -q "All cells share one axis" "$WORK/report.html" || fail "the first report's cells lost their shared axis"

# A run without smoke runs (an import of another tool's file) says why it has no memory overhead,
# instead of leaving the section out.
cat >"$WORK/hf.json" <<'JSON'
{"results": [{"command": "a", "mean": 0.01, "times": [0.010, 0.011, 0.012, 0.010, 0.011], "exit_codes": [0, 0, 0, 0, 0]},
             {"command": "b", "mean": 0.02, "times": [0.020, 0.021, 0.022, 0.020, 0.021], "exit_codes": [0, 0, 0, 0, 0]}]}
JSON
run_alloclab 0 import "$WORK/hf.json"
run_alloclab 0 report latest -o "$WORK/imported.html"
expect_contains "$(cat "$WORK/imported.html")" \
    "<h2>Memory overhead</h2>" "the memory overhead's section"
expect_contains "$(cat "$WORK/imported.html")" \
    "not given: no smoke run of this run recorded the peak of the bytes the program asked for" "why it is not given"
