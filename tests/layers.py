#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The architecture as a test (docs/architecture.md).

Two graphs are checked. Includes, from the sources: which component may include which. Calls,
from the built objects (nm: what each object defines and what it needs): a module (a .c file)
calls only into the components it may include, and no circle of calls joins modules inside a
component, which an include check alone misses (a header implemented by the file including it).

Usage: layers.py SOURCE_DIR BUILD_DIR. Prints every breach and exits 1; 0 when all holds."""
import glob
import os
import re
import subprocess
import sys

# component -> the components it may use (besides itself). Dependencies point one way:
# cli, daemon -> db -> runner -> configs -> util; stats (pure statistics) is used by all of them
# above util and uses nothing but util; probe stands alone (runner reads its report format).
ALLOWED = {
    "cli": {"db", "runner", "configs", "stats", "util"},
    "daemon": {"db", "runner", "configs", "stats", "util"},
    "db": {"runner", "configs", "stats", "util"},
    "runner": {"configs", "stats", "util", "probe"},
    "configs": {"util"},
    "stats": {"util"},
    "util": set(),
    "probe": set(),
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z0-9_-]+)/([^"]+)"', re.M)


def allowed(component, target):
    return target == component or target in ALLOWED[component]


def include_breaches(root):
    for component in ALLOWED:
        for path in sorted(glob.glob(os.path.join(root, component, "*.[ch]"))):
            with open(path, encoding="utf-8") as f:
                for target, header in INCLUDE.findall(f.read()):
                    if target in ALLOWED and not allowed(component, target):
                        yield (f"{component}/{os.path.basename(path)} includes {target}/{header}: "
                               f"{component}/ may use only {sorted(ALLOWED[component]) or 'itself'}")


def symbols(obj, *options):
    out = subprocess.run(["nm", *options, obj], capture_output=True, text=True, check=True).stdout
    return [line.split() for line in out.splitlines() if line.strip()]


def call_graph(root, build):
    """{(component, module): set of (component, module) it calls}, from the objects of the
    component's current sources (a build tree may hold objects of removed files)."""
    defined, needed = {}, {}
    for component in ALLOWED.keys() - {"probe"}:  # a preloaded library: it defines malloc & co.
        for obj in glob.glob(os.path.join(build, component, "CMakeFiles", "*", "*.c.o")):
            source = os.path.basename(obj)[: -len(".o")]
            if not os.path.exists(os.path.join(root, component, source)):
                continue
            module = (component, source[: -len(".c")])
            for fields in symbols(obj, "--defined-only", "-g"):
                if len(fields) == 3 and fields[1] in "TDBRCW":
                    defined[fields[2]] = module
            needed[module] = {fields[-1] for fields in symbols(obj, "-u")}
    return {m: {defined[s] for s in syms if s in defined and defined[s] != m} for m, syms in needed.items()}


def cycle(edges):
    """One circle of the directed graph {node: set(nodes)} as a list of nodes, or None."""
    state = {}

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt, path + [nxt])
                if found:
                    return found
        state[node] = "done"
        return None

    for node in sorted(edges):
        if node not in state:
            found = visit(node, [node])
            if found:
                return found
    return None


def call_breaches(graph):
    for (component, module), callees in sorted(graph.items()):
        for target, callee in sorted(callees):
            if not allowed(component, target):
                yield f"{component}/{module}.c calls into {target}/{callee}.c"
    for component in ALLOWED:
        inner = {m: {c for c in callees if c[0] == component} for m, callees in graph.items() if m[0] == component}
        found = cycle(inner)
        if found:
            yield f"{component}/: a circle of calls: {' -> '.join(m + '.c' for _, m in found)}"


def main():
    root, build = sys.argv[1], sys.argv[2]
    graph = call_graph(root, build)
    if not graph:
        print(f"no objects under {build}: build first")
        return 1
    breaches = list(include_breaches(root)) + list(call_breaches(graph))
    for b in breaches:
        print(b)
    if not breaches:
        print(f"layering holds: {len(graph)} modules in {len(ALLOWED)} components, no circle of calls")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
