#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The bash completion (completion/parosim.bash) completes what parosim accepts: each case
# simulates a command line and checks the candidates offered. TAP.
# usage: tests/completion.sh PAROSIM ROOT
set -u
parosim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$2
# shellcheck source=/dev/null
source "$root/completion/parosim.bash"
# the completion calls the program by the name typed: put that binary first on PATH
bin=$(mktemp -d)
ln -s "$parosim" "$bin/parosim"
PATH="$bin:$PATH"
cd "$root" || exit 1
# shellcheck source=tests/tap.sh
. "$root/tests/tap.sh"
offers() { # "words of the line" expected-candidate...: the last word is being completed
    local line=$1
    shift
    read -r -a COMP_WORDS <<<"$line"
    [[ "$line" == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    _parosim
    local want
    for want in "$@"; do
        if ! printf '%s\n' "${COMPREPLY[@]}" | grep -qx -- "$want"; then
            not_ok "'$line' offers $want (got: ${COMPREPLY[*]})"
            return
        fi
    done
    ok "'$line' offers $*"
}
offers "parosim ru" run
offers "parosim va" validate
offers "parosim run scenarios/llama-7b_a100x8-100g_n32.yaml --no-ex" --no-extrapolate
offers "parosim validate --la" --layers
offers "parosim run x.yaml --strategies zero-2,II" zero-2,IIG zero-2,III
offers "parosim plot st" strategies
offers "parosim collective --algo ho" ho-ring
offers "parosim run scenarios/llama-7b_a100x8-100g" scenarios/llama-7b_a100x8-100g_n32.yaml
offers "parosim collective --topology topologies/dgx-h1" topologies/dgx-h100x8.yaml
rm -rf "$bin"
echo "1..$n"
exit "$fail"
