#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every figure the documentation quotes as what parosim prints, checked against parosim (TAP).

The rule (issue #42): a figure the docs give as what the program prints now is checked here,
by running the command written beside it, or it is not written. This test finds the marked
blocks in README.md, scenarios/README.md, docs/*.md and docs/cli/*.md, and in the header
comments of scenarios/*.yaml; runs each block's command with this build's parosim (once per
distinct command: every block quoting it reads the same output); and requires every number
of the block to be one the output prints, at the rounding the block quotes it with.

docs/decisions.md and CHANGELOG.md are left out on purpose: they are dated history, each
entry true of the version and day it names, not a claim about what parosim prints today.
The same holds for any passage that names the version and date its figures came from
("parosim 0.1.0, 2026-11-23"); such a passage must not be marked.

Markers
  The command is a parosim command (run with this build's), or one of our Python scripts
  under validation/ or tests/ (`python3 validation/published/check.py parosim .`, where the
  word parosim stands for this build's).
  Markdown, a line of its own: <!-- figures: parosim run scenarios/X.yaml --strategies A,B -->
    The block is the lines after it, up to the first blank line (a paragraph, a list item, a
    table), another marker, or a line <!-- /figures -->; inline <!-- figures --> and
    <!-- /figures --> in it narrow it to the passage between them (comments without "--"
    inside, so that Markdown hides them inline too).
  Markdown tables with one command a row, a comment of its own before the table:
    <!-- figures by row:
    7B, full: parosim run scenarios/llama-7b_a100x8-100g_n32.yaml --strategies NII,zero-3
    7B, Psi/16: parosim run scenarios/paro-llama-7b-psi16_n32.yaml --strategies NII,zero-3
    -->
    Each data row of the table that follows is checked against the command of its first
    cell (every data row must have one): its cells under a heading that starts with
    "parosim", or, when no heading does, all its cells but the first; a heading that names
    one strategy ("parosim: ZeRO-1") scopes its column's figures to that strategy.
  YAML header comments: a line "# figures: parosim ..."; the block is the comment lines
    after it up to "# /figures" or the end of the comment.

Which numbers are checked, and how
  - Every number standing alone: not a part of a name (H100, zero-3, 8x7B, fp8, Psi/16),
    not in `code`, not after "decision", "issue", "section", "table", "figure", "#", not a
    date or a version (0.2.0), and not in a parenthesis that starts with "measured" or "the
    paper" (figures measured elsewhere, set beside parosim's).
  - A number matches an output number o when o rounds to it at its decimals (4.55 matches
    4.552; 30% matches 0.302 or 30.2). A unit after it widens o to the unit's scale too
    (GiB: o / 2^30, GB: o / 1e9, ms: o x 1e3, us: o x 1e6, %: o x 100), so JSON's bytes
    and seconds can be quoted as a table would print them.
  - After a strategy's name or alias (ZeRO-3, NII, MiCS/FSDP-hsz...), the nearest before it
    in the block, a number must match in that strategy's own row of the output (every named
    strategy's row, for names joined by "/"); without a name before it, anywhere in the
    output. A name resets at a table cell's edge, a semicolon or the end of a sentence.
  - "A 2.32x B" between two strategies' names is the ratio of B's step to A's (the "step"
    column of a table, time.step in JSON), at the quoted decimals.

The self-check doctors one figure of a real block (one in Markdown, one in YAML) and
requires the check to fail on the copy: a test that cannot fail checks nothing.

  doc-figures.py PAROSIM ROOT [--list]   (--list: each block's figures as they are read)
"""
import csv
import glob
import json
import math
import os
import re
import shlex
import subprocess
import sys

ROOT_DOCS = ["README.md", "scenarios/README.md"]
EXCLUDED = {"docs/decisions.md", "CHANGELOG.md"}
UNITS = {"GiB": [1 / 2**30], "GB": [1e-9], "MiB": [1 / 2**20], "MB": [1e-6], "TB": [1e-12],
         "ms": [1e3], "us": [1e6], "µs": [1e6], "%": [100.0], "s": [], "days": [1 / 86400]}
SKIP_AFTER = re.compile(r"(?:decisions?|issues?|sections?|tables?|figures?|rounds?|stops?|"
                        r"stages?|schema|version|#)\s*(?:\d+\s*(?:,|and|to|-)\s*)*$", re.I)
NUMBER = re.compile(r"(?<![\w./\-+^~])([-+]?\d+(?:,\d{3})*(?:\.\d+)?(?:e[-+]?\d+)?)"
                    r"(?!(?!x\b)[\w/])(?!\.\d)(?!-\d)")
UNIT_AFTER = re.compile(r"\s*(GiB|GB|MiB|MB|TB|ms|us|µs|%|days|s)\b|\s?(%)")


class Output:
    """A command's output: all its numbers, its strategies' rows and their steps."""

    def __init__(self, text, aliases):
        self.text = text
        self.numbers = numbers_in(text)
        self.rows = {}   # canonical name -> numbers of its row(s)
        self.steps = {}  # canonical name -> step (s)
        try:
            doc = json.loads(text)
        except ValueError:
            doc = None
        if isinstance(doc, dict) and isinstance(doc.get("strategies"), list):
            for s in doc["strategies"]:
                self.rows.setdefault(s["name"], []).extend(json_numbers(s))
                if "step" in s.get("time", {}):
                    self.steps[s["name"]] = s["time"]["step"]
            return
        lines = text.splitlines()
        if lines and "name" in lines[0].split(",") and not lines[0].startswith("#"):
            for r in csv.DictReader(lines):  # run, strategies, sweep, plan --format csv
                name = canonical(r["name"], aliases)
                if name is not None:
                    values = [v for k, v in r.items() if k not in ("name", "aliases")]
                    self.rows.setdefault(name, []).extend(numbers_in(",".join(values)))
                    if r.get("time_step"):
                        self.steps[name] = float(r["time_step"])
            return
        column = None
        for line in lines:
            if line.startswith("#rank"):
                head = line[1:].split()
                column = head.index("step") if "step" in head else None
                continue
            if line.startswith("#"):
                continue
            fields = line.split()
            if len(fields) < 3 or not fields[0].isdigit():
                continue
            name = canonical(fields[1], aliases)
            if name is None:
                continue
            self.rows.setdefault(name, []).extend(numbers_in(line))
            if column is not None and column < len(fields):
                try:
                    self.steps[name] = float(fields[column])
                except ValueError:
                    pass


def json_numbers(value):
    if isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    if isinstance(value, dict):
        return [x for v in value.values() for x in json_numbers(v)]
    if isinstance(value, list):
        return [x for v in value for x in json_numbers(v)]
    return []


def numbers_in(text):
    found = []
    for m in re.finditer(r"[-+]?\d+(?:,\d{3})+(?![\d])|[-+]?\d*\.?\d+(?:[eE][-+]?\d+)?", text):
        try:
            found.append(float(m.group(0).replace(",", "")))
        except ValueError:
            pass
    return found


def canonical(word, aliases):
    return aliases.get(word.lower())


def strategy_aliases(parosim, root):
    """name or alias (lower case) -> the strategy's name, from `strategies --format csv`."""
    out = subprocess.run([parosim, "strategies", "scenarios/llama-7b_a100x8-100g_n32.yaml",
                          "--format", "csv"], cwd=root, capture_output=True, text=True,
                         check=True).stdout.splitlines()
    head = out[0].split(",")
    names = {}
    for line in out[1:]:
        f = line.split(",")
        name = f[head.index("name")]
        names[name.lower()] = name
        for a in f[head.index("aliases")].split(";"):
            if a:
                names[a.lower()] = name
    return names


def name_pattern(aliases):
    words = sorted(aliases, key=len, reverse=True)
    one = "|".join(re.escape(w) for w in words)
    return re.compile(r"(?<![\w+\-])((?:%s)(?:/(?:%s))*)(?![\w+\-])" % (one, one), re.I)


def blank_excluded(text):
    """The text with what is not checked blanked out (kept the same length, so positions
    and the names before a number stay where they were)."""
    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    text = re.sub(r"`[^`]*`", blank, text)
    text = re.sub(r"\]\([^)]*\)", blank, text)  # link targets
    text = re.sub(r"\((?:measured|the\s+paper|paper)\b[^()]*(?:\([^()]*\)[^()]*)*\)", blank, text,
                  flags=re.I)
    text = re.sub(r"\d{4}-\d{2}-\d{2}", blank, text)
    text = re.sub(r"\b\d+\.\d+\.\d+\b", blank, text)
    return text


def figures(text, aliases, names_re):
    """(figure text, value, decimals, exponent, unit, names, ratio-to names, position) for
    each checked number."""
    text = blank_excluded(text)
    names = [(m.start(), m.end(), m.group(1)) for m in names_re.finditer(text)]
    result = []
    for m in NUMBER.finditer(text):
        if SKIP_AFTER.search(text[max(0, m.start() - 40):m.start()]):
            continue
        token = m.group(1)
        mantissa = re.split(r"[eE]", token)[0]
        decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
        exponent = int(re.split(r"[eE]", token)[1]) if re.search(r"[eE]", token) else 0
        value = float(token.replace(",", ""))
        after = text[m.end():m.end() + 12]
        u = UNIT_AFTER.match(after)
        unit = (u.group(1) or u.group(2)) if u else None
        # the strategy named last before the number, within its cell, clause or sentence
        scope = None
        for start, end, word in names:
            if end > m.start():
                break
            between = text[end:m.start()]
            if re.search(r"[|;]|\.\s|\n\s*\n", between):
                continue
            scope = [canonical(w, aliases) for w in word.split("/")]
        ratio_to = None
        if re.match(r"x\s", text[m.end():m.end() + 2]):
            nxt = names_re.match(text, m.end() + 2)
            if nxt and scope:
                ratio_to = [canonical(w, aliases) for w in nxt.group(1).split("/")]
                unit = "x"
        result.append((token + (unit or ""), value, decimals, exponent, unit, scope, ratio_to,
                       m.start()))
    return result


def matches(value, decimals, exponent, unit, candidates):
    tolerance = 0.5 * 10 ** (exponent - decimals) * (1 + 1e-9) + 1e-12
    scales = [1.0] + UNITS.get(unit, [])
    return any(math.isfinite(o) and abs(o * k - value) <= tolerance
               for o in candidates for k in scales)


LIST = "--list" in sys.argv


def check_block(text, out, aliases, names_re):
    """The figures of @text the output @out does not print: a list of messages."""
    wrong = []
    found = figures(text, aliases, names_re)
    if LIST:
        for f in found:
            print(f"#     {f[0]:>10}  {'/'.join(f[5] or ['-'])}{' vs ' + f[6][0] if f[6] else ''}")
    if not found:
        return ["the block quotes no figure"]
    for token, value, decimals, exponent, unit, scope, ratio_to, _at in found:
        if ratio_to:
            a, b = scope[0], ratio_to[0]
            if a not in out.steps or b not in out.steps:
                wrong.append(f"{token}: no step for {a} or {b} in the output")
            elif not matches(value, decimals, exponent, None, [out.steps[b] / out.steps[a]]):
                wrong.append(f"{token} ({a} against {b}): the output gives "
                             f"{out.steps[b] / out.steps[a]:.4g}")
            continue
        if scope:
            for name in scope:
                row = out.rows.get(name)
                if row is None:
                    wrong.append(f"{token}: no row for {name} in the output")
                elif not matches(value, decimals, exponent, unit, row):
                    shown = " ".join(f"{x:g}" for x in row[:14])
                    wrong.append(f"{token}: not in {name}'s row ({shown})")
        elif not matches(value, decimals, exponent, unit, out.numbers):
            wrong.append(f"{token}: printed nowhere in the output")
    return wrong


def line_offsets(lines):
    offsets, at = [], 0
    for line in lines:
        offsets.append(at)
        at += len(line) + 1
    return offsets


def blocks_markdown(path, text, names_re):
    """(line, command, text, offset of the text in the document or None) for each marked
    block; for a by-row table, one a row."""
    lines = text.split("\n")
    offsets = line_offsets(lines)
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        m = re.match(r"<!--\s*figures:\s*((?:parosim|python3)\b.*?)\s*-->$", line)
        if m:
            body = []
            j = i + 1
            while j < len(lines) and lines[j].strip() and not re.match(
                    r"<!--\s*(?:figures(?::| by row:)|/figures\s*-->$)", lines[j].strip()):
                body.append(lines[j])
                j += 1
            body = "\n".join(body)
            offset = offsets[i + 1] if body else None
            # inline <!-- figures --> and <!-- /figures --> narrow the block to a passage
            start = re.search(r"<!--\s*figures\s*-->", body)
            if start:
                body, offset = body[start.end():], offset + start.end()
            end = re.search(r"<!--\s*/figures\s*-->", body)
            if end:
                body = body[:end.start()]
            yield i + 1, m.group(1), body, offset
            i = j
            continue
        if re.match(r"<!--\s*figures by row:\s*$", line):
            commands = {}
            j = i + 1
            while j < len(lines) and lines[j].strip() != "-->":
                key, _, command = lines[j].partition(": ")
                commands[key.strip()] = command.strip()
                j += 1
            j += 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            rows_seen, checked, prefix = set(), None, []
            while j < len(lines) and lines[j].strip().startswith("|"):
                cells = [c.strip() for c in lines[j].strip().strip("|").split("|")]
                header = j + 1 < len(lines) and re.match(r"^\|?\s*:?-{3,}", lines[j + 1].strip())
                if header:  # the columns headed "parosim...", else all but the first
                    checked = [k for k, c in enumerate(cells) if c.startswith("parosim")] or \
                        list(range(1, len(cells)))
                    # a heading naming one strategy scopes its column's figures to it
                    named = [names_re.findall(c) for c in cells]
                    prefix = [n[0] + " " if len(n) == 1 else "" for n in named]
                elif not re.match(r"^:?-{3,}", cells[0]):
                    if cells[0] not in commands:
                        yield j + 1, None, f"the row '{cells[0]}' has no command", None
                    else:
                        rows_seen.add(cells[0])
                        body = " | ".join(prefix[k] + cells[k] for k in checked or []
                                          if k < len(cells))
                        yield j + 1, commands[cells[0]], "| " + body + " |", None
                j += 1
            for key in sorted(set(commands) - rows_seen):
                yield i + 1, None, f"the command for '{key}' names no row of the table", None
            i = j
            continue
        i += 1


def blocks_yaml(path, text, names_re):
    """As blocks_markdown, in the header comment; the text with each line's '#' blanked."""
    lines = text.split("\n")
    offsets = line_offsets(lines)
    for i, line in enumerate(lines):
        if not line.startswith("#"):
            break
        m = re.match(r"#\s*figures:\s*((?:parosim|python3)\b.*)$", line)
        if not m:
            continue
        body = []
        for follow in lines[i + 1:]:
            if not follow.startswith("#") or re.match(r"#\s*/figures\b", follow):
                break
            body.append(" " + follow[1:])
        yield i + 1, m.group(1).strip(), "\n".join(body), offsets[i + 1] if body else None


def documents(root):
    paths = list(ROOT_DOCS) + sorted(glob.glob("docs/*.md", root_dir=root)) + sorted(
        glob.glob("docs/cli/*.md", root_dir=root))
    for p in paths:
        if p not in EXCLUDED and os.path.exists(os.path.join(root, p)):
            yield p, blocks_markdown
    for p in sorted(glob.glob("scenarios/*.yaml", root_dir=root)):
        yield p, blocks_yaml


class Runner:
    """Runs each distinct command once."""

    def __init__(self, parosim, root, aliases):
        self.parosim, self.root, self.aliases, self.cache = parosim, root, aliases, {}

    def output(self, command):
        if command not in self.cache:
            argv = shlex.split(command)
            if argv[0] == "parosim":
                argv[0] = self.parosim
            elif argv[0] == "python3" and len(argv) > 1 and argv[1].startswith(
                    ("validation/", "tests/")):
                argv = [sys.executable] + [self.parosim if a == "parosim" else a
                                           for a in argv[1:]]
            else:
                raise ValueError(f"neither parosim nor one of our scripts: {command}")
            p = subprocess.run(argv, cwd=self.root, capture_output=True, text=True, timeout=240)
            self.cache[command] = (p.returncode, Output(p.stdout, self.aliases), p.stderr)
        return self.cache[command]


def check_document(path, reader, text, runner, names_re):
    """(line, command, messages) of every block of one document."""
    for line, command, body, _offset in reader(path, text, names_re):
        if command is None:
            yield line, "-", [body]
            continue
        try:
            code, out, err = runner.output(command)
        except (ValueError, subprocess.TimeoutExpired) as e:
            yield line, command, [str(e)]
            continue
        if code != 0:
            yield line, command, [f"exit {code}: {err.strip()[:200]}"]
            continue
        yield line, command, check_block(body, out, runner.aliases, names_re)


def doctored(text, reader, path, aliases, names_re):
    """@text with the first checked figure of its first block made wrong (its last digit
    plus 3, and one more unit of its first digit), or None."""
    for _line, command, body, offset in reader(path, text, names_re):
        if command is None or offset is None:
            continue
        found = figures(body, aliases, names_re)
        if not found:
            continue
        at = offset + found[0][7]
        token = NUMBER.match(text, at).group(1)
        digits = list(token)
        last = max(i for i, c in enumerate(digits) if c.isdigit())
        first = min(i for i, c in enumerate(digits) if c.isdigit())
        digits[last] = str((int(digits[last]) + 3) % 10)
        digits[first] = str(int(digits[first]) % 9 + 1)
        return text[:at] + "".join(digits) + text[at + len(token):]
    return None


def main():
    parosim = os.path.abspath(sys.argv[1])
    root = os.path.abspath(sys.argv[2])
    aliases = strategy_aliases(parosim, root)
    names_re = name_pattern(aliases)
    runner = Runner(parosim, root, aliases)
    n, failed, samples, failing = 0, False, {}, {}
    for path, reader in documents(root):
        text = open(os.path.join(root, path), encoding="utf-8").read()
        for line, command, wrong in check_document(path, reader, text, runner, names_re):
            n += 1
            if command != "-":
                samples.setdefault(reader, (path, text))
            if wrong:
                failing[path] = failing.get(path, 0) + 1
                failed = True
                print(f"not ok {n} - {path}:{line}: {command}")
                for w in wrong:
                    print(f"#   {w}")
            else:
                print(f"ok {n} - {path}:{line}: {command}")
    # The self-check: one figure changed in a copy of a real block must fail that block.
    for reader, (path, text) in sorted(samples.items(), key=lambda kv: kv[1][0]):
        n += 1
        bad = doctored(text, reader, path, aliases, names_re)
        if bad is None:
            failed = True
            print(f"not ok {n} - self-check: no figure to doctor in {path}")
            continue
        caught = sum(1 for _l, _c, w in check_document(path, reader, bad, runner, names_re) if w)
        if caught > failing.get(path, 0):
            print(f"ok {n} - self-check: a doctored figure of {path} fails")
        else:
            failed = True
            print(f"not ok {n} - self-check: a doctored figure of {path} passes")
    if n == 0:
        failed = True
        print("not ok 1 - no figure block found")
        n = 1
    print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
