#!/usr/bin/env bash
# Runs every fuzz target (or the ones named) for SECONDS each, one after the other, and prints
# a table of executions and findings. See fuzz/README.md.
#
#   fuzz/run-all.sh SECONDS [TARGET...]
#
# Environment:
#   SANITIZER  none (default) or address
#   MAX_LEN    libFuzzer -max_len (default 16384)
#   TIMEOUT    libFuzzer -timeout in seconds: an input that runs longer is a finding (default 10)
#   RSS_MB     libFuzzer -rss_limit_mb (default 2048)
#   MODE       fork (default) or jobs
#
# MODE=fork runs each target in libFuzzer's fork mode with one worker (-fork=1): one core at a
# time, and a crash, timeout or out-of-memory input is saved under fuzz/artifacts/<target>/ and
# fuzzing goes on until the time is up, so a known defect found in the first second does not
# end the run. MODE=jobs runs it with -jobs=1 -workers=1 instead: one core too, but libFuzzer
# stops at the first finding.
# The corpus grows in fuzz/corpus/<target>/ (seeded from fuzz/seeds/<target>/), and the full
# libFuzzer output is in fuzz/logs/<target>.log.
set -uo pipefail

if [[ $# -lt 1 || ! $1 =~ ^[0-9]+$ ]]; then
    echo "usage: $0 SECONDS [TARGET...]" >&2
    exit 2
fi
seconds=$1
shift

cd "$(dirname "$0")"
export RUSTC_BOOTSTRAP=1
sanitizer=${SANITIZER:-none}
max_len=${MAX_LEN:-16384}
timeout=${TIMEOUT:-10}
rss_mb=${RSS_MB:-2048}
mode=${MODE:-fork}
case $mode in
    fork) mode_flags=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1) ;;
    jobs) mode_flags=(-jobs=1 -workers=1) ;;
    *) echo "MODE must be fork or jobs" >&2; exit 2 ;;
esac

if [[ $# -gt 0 ]]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo fuzz list)
fi

echo "building ${#targets[@]} targets (sanitizer: $sanitizer)" >&2
cargo fuzz build --sanitizer "$sanitizer" || exit 1

mkdir -p logs
rows=()
for target in "${targets[@]}"; do
    mkdir -p "corpus/$target" "artifacts/$target"
    before=$(find "artifacts/$target" -type f | wc -l)
    log="logs/$target.log"
    echo "fuzzing $target for ${seconds}s" >&2
    # -jobs writes the worker's output to fuzz-0.log in the working directory.
    rm -f fuzz-0.log
    cargo fuzz run --sanitizer "$sanitizer" "$target" "corpus/$target" "seeds/$target" -- \
        "${mode_flags[@]}" -max_total_time="$seconds" -max_len="$max_len" -timeout="$timeout" \
        -rss_limit_mb="$rss_mb" -print_final_stats=1 >"$log" 2>&1
    status=$?
    if [[ -f fuzz-0.log ]]; then
        cat fuzz-0.log >>"$log"
        rm -f fuzz-0.log
    fi
    # The fork-mode status lines: "#<runs>: cov: .. exec/s: .. oom/timeout/crash: a/b/c time: .."
    last=$(grep -E '^#[0-9]+: cov:' "$log" | tail -n 1)
    execs=$(sed -E 's/^#([0-9]+):.*/\1/' <<<"$last")
    ooms=$(sed -nE 's/.*oom\/timeout\/crash: ([0-9]+)\/([0-9]+)\/([0-9]+).*/\1/p' <<<"$last")
    timeouts=$(sed -nE 's/.*oom\/timeout\/crash: ([0-9]+)\/([0-9]+)\/([0-9]+).*/\2/p' <<<"$last")
    crashes=$(sed -nE 's/.*oom\/timeout\/crash: ([0-9]+)\/([0-9]+)\/([0-9]+).*/\3/p' <<<"$last")
    # Without fork-mode status lines (MODE=jobs), the final stats of the one run.
    if [[ -z $execs ]]; then
        execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$log" | tail -n 1)
        if grep -qE 'ERROR: libFuzzer: (deadly signal|timeout|out-of-memory)' "$log"; then
            case $(grep -oE 'ERROR: libFuzzer: (deadly signal|timeout|out-of-memory)' "$log" | tail -n 1) in
                *timeout) timeouts=1 ;;
                *memory) ooms=1 ;;
                *) crashes=1 ;;
            esac
        fi
    fi
    after=$(find "artifacts/$target" -type f | wc -l)
    rows+=("$target|${execs:-?}|${crashes:-0}|${timeouts:-0}|${ooms:-0}|$((after - before))|$status")
done

printf '\n%-18s %12s %8s %9s %5s %10s %5s\n' target executions crashes timeouts ooms new-files exit
for row in "${rows[@]}"; do
    IFS='|' read -r target execs crashes timeouts ooms files status <<<"$row"
    printf '%-18s %12s %8s %9s %5s %10s %5s\n' "$target" "$execs" "$crashes" "$timeouts" "$ooms" "$files" "$status"
done
echo "findings: crash, timeout and oom inputs are in fuzz/artifacts/<target>/; logs in fuzz/logs/" >&2
