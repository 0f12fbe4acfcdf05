# SPDX-License-Identifier: MIT
"""parosim from Python: ctypes over libparosim's C API (parosim.h).

    import parosim
    s = parosim.Scenario("llama-7b_a100x8-100g_n32")           # a file or a shipped name
    rows = s.run(strategies="zero-3,IIG,NII")                   # list of dicts, ranked
    s.run_frame()                                               # a pandas DataFrame
    print(s.run_text(format="table"))                           # what `parosim run` prints
    parosim.Scenario("x.yaml", overrides=["topology.nodes=8"])  # as --set takes them

Each row is one strategy of `parosim run --format json`: name, aliases, rank, fits, tight and
the time, throughput and memory objects, flattened in run_frame() as time.step...

The library is found through $PAROSIM_LIBRARY (a path to libparosim.so), else the build
tree's (`meson compile` puts a copy of this package with its library's path in
BUILD/python, so PYTHONPATH=BUILD/python needs no install), else beside this package in an
installed tree (prefix/lib*/.../libparosim.so.0), else on the system's library path.

Threads: a Scenario may be shared by threads. run, run_text, run_rows, run_frame and
strategies only read it, release the GIL while they simulate, and give each thread what one
thread alone would get; loading scenarios is independent too. A scenario is freed when the
last reference to it goes, so no call can outlive it.

Strings reach C as NUL-terminated bytes: one with a NUL inside (a path, an override, YAML
text, strategies, a format) raises ValueError("embedded null character"), as open() does,
rather than being cut there.
"""
import ctypes
import ctypes.util
import json
import os
import pathlib

__all__ = ["Scenario", "ParosimError", "version"]


class ParosimError(RuntimeError):
    """An error parosim reported (for bad input, it starts with file:line:column)."""


class _Row(ctypes.Structure):
    _fields_ = [("row_size", ctypes.c_size_t), ("strategy", ctypes.c_char * 32),
                ("rank", ctypes.c_int), ("fits", ctypes.c_int)] + [
        (name, ctypes.c_double) for name in (
            "step_s", "compute_s", "comm_s", "exposed_comm_s", "guideline_s", "samples_per_s",
            "tokens_per_s", "tflops_per_gpu", "mfu", "peak_bytes")] + [("tight", ctypes.c_int)] + [
        (name, ctypes.c_double) for name in ("allocated_bytes", "reserved_bytes")]


_HOW = ("set PAROSIM_LIBRARY to the path of libparosim.so, or use a build tree's copy of "
        "this package (PYTHONPATH=BUILD/python, made by meson compile), or install parosim "
        "(meson install)")


def _find_library():
    explicit = os.environ.get("PAROSIM_LIBRARY")
    if explicit:
        return explicit
    try:  # written beside the copy in BUILD/python by meson (src/meson.build)
        from . import _buildtree
        return _buildtree.LIBRARY
    except ImportError:
        pass
    here = pathlib.Path(__file__).resolve().parent
    for ancestor in here.parents:  # prefix/lib/python3/dist-packages/parosim -> prefix
        # lib* only: from a source tree, */*/ matched whichever build folder sorted first
        for pattern in ("lib*/libparosim.so.0", "lib*/*/libparosim.so.0"):
            found = sorted(ancestor.glob(pattern))
            if found:
                return str(found[0])
    return ctypes.util.find_library("parosim")


def _load():
    path = _find_library()
    if path is None:
        raise ImportError("libparosim not found: " + _HOW)
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ImportError(f"libparosim cannot be loaded from {path} ({e}): {_HOW}") from e
    c_str, err = ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)
    strings = ctypes.POINTER(ctypes.c_char_p)
    lib.parosim_version.restype = c_str
    lib.parosim_free.argtypes = [ctypes.c_void_p]
    lib.parosim_scenario_load.restype = ctypes.c_void_p
    lib.parosim_scenario_load.argtypes = [c_str, strings, err]
    lib.parosim_scenario_load_yaml.restype = ctypes.c_void_p
    lib.parosim_scenario_load_yaml.argtypes = [c_str, c_str, c_str, strings, err]
    lib.parosim_scenario_free.argtypes = [ctypes.c_void_p]
    for name in ("parosim_run", "parosim_strategies"):
        getattr(lib, name).restype = ctypes.c_void_p
    lib.parosim_run.argtypes = [ctypes.c_void_p, c_str, c_str, err]
    lib.parosim_strategies.argtypes = [ctypes.c_void_p, c_str, err]
    lib.parosim_run_rows.restype = ctypes.c_int
    lib.parosim_run_rows.argtypes = [ctypes.c_void_p, c_str, ctypes.POINTER(ctypes.POINTER(_Row)),
                                     ctypes.POINTER(ctypes.c_size_t), err]
    return lib


_lib = _load()


def version():
    """The library's version, e.g. '0.2.0'."""
    return _lib.parosim_version().decode()


def _taken(pointer):
    """The C string at pointer, freed."""
    try:
        return ctypes.string_at(pointer).decode()
    finally:
        _lib.parosim_free(pointer)


def _check(result, error):
    if not result:
        message = _taken(error.value) if error.value else "parosim failed"
        raise ParosimError(message)
    return result


def _c(text):
    """text as a C string (None: NULL). ctypes would pass one with a NUL inside, and C would
    read it only up to there (another file, a shorter override): refused as open() does."""
    if text is None:
        return None
    data = text.encode()
    if b"\0" in data:
        raise ValueError("embedded null character")
    return data


def _strings(items):
    if not items:
        return None
    array = (ctypes.c_char_p * (len(items) + 1))(*[_c(s) for s in items], None)
    return ctypes.cast(array, ctypes.POINTER(ctypes.c_char_p))


class Scenario:
    """A loaded scenario: a file, a shipped scenario's name, or YAML text (from_yaml)."""

    def __init__(self, path, overrides=None, _handle=None):
        error = ctypes.c_void_p()
        self._handle = _handle or _check(
            _lib.parosim_scenario_load(_c(str(path)), _strings(overrides),
                                       ctypes.byref(error)), error)

    @classmethod
    def from_yaml(cls, text, base_dir=None, label="yaml", overrides=None):
        """Loads YAML text; its model: and topology: references are relative to base_dir
        (default: the current directory), whatever the label says: the label only names
        the text in messages, as <label>."""
        error = ctypes.c_void_p()
        handle = _check(_lib.parosim_scenario_load_yaml(
            _c(text), _c(str(base_dir or ".")), _c(label), _strings(overrides),
            ctypes.byref(error)), error)
        return cls(None, _handle=handle)

    def __del__(self):
        handle, self._handle = getattr(self, "_handle", None), None
        if handle and _lib:
            _lib.parosim_scenario_free(handle)

    def run_text(self, strategies=None, format="table"):
        """What `parosim run --format FORMAT` prints for these strategies (default: all)."""
        error = ctypes.c_void_p()
        # "" is passed on, not taken for None (every strategy): C refuses it as the CLI does
        text = _check(_lib.parosim_run(self._handle, _c(strategies), _c(format),
                                       ctypes.byref(error)), error)
        return _taken(text)

    def run(self, strategies=None):
        """The simulated step of each strategy, ranked: the JSON output's rows as dicts."""
        return json.loads(self.run_text(strategies, "json"))["strategies"]

    def run_rows(self, strategies=None):
        """The same as flat dicts of the C API's ParosimStepRow (seconds, bytes)."""
        error = ctypes.c_void_p()
        rows = ctypes.POINTER(_Row)()
        n = ctypes.c_size_t()
        if _lib.parosim_run_rows(self._handle, _c(strategies),
                                 ctypes.byref(rows), ctypes.byref(n), ctypes.byref(error)) != 0:
            _check(None, error)
        try:
            out = []
            for i in range(n.value):
                row = {name: getattr(rows[i], name) for name, _ in _Row._fields_[1:]}
                row["strategy"] = row["strategy"].decode()
                row["fits"] = bool(row["fits"])
                row["tight"] = bool(row["tight"])
                out.append(row)
            return out
        finally:
            _lib.parosim_free(ctypes.cast(rows, ctypes.c_void_p))

    def run_frame(self, strategies=None):
        """run_rows as a pandas DataFrame (needs pandas: Debian's python3-pandas)."""
        import pandas  # optional dependency: only this method needs it
        return pandas.DataFrame(self.run_rows(strategies))

    def strategies(self):
        """The closed form of every strategy (`parosim strategies --format json`)."""
        error = ctypes.c_void_p()
        text = _check(_lib.parosim_strategies(self._handle, b"json", ctypes.byref(error)), error)
        return json.loads(_taken(text))["strategies"]
