#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# README.md's "Your cluster in five minutes" as a new user would follow it: its two YAML
# files written as printed, its commands run as printed in an empty folder (with
# `parosim` this build). Keeps the walk-through true. TAP.
# usage: tests/walkthrough.sh PAROSIM ROOT
set -u
parosim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$root/README.md" "$work" <<'PY' || { echo "not ok 1 - the walk-through is not in README.md"; echo "1..1"; exit 1; }
import re, sys
text = open(sys.argv[1]).read().split("### Your cluster in five minutes", 1)[1].split("\n### ", 1)[0]
files = re.findall(r"```yaml\n# (my-[a-z-]+\.yaml)\n(.*?)```", text, re.S)
commands = re.findall(r"```sh\n(.*?)```", text, re.S)
assert len(files) == 2 and len(commands) == 1, (len(files), len(commands))
for name, body in files:
    open(f"{sys.argv[2]}/{name}", "w").write(body)
open(f"{sys.argv[2]}/commands.sh", "w").write(commands[0])
PY
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
cd "$work" || exit 1
mkdir bin
ln -s "$parosim" bin/parosim
while IFS= read -r line; do
    command=${line%%#*}
    [ -z "${command// /}" ] && continue
    if PATH="$work/bin:$PATH" bash -c "$command" >out.txt 2>&1; then
        ok "$command"
    else
        not_ok "$command"
        sed 's/^/# /' out.txt | head -5
    fi
done <commands.sh
if [ -s my-job.html ] && [ -s nodes.png ]; then ok "the page and the plot exist"; else
    not_ok "my-job.html or nodes.png missing"
fi
echo "1..$n"
exit "$fail"
