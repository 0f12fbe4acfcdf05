#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `meson install` into a temporary folder, then the installed tool used as a user would:
# from another directory, a shipped scenario by name, a plot with the installed gnuplot
# scripts, the manual page and the bash completion; then the whole tree moved elsewhere
# and run again (data paths are relative to the binary). TAP.
# usage: tests/install.sh BUILD_DIR
set -u
build=$(cd "$1" && pwd)
source=$(cd "$(dirname "$0")/.." && pwd)
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
check() { # description, then a command that must succeed
    local what=$1
    shift
    if "$@" >"$dest/out" 2>&1; then
        ok "$what"
    else
        not_ok "$what"
        sed 's/^/# /' "$dest/out" | head -20
    fi
}
check "meson install --destdir" meson install -C "$build" --no-rebuild --destdir "$dest/root" --quiet
prefix=$(meson introspect "$build" --buildoptions |
    python3 -c "import json,sys; print([o['value'] for o in json.load(sys.stdin) if o['name'] == 'prefix'][0])")
tree="$dest/root$prefix"
exe="$tree/bin/parosim"
scenario=llama-7b_a100x8-100g_n32
work=$(mktemp -d -p "$dest")
cd "$work" || exit 1
# the scenario line names the file found: the installed one, not the source tree's
check "the installed binary runs a shipped scenario by name from another directory" \
    bash -c "'$exe' run $scenario --strategies zero-3,IIG | grep -qF '($tree/bin/../share/parosim/scenarios/$scenario.yaml)' &&
        '$exe' run $scenario --strategies zero-3,IIG --format csv >run.csv && grep -q IIG run.csv"
if command -v gnuplot >/dev/null; then
    check "plot with the installed gnuplot scripts" \
        bash -c "'$exe' plot strategies run.csv -o run.png && [ -s run.png ]"
fi
if [ -n "$(find "$tree" -name parosim.1)" ]; then
    check "the manual page names every command" \
        bash -c "man=\$(find '$tree' -name parosim.1); for c in run sweep strategies plan plot collective pipeline calibrate validate; do grep -q \"^\\.SS parosim \$c\$\" \"\$man\" || { echo missing \$c; exit 1; }; done"
fi
check "the bash completion is installed and completes a command" \
    bash -c "source '$tree/share/bash-completion/completions/parosim' && PATH='$tree/bin':\$PATH && COMP_WORDS=(parosim pl) COMP_CWORD=1 && _parosim && [ \"\${COMPREPLY[*]}\" = 'plan plot' ]"
# the library: a program that includes only parosim.h, built through pkg-config, and the
# Python binding; not with a sanitized library, which plain cc and python3 cannot load
pydir=.
if [ -z "${PAROSIM_SANITIZED:-}" ]; then
    pcdir=$(dirname "$(find "$tree" -name parosim.pc | head -1)")
    check "a C program builds against the installed library (pkg-config) and runs" \
        bash -c "flags=\$(PKG_CONFIG_PATH='$pcdir' pkg-config --define-variable=prefix='$tree' --cflags --libs parosim) &&
            cc -o demo '$source/tests/api_demo.c' \$flags -Wl,-rpath,\$(PKG_CONFIG_PATH='$pcdir' pkg-config --define-variable=prefix='$tree' --variable=libdir parosim) &&
            ./demo $scenario zero-3,IIG rows | grep -q '^1,IIG,true,'"
    # the Python binding, imported from the prefix, finding the library beside it
    pydir=$(dirname "$(dirname "$(find "$tree" -path '*parosim/__init__.py' | head -1)")")
    if [ "$pydir" != . ]; then
        check "the Python binding imports from the prefix and runs a scenario by name" \
            bash -c "PYTHONPATH='$pydir' python3 -c 'import parosim; r = parosim.Scenario(\"$scenario\").run(\"zero-3,IIG\"); assert r[0][\"name\"] == \"IIG\", r'"
    fi
fi
moved="$dest/moved"
mv "$tree" "$moved"
if [ "$pydir" != . ]; then
    check "... and so does the Python binding, library included" \
        bash -c "PYTHONPATH='$moved${pydir#"$tree"}' python3 -c 'import parosim; assert parosim.Scenario(\"$scenario\").run(\"NII\")'"
fi
check "a moved installation still finds its data" \
    bash -c "'$moved/bin/parosim' run $scenario --strategies zero-3 | grep -qF '($moved/bin/../share/parosim/scenarios/$scenario.yaml)'"
echo "1..$n"
exit "$fail"
