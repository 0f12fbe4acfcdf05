#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The module map of src/README.md against the code (TAP): for every module (a folder of
src/), the modules its files #include must be exactly those its row of the README's
"Dependencies" table names, and the table must list every module once. Also checks that
no two modules include each other (a cycle of two)."""
import os
import re
import sys

root = sys.argv[1]
src = os.path.join(root, "src")
readme = open(os.path.join(src, "README.md"), encoding="utf-8").read()

section = re.search(r"^## Dependencies.*?\n(.*?)(?:\n## |\Z)", readme, re.S | re.M)
table = {}
if section:
    for line in section.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not cells[0] or cells[0] in ("module",) or set(cells[0]) <= set("-:"):
            continue
        name = cells[0].strip("`")
        deps = {d.strip().strip("`") for d in cells[1].split(",")} - {"", "-"}
        table[name] = deps

actual = {}
for module in sorted(os.listdir(src)):
    folder = os.path.join(src, module)
    if not os.path.isdir(folder):
        continue
    deps = set()
    for name in os.listdir(folder):
        if not name.endswith((".c", ".h")):
            continue
        text = open(os.path.join(folder, name), encoding="utf-8").read()
        for inc in re.findall(r'^#include "([a-z0-9_-]+)/', text, re.M):
            if inc != module:
                deps.add(inc)
    actual[module] = deps

n = 0
failed = False


def report(ok, what):
    global n, failed
    n += 1
    print(("ok" if ok else "not ok") + f" {n} - {what}")
    failed = failed or not ok


report(bool(table), "src/README.md has a Dependencies table")
for module in sorted(actual):
    want = table.get(module)
    if want is None:
        report(False, f"{module} is missing from the Dependencies table")
        continue
    extra, missing = actual[module] - want, want - actual[module]
    detail = "".join(
        [f"; includes {', '.join(sorted(extra))} not in the table" if extra else "",
         f"; the table names {', '.join(sorted(missing))}, never included" if missing else ""])
    report(not extra and not missing, f"{module} depends on what the map says{detail}")
for module in sorted(set(table) - set(actual)):
    report(False, f"the table names {module}, which is not a folder of src/")
for a in sorted(actual):
    for b in sorted(actual[a]):
        if a < b and a in actual.get(b, set()):
            report(False, f"{a} and {b} include each other")
print(f"1..{n}")
sys.exit(1 if failed else 0)
