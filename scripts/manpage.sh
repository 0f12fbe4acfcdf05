#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Writes parosim.1 from the program's own help texts with help2man: the top-level --help
# (usage, description, commands) and, as a COMMANDS section, every command's --help, so
# the manual says what the program says.
# usage: scripts/manpage.sh PAROSIM OUTPUT.1
set -euo pipefail
export LC_ALL=C # ASCII help texts (GLib writes "..." rather than an ellipsis)
parosim=$1
output=$2
include=$(mktemp)
trap 'rm -f "$include"' EXIT
{
    echo "[COMMANDS]"
    "$parosim" --help | awk '/^Commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on = 0}' |
        while read -r command; do
            echo ".SS parosim $command"
            echo ".nf"
            # help2man's include is roff: escape backslashes and leading dots or quotes
            "$parosim" "$command" --help | sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"
            echo ".fi"
        done
    cat <<'ROFF'
[FILES]
Models, topologies and scenarios ship under share/parosim beside the installed
binary; \fBparosim run NAME\fR finds scenarios/NAME.yaml there from any directory.
\fBPAROSIM_DATA_DIR\fR names another data folder, \fBPAROSIM_PLOTS_DIR\fR another
folder of gnuplot scripts.
ROFF
    echo "[SEE ALSO]"
    echo "README.md and docs/ in the source tree; CHANGELOG.md for what changed."
} >"$include"
help2man --no-info --no-discard-stderr --include="$include" \
    --name="simulate the memory and communication cost of distributed LLM training" \
    --output="$output" "$parosim"
