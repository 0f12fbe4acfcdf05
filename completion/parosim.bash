# SPDX-License-Identifier: MIT
# bash completion for parosim: commands, each command's options (read from its own
# --help, so they never drift), strategy names, plot kinds, algorithms and formats, and
# YAML files. Installed as share/bash-completion/completions/parosim; to try it from the
# source tree: source completion/parosim.bash

_parosim_strategies() {
    local names="ddp zero-1 zero-2 zero-3 mics fsdp-full fsdp-hybrid fsdp-hsz fsdp-hybrid-zero2 zero++ hpz"
    local p g o
    for p in N I G; do for g in N I G; do for o in N I G; do
        names="$names $p$g$o"
    done; done; done
    echo "$names"
}

_parosim() {
    local cur prev cmd
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    if [ "$COMP_CWORD" -eq 1 ]; then
        local commands
        commands=$("${COMP_WORDS[0]}" --help 2>/dev/null | awk '/^Commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on = 0}')
        mapfile -t COMPREPLY < <(compgen -W "$commands --help --version" -- "$cur")
        return
    fi
    cmd=${COMP_WORDS[1]}
    case "$prev" in
    --strategies | -s)
        # a comma-separated list: complete the last name
        local head=${cur%,*} last=${cur##*,}
        [ "$head" = "$cur" ] && head="" || head="$head,"
        mapfile -t COMPREPLY < <(compgen -P "$head" -W "$(_parosim_strategies)" -- "$last")
        return
        ;;
    --format)
        mapfile -t COMPREPLY < <(compgen -W "table json csv" -- "$cur")
        return
        ;;
    --algo | -a)
        mapfile -t COMPREPLY < <(compgen -W "auto ring tree nvls nvlstree hierarchical ho-ring" -- "$cur")
        return
        ;;
    --op)
        mapfile -t COMPREPLY < <(compgen -W "allreduce allgather reducescatter broadcast sendrecv alltoall" -- "$cur")
        return
        ;;
    --model)
        mapfile -t COMPREPLY < <(compgen -W "nccl flow" -- "$cur")
        return
        ;;
    --topology | -t | --layers | --predict | --calibration)
        mapfile -t COMPREPLY < <(compgen -f -- "$cur" | grep '\.yaml$'; compgen -d -S / -- "$cur")
        return
        ;;
    -o | --output | --trace | --csv | --record | --data)
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return
        ;;
    esac
    if [[ "$cur" == -* ]]; then
        local options
        options=$("${COMP_WORDS[0]}" "$cmd" --help 2>/dev/null | grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
        mapfile -t COMPREPLY < <(compgen -W "$options" -- "$cur")
        return
    fi
    if [ "$cmd" = plot ] && [ "$COMP_CWORD" -eq 2 ]; then
        local kinds="strategies best-map collective-scaling throughput-scaling plan-scaling memory-timeline gantt validate"
        mapfile -t COMPREPLY < <(compgen -W "$kinds" -- "$cur")
        return
    fi
    # inputs: YAML, JSON and tables, and folders to descend into
    local f
    COMPREPLY=()
    while IFS= read -r f; do
        case "$f" in
        *.yaml | *.json | *.csv | *.tsv | *.txt) COMPREPLY+=("$f") ;;
        esac
    done < <(compgen -f -- "$cur")
    mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -d -S / -- "$cur")
}

complete -o filenames -F _parosim parosim
