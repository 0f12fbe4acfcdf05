#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One-step set-up for a fresh Debian machine: installs what is missing (apt-get, as root
# or through sudo), configures and builds with meson, then either runs the main job on
# the default scenario and renders the plot gallery into BUILD/gallery/ (`run`) or the whole
# test suite (`test`). Neither touches a tracked file.
# Environment: PARO_BUILD (build folder, default build), PARO_MESON_ARGS (extra options
# for `meson setup`, e.g. -Db_sanitize=address,undefined).
set -euo pipefail
cd "$(dirname "$0")/.."

what=${1:-run}
case "$what" in
run | test) ;;
*)
    echo "usage: scripts/quickstart.sh run|test" >&2
    exit 2
    ;;
esac

packages=(meson ninja-build pkg-config gcc libglib2.0-dev libyaml-dev libgsl-dev check gnuplot-nox clang-format help2man python3-pandas
    libopenmpi-dev openmpi-bin)
# the test suite also opens the HTML report in a real browser (tests/report.sh)
[ "$what" = test ] && packages+=(chromium)
missing=()
for p in "${packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "quickstart: installing ${missing[*]}" >&2
    sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
fi

build=${PARO_BUILD:-build}
if [ ! -f "$build/build.ninja" ]; then
    # shellcheck disable=SC2086
    meson setup "$build" ${PARO_MESON_ARGS:-} >/dev/null
fi
meson compile -C "$build" >/dev/null

if [ "$what" = run ]; then
    "$build/src/parosim" run scenarios/llama-7b_a100x8-100g_n32.yaml
    # the README's gallery, from the same build, into the build folder: the committed
    # gallery/ changes only when a developer means it to (ninja -C build plots), so both
    # quick-start commands leave `git status` clean
    bash scripts/gallery.sh "$build/src/parosim" "$build/gallery"
else
    meson test -C "$build" --print-errorlogs
fi
