#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `meson install` into a temporary folder, then the installed tool used as a user would:
# from another directory, a shipped scenario by name, a plot with the installed gnuplot
# scripts, the manual page and the bash completion; then the whole tree moved elsewhere
# and run again (data paths are relative to the binary). TAP.
# usage: tests/install.sh BUILD_DIR
set -u
build=$(cd "$1" && pwd)
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
n=0
fails=0
check() { # description, then a command that must succeed
    local what=$1
    shift
    n=$((n + 1))
    if "$@" >"$dest/out" 2>&1; then
        echo "ok $n - $what"
    else
        echo "not ok $n - $what"
        sed 's/^/# /' "$dest/out" | head -20
        fails=$((fails + 1))
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
moved="$dest/moved"
mv "$tree" "$moved"
check "a moved installation still finds its data" \
    bash -c "'$moved/bin/parosim' run $scenario --strategies zero-3 | grep -qF '($moved/bin/../share/parosim/scenarios/$scenario.yaml)'"
echo "1..$n"
[ "$fails" = 0 ]
