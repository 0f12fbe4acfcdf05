#!/bin/sh
# SPDX-License-Identifier: MIT
# Regenerates the libFuzzer dictionaries fuzz/dict/*.dict from the sources: the YAML keys of
# the schema (the ParoField tables and the HuggingFace keys), the enum choices, the unit
# suffixes, and the syntax of each input kind. Run from the repository root.
set -eu
mkdir -p fuzz/dict
q() { sed 's/\\/\\\\/g; s/"/\\"/g; s/.*/"&"/'; }
keys() { grep -hoE '\{"[a-z0-9_]+", PARO_FIELD' src/*/*.c | sed -E 's/\{"([a-z0-9_]+)".*/\1/'
         grep -hoE '(hf_[a-z]+|lookup)\(root, "[a-z_]+"' src/yaml/*.c | sed -E 's/.*"([a-z_]+)"/\1/'
         sed -n '/^static const HfFamily hf_families/,/^};/p' src/yaml/load-model.c |
           grep -oE '"[a-z_]+"' | tr -d '"'; }
choices() { cat src/*/*.c | tr '\n' ' ' | grep -oE 'names\[\] = \{[^}]*\}' | grep -oE '"[a-z0-9-]+"' | tr -d '"'
            grep -hoE '"(gated|plain|rmsnorm|layernorm|nvswitch|nvlink|pcie|model|topology|scenario|calibration)"' src/yaml/*.c src/scenario/*.c | tr -d '"'; }
units() { sed -n '/^static const ParoUnit/,/^};/p' src/core/units.c | grep -oE '\{"[^"]+"' | tr -d '{"'; }
{ keys | sort -u | sed 's/$/: /'; keys | sort -u; choices | sort -u; units | sort -u;
  printf '%s\n' 'kind: ' 'schema: 1' '{' '}' '[' ']' ': ' '- ' '&a ' '*a' '<<: ' '"' "'" '#' \
    '---' '...' '!!str' '!!map' 'true' 'false' 'null' '~' '1e18' '1e300' '-1' '0' '1/16' \
    '.inf' 'nan' '0x10' '4294967296' '9007199254740992' '16777217' '4097' '../models/llama-7b.yaml' '../topologies/a100x8-100g.yaml' \
    '../validation/fits/h100-2026-11-23.yaml'; } | awk '!seen[$0]++' | q > fuzz/dict/yaml.dict
{ keys | sort -u; choices | sort -u; units | sort -u;
  printf '%s\n' '=' '.' 'model=' 'topology=' 'calibration=' 'model.architecture.' 'topology.node.' \
    'training.' 'training.trainable.' 'training.trainable.lora.' 'collectives.' 'parallelism.' \
    'calibration.compute.' 'models/llama-65b.yaml' '1e18' '1e300' '4294967296' '9007199254740992' '-1' '1/16'; } |
  awk '!seen[$0]++' | q > fuzz/dict/override.dict
{ units | sort -u; printf '%s\n' ' ' '/' 'e' 'e308' 'e-308' '1e400' '-' '+' '.' 'inf' 'nan' \
    '0x' '1/0' '0/0'; } | awk '!seen[$0]++' | q > fuzz/dict/units.dict
{ units | sort -u; printf '%s\n' '=' ',' '..' '*' '+' '*2' '+0.1' '1e300' '1e18' '-1' '0' \
    '1/16' 'topology.nodes=' 'training.accumulation=' 'training.efficiency=' 'inf' 'nan'; } |
  awk '!seen[$0]++' | q > fuzz/dict/sweep_axis.dict
cat > fuzz/dict/table.dict <<'DICT'
","
"\""
"\"\""
"\x09"
"#"
"\x0a"
"\x0d\x0a"
"time"
"strategy"
"task"
"memory"
"1e300"
"nan"
DICT
