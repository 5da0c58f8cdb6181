#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, in build-fuzz/) if needed and runs each for SECONDS
# (default 60), starting from the checked-in seeds. Fails if any target finds a crash, a leak or
# undefined behavior; the input that triggered it is left in build-fuzz/fuzz-findings/<target>/.
#   tests/fuzz/run.sh [SECONDS]          SMD_FUZZ_JOBS=N runs N targets at a time (default 1)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
build=${SMD_FUZZ_BUILD_DIR:-build-fuzz}
jobs=${SMD_FUZZ_JOBS:-1}
targets=(record_event index_json collections_json hook_config)

if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DSMD_BUILD_FUZZ=ON \
    -DSMD_BUILD_TOOLS=OFF -DSMD_BUILD_BENCH=OFF >/dev/null
fi
cmake --build "$build" --target smd_fuzzers

run_one() {  # run_one TARGET: fuzz it for $seconds; exit status non-zero on a finding
  local t=$1 work="$build/fuzz-corpus/$t" findings="$build/fuzz-findings/$t"
  mkdir -p "$work" "$findings"
  local dict=()
  case $t in *json|hook_config) dict=(-dict=tests/fuzz/json.dict) ;; esac
  # New inputs go to the work folder; the checked-in seeds are only read.
  "$build/tests/fuzz/fuzz_$t" "$work" "tests/fuzz/corpus/$t" "${dict[@]}" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
    -print_final_stats=1 -artifact_prefix="$findings/" >"$build/fuzz-$t.log" 2>&1
}

failed=0
pids=()
names=()
for t in "${targets[@]}"; do
  run_one "$t" &
  pids+=($!)
  names+=("$t")
  if [ "${#pids[@]}" -ge "$jobs" ]; then
    for i in "${!pids[@]}"; do
      if wait "${pids[$i]}"; then r=ok; else r=FAILED; failed=1; fi
      echo "fuzz_${names[$i]}: $r ($(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$build/fuzz-${names[$i]}.log" | grep -Eo '[0-9]+$' || echo '?') runs in ${seconds}s; log $build/fuzz-${names[$i]}.log)"
    done
    pids=()
    names=()
  fi
done
for i in "${!pids[@]}"; do
  if wait "${pids[$i]}"; then r=ok; else r=FAILED; failed=1; fi
  echo "fuzz_${names[$i]}: $r ($(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$build/fuzz-${names[$i]}.log" | grep -Eo '[0-9]+$' || echo '?') runs in ${seconds}s; log $build/fuzz-${names[$i]}.log)"
done
if [ "$failed" -ne 0 ]; then
  echo "fuzzing found problems: see the logs above and the inputs in $build/fuzz-findings/" >&2
  exit 1
fi
