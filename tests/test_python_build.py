#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Python binding from a build tree, nothing installed (issue #42). TAP.

usage: test_python_build.py BUILD PAROSIM ROOT
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

if os.environ.get("PAROSIM_SANITIZED"):
    # an ASan-instrumented libparosim cannot load into an uninstrumented python3
    print("1..0 # SKIP the library is built with sanitizers")
    sys.exit(0)
build, parosim, root = (os.path.abspath(a) for a in sys.argv[1:4])
work = tempfile.mkdtemp()  # elsewhere than the trees: nothing found by the working folder
scenario = "llama-7b_a100x8-100g_n32"
line = ("import parosim; "
        f"print(parosim.Scenario('{scenario}').run()[0]['name'])")
tests = []


def test(fn):
    tests.append(fn)
    return fn


def python(code, pythonpath, library=None):
    """python3 -c code as a user types it: PYTHONPATH set, $PAROSIM_LIBRARY only if given,
    and not meson test's LD_LIBRARY_PATH (the build's library on the system's path)."""
    unset = ("PAROSIM_LIBRARY", "PYTHONPATH", "LD_LIBRARY_PATH")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env["PYTHONPATH"] = pythonpath
    if library is not None:
        env["PAROSIM_LIBRARY"] = library
    return subprocess.run([sys.executable, "-c", code], cwd=work, env=env,
                          capture_output=True, text=True)


@test
def build_tree_line():
    """PYTHONPATH=BUILD/python python3 -c "...run()[0]['name']": the CLI's fastest strategy."""
    got = python(line, os.path.join(build, "python"))
    assert got.returncode == 0, got.stderr
    cli = subprocess.run([parosim, "run", scenario, "--format", "json"], cwd=work, check=True,
                         capture_output=True, text=True).stdout
    assert got.stdout.strip() == json.loads(cli)["strategies"][0]["name"], got.stdout


@test
def library_variable_wins():
    """$PAROSIM_LIBRARY still points the build tree's copy at a given library."""
    missing = os.path.join(work, "no-such", "libparosim.so")
    got = python("import parosim", os.path.join(build, "python"), library=missing)
    assert "ImportError" in got.stderr and missing in got.stderr, got.stderr


@test
def not_found_names_both_ways():
    """The package alone, no library anywhere: an ImportError naming both ways to one."""
    alone = os.path.join(work, "alone")
    system = python("import ctypes.util; print(ctypes.util.find_library('parosim'))", alone)
    if system.stdout.strip() != "None":
        return "SKIP a libparosim is installed on the system's library path"
    os.makedirs(os.path.join(alone, "parosim"))
    shutil.copy(os.path.join(root, "python", "parosim", "__init__.py"),
                os.path.join(alone, "parosim"))
    got = python("import parosim", alone)
    last = got.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: libparosim not found"), got.stderr
    assert "PAROSIM_LIBRARY" in last and "PYTHONPATH=BUILD/python" in last, last


failed = 0
try:
    for i, fn in enumerate(tests, 1):
        try:
            skip = fn()
            print(f"ok {i} - {fn.__name__}" + (f" # {skip}" if skip else ""))
        except Exception as e:  # a failing check is reported, the others still run
            failed += 1
            print(f"not ok {i} - {fn.__name__}: {type(e).__name__}: {e}")
finally:
    shutil.rmtree(work, ignore_errors=True)
print(f"1..{len(tests)}")
sys.exit(1 if failed else 0)
