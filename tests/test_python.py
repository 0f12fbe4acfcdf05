#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Python binding (python/parosim) against the CLI. TAP.

usage: PAROSIM_LIBRARY=build/src/libparosim.so test_python.py PAROSIM ROOT
"""
import json
import os
import subprocess
import sys
import threading

if os.environ.get("PAROSIM_SANITIZED"):
    # an ASan-instrumented libparosim cannot load into an uninstrumented python3 (the
    # sanitizer's runtime must come first); the plain build runs these
    print("1..0 # SKIP the library is built with sanitizers")
    sys.exit(0)
root = sys.argv[2]
sys.path.insert(0, os.path.join(root, "python"))
import parosim  # noqa: E402  (after the path is set)

os.chdir(root)
scenario = "scenarios/llama-7b_a100x8-100g_n32.yaml"
pick = "zero-3,IIG,NII"
tests = []


def test(fn):
    tests.append(fn)
    return fn


def cli(*args):
    return subprocess.run([sys.argv[1], *args], check=True, capture_output=True, text=True).stdout


@test
def run_is_the_cli_json():
    """Scenario.run gives the rows of `parosim run --format json`."""
    expected = json.loads(cli("run", scenario, "--strategies", pick, "--format", "json"))
    assert parosim.Scenario(scenario).run(pick) == expected["strategies"]


@test
def rows_agree_with_run():
    """run_rows (the C structs) carry the JSON's ranks, names, fits, tight, step times and the
    allocator's figures."""
    s = parosim.Scenario(scenario)
    rows, full = s.run_rows(pick), s.run(pick)
    assert [r["strategy"] for r in rows] == [r["name"] for r in full]
    assert [r["rank"] for r in rows] == [r["rank"] for r in full]
    assert [(r["fits"], r["tight"]) for r in rows] == [(r["fits"], r["tight"]) for r in full]
    for r, f in zip(rows, full):
        assert abs(r["step_s"] - f["time"]["step"]) <= 1e-9 * f["time"]["step"], (r, f)
        # the allocator's figures (decision 94), whole bytes in the JSON
        assert abs(r["allocated_bytes"] - f["memory"]["allocated"]) <= 1, (r, f)
        assert abs(r["reserved_bytes"] - f["memory"]["reserved"]) <= 1, (r, f)


@test
def yaml_text_and_overrides():
    """from_yaml with references relative to base_dir, and an override, as the CLI's --set."""
    text = open(scenario).read()
    s = parosim.Scenario.from_yaml(text, base_dir="scenarios", overrides=["topology.nodes=2"])
    expected = json.loads(cli("run", scenario, "--strategies", "NII", "--set", "topology.nodes=2",
                              "--format", "json"))
    assert s.run("NII") == expected["strategies"]


@test
def errors_are_located():
    """A bad override raises ParosimError with its location and a suggestion."""
    try:
        parosim.Scenario(scenario, overrides=["training.accumulaton=3"])
    except parosim.ParosimError as e:
        assert str(e).startswith("--set[1]:1:10: unknown key 'accumulaton'"), str(e)
        assert "did you mean 'accumulation'" in str(e)
        return
    raise AssertionError("no error")


@test
def unknown_strategy():
    try:
        parosim.Scenario(scenario).run("zero-9")
    except parosim.ParosimError as e:
        assert "zero-9" in str(e)
        return
    raise AssertionError("no error")


@test
def strategies_closed_form():
    expected = json.loads(cli("strategies", scenario, "--format", "json"))
    assert parosim.Scenario(scenario).strategies() == expected["strategies"]


@test
def threads_share_a_scenario():
    """Eight threads on one Scenario at once (issue #42): each gets what one thread alone
    gets, for the closed form and the simulation alike. (The race this guards against
    leaked memory, which Python cannot see; the C test api-threads fails on it under the
    sanitizers.)"""
    alone = parosim.Scenario(scenario)
    want = {"strategies": alone.strategies(), "run": alone.run(pick),
            "rows": alone.run_rows(pick)}
    for _ in range(4):  # fresh scenarios: a race would be on the first calls of each
        shared = parosim.Scenario(scenario)
        start = threading.Barrier(8)
        got = [None] * 8

        def work(i):
            start.wait()
            kind = ("strategies", "run", "rows")[i % 3]
            call = {"strategies": shared.strategies, "run": lambda: shared.run(pick),
                    "rows": lambda: shared.run_rows(pick)}[kind]
            got[i] = (kind, call())

        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for i, (kind, value) in enumerate(got):
            assert value == want[kind], (i, kind)


@test
def nul_is_refused():
    """A NUL inside any string raises ValueError as open() does, not cut there by ctypes
    (issue #42: the path up to the NUL, or a shorter override, was used)."""
    text = open(scenario).read()
    calls = {
        "path": lambda: parosim.Scenario(scenario + "\0.bak"),
        "override": lambda: parosim.Scenario(scenario,
                                             overrides=["training.accumulation=3\0 ignored"]),
        "yaml": lambda: parosim.Scenario.from_yaml(text + "\0garbage", base_dir="scenarios"),
        "base_dir": lambda: parosim.Scenario.from_yaml(text, base_dir="scenarios\0/x"),
        "label": lambda: parosim.Scenario.from_yaml(text, base_dir="scenarios", label="a\0b"),
        "strategies": lambda: parosim.Scenario(scenario).run("NII\0,zero-3"),
        "rows": lambda: parosim.Scenario(scenario).run_rows("NII\0,zero-3"),
        "format": lambda: parosim.Scenario(scenario).run_text("NII", format="json\0"),
    }
    wrong = []
    for what, call in calls.items():
        try:
            call()
            wrong.append(f"{what}: no ValueError")
        except ValueError as e:
            if str(e) != "embedded null character":
                wrong.append(f"{what}: {e}")
    assert not wrong, "; ".join(wrong)


@test
def empty_strategies_is_parosim_error():
    """run("") raises ParosimError with the C API's message, the CLI's for --strategies ""
    (issue #42: ctypes.ArgumentError)."""
    expected = subprocess.run([sys.argv[1], "run", scenario, "--strategies", ""],
                              capture_output=True, text=True).stderr.strip()
    assert expected.startswith("parosim run: --strategies names no strategy"), expected
    s = parosim.Scenario(scenario)
    for call in (lambda: s.run(""), lambda: s.run_text(""), lambda: s.run_rows("")):
        try:
            call()
        except parosim.ParosimError as e:
            assert "parosim run: " + str(e) == expected, str(e)
            continue
        raise AssertionError("no error")


@test
def label_only_names_the_text():
    """from_yaml resolves model: and topology: against base_dir whatever the label says
    (issue #42: "runs/today" looked in base_dir/<runs); the label names it in messages."""
    text = open(scenario).read()
    expected = parosim.Scenario(scenario).run("NII")
    for label in ("runs/today", "runs/../today", "..", "/etc/passwd"):
        s = parosim.Scenario.from_yaml(text, base_dir="scenarios", label=label)
        assert s.run("NII") == expected, label
    bad = text.replace("training:", "training:\n  accumulaton: 3", 1)
    try:
        parosim.Scenario.from_yaml(bad, base_dir="scenarios", label="runs/../today")
    except parosim.ParosimError as e:
        assert str(e).startswith("<runs/../today>:"), str(e)
        assert "unknown key 'accumulaton'" in str(e), str(e)
        return
    raise AssertionError("no error")


@test
def frame_when_pandas():
    try:
        import pandas  # noqa: F401
    except ImportError:
        return "SKIP pandas not installed"
    frame = parosim.Scenario(scenario).run_frame(pick)
    assert list(frame["strategy"]) == [r["strategy"] for r in parosim.Scenario(scenario).run_rows(pick)]


failed = 0
for i, fn in enumerate(tests, 1):
    try:
        skip = fn()
        print(f"ok {i} - {fn.__name__}" + (f" # {skip}" if skip else ""))
    except Exception as e:  # a failing check is reported, the others still run
        failed += 1
        print(f"not ok {i} - {fn.__name__}: {type(e).__name__}: {e}")
print(f"1..{len(tests)}")
sys.exit(1 if failed else 0)
