#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks HTML pages as a person at a 1400 px window reads them, in headless Chromium.

Usage: page_check.py PAGE.html...

Each page must parse as XML (the pages are XHTML), every link must lead to a file, and, laid
out by Chromium at 1400 px with every <details> open: the page does not scroll horizontally,
no word is broken across lines, and no two labels of one chart overlap (from the DOM's
bounding boxes). Prints every breach and exits 1; prints a line per page and exits 0 when all
hold."""
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

XHTML = "{http://www.w3.org/1999/xhtml}"
WIDTH = 1400

# Run in the page once it is laid out: what it finds goes into a <pre id="page-check">, which
# --dump-dom prints.
CHECK = r"""
<script>
(function () {
  for (const d of document.querySelectorAll("details")) d.open = true;
  const found = {scroll: document.documentElement.scrollWidth - document.documentElement.clientWidth,
                 broken: [], overlaps: []};
  // Words broken across lines: a word whose rectangles lie on more than one line.
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node; (node = walker.nextNode());) {
    if (node.parentElement.closest("pre, svg, script, style")) continue;
    const text = node.data, word = /\S+/g;
    for (let m; (m = word.exec(text));) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const tops = new Set(Array.from(range.getClientRects()).filter(r => r.width > 0).map(r => Math.round(r.top)));
      if (tops.size > 1) found.broken.push(m[0]);
    }
  }
  // Labels of one chart that overlap by more than a pixel each way.
  for (const svg of document.querySelectorAll("svg")) {
    const boxes = Array.from(svg.querySelectorAll("text")).map(t => [t.textContent, t.getBoundingClientRect()])
                       .filter(b => b[1].width > 0);
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i][1], b = boxes[j][1];
        const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (w > 1 && h > 1) found.overlaps.push([boxes[i][0], boxes[j][0]]);
      }
  }
  const out = document.createElement("pre");
  out.id = "page-check";
  out.textContent = JSON.stringify(found);
  document.body.appendChild(out);
})();
</script>
"""


def links(path, root):
    for a in root.iter(XHTML + "a"):
        href = a.get("href")
        if href and not re.match(r"^[a-z]+:", href):
            yield href, os.path.normpath(os.path.join(os.path.dirname(path), href.split("#")[0]))


def laid_out(path, scratch):
    text = open(path, encoding="utf-8").read()
    # Beside the page, so that its relative links and the browser's view of it stay the same.
    checked = os.path.join(os.path.dirname(path), ".page-check-" + os.path.basename(path))
    with open(checked, "w", encoding="utf-8") as f:
        f.write(text.replace("</body>", CHECK + "</body>"))
    try:
        dom = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                              f"--window-size={WIDTH},1000", "--user-data-dir=" + scratch, "--dump-dom",
                              "file://" + os.path.abspath(checked)],
                             capture_output=True, text=True, timeout=120).stdout
    finally:
        os.unlink(checked)
    m = re.search(r'<pre id="page-check">(.*?)</pre>', dom, re.S)
    if not m:
        return None
    return json.loads(m.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
                      .replace("&amp;", "&"))


def main(pages):
    breaches = []
    with tempfile.TemporaryDirectory() as scratch:
        for path in pages:
            before = len(breaches)
            try:
                root = ET.parse(path).getroot()
            except ET.ParseError as e:
                breaches.append(f"{path}: not well-formed: {e}")
                continue
            for href, target in links(path, root):
                if not os.path.exists(target):
                    breaches.append(f"{path}: a link to {href} leads nowhere")
            found = laid_out(path, scratch)
            if found is None:
                breaches.append(f"{path}: Chromium did not lay it out")
                continue
            if found["scroll"] > 0:
                breaches.append(f"{path}: scrolls {found['scroll']} px horizontally at {WIDTH} px")
            for word in found["broken"]:
                breaches.append(f"{path}: a word broken across lines: {word!r}")
            for a, b in found["overlaps"]:
                breaches.append(f"{path}: chart labels overlap: {a!r} and {b!r}")
            print(f"{path}: ok" if len(breaches) == before else f"{path}: {len(breaches) - before} breaches")
    for b in breaches:
        print(b, file=sys.stderr)
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
