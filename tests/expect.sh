# SPDX-License-Identifier: MIT
# Sourced after tap.sh by the hostile-input scripts (hostile.sh, hostile-validate.sh), which
# set $parosim and $work: expect DESCRIPTION EXIT MESSAGE ARGS... runs parosim ARGS and
# checks its exit code and that MESSAGE (grep -F) is in its output, as one TAP line.
# Memory: 2 GB, by ulimit -v where it works; ASan reserves terabytes of address space, so
# there its hard RSS limit stands in. Time: 120 s guards against a hang (a guard, not a
# speed: parosim refuses work above about 10 s itself).
limit=ulimit
if grep -qa __asan_init "$parosim"; then
    limit=asan
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=2048"
fi

expect() {
    what=$1
    want=$2
    message=$3
    shift 3
    (
        [ $limit = ulimit ] && ulimit -v 2097152
        exec timeout 120 "$parosim" "$@"
    ) >"$work/out" 2>"$work/err" </dev/null
    got=$?
    if [ "$got" = "$want" ] && grep -qF -- "$message" "$work/err" "$work/out"; then
        ok "$what: exit $want, '$message'"
    else
        not_ok "$what: exit $got (want $want), stderr: $(head -c 400 "$work/err" | tr "\n" " ")"
    fi
}
