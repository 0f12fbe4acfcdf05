#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes BUILD/python/parosim for the Python binding from the build tree (src/meson.build):
a copy of python/parosim/__init__.py and _buildtree.py naming this build's library, then
touches the stamp meson tracks (a target's outputs must lie in its own folder).

  python-buildtree.py INIT LIBRARY DEST STAMP
"""
import pathlib
import shutil
import sys

init, library, dest, stamp = sys.argv[1:]
pathlib.Path(dest).mkdir(parents=True, exist_ok=True)
shutil.copyfile(init, pathlib.Path(dest, "__init__.py"))
pathlib.Path(dest, "_buildtree.py").write_text(
    "# the library of this build tree, written by meson (src/meson.build)\n"
    f"LIBRARY = {library!r}\n")
pathlib.Path(stamp).touch()
