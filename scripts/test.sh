#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test:
#   1. the C/C++ tests (header, C API, impl unit tests, ABI) and the interop tests against the
#      real smdebug, on a normal build;
#   2. the C/C++ tests again under AddressSanitizer + UndefinedBehaviorSanitizer;
#   3. the C API and C++ unit tests (the hook's writer threads, concurrent reads) under
#      ThreadSanitizer;
#   4. every libFuzzer target for SMD_FUZZ_SECONDS (default 60) seconds.
# SMD_TEST_QUICK=1 skips the sanitizer builds and the fuzzing.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh

JOBS=${SMD_JOBS:-$(nproc)}
passed=0
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

count_ctest() {  # "100% tests passed, 0 tests failed out of 42"
  local line total bad
  line=$( (grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$log" || true) | tail -1)
  if [ -z "$line" ]; then failed=$((failed + 1)); echo "ctest printed no summary"; return; fi
  total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line")
  bad=$(sed -E 's/.* ([0-9]+) tests failed.*/\1/' <<<"$line")
  passed=$((passed + total - bad)); failed=$((failed + bad))
}

build() {  # build DIR [cmake args...]
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja -DSMD_BUILD_BENCH=ON "$@" >/dev/null
  cmake --build "$dir" -j "$JOBS"
}

run_ctest() {  # run_ctest DIR [ctest args...]
  local dir=$1; shift
  set +e
  ctest --test-dir "$dir" --output-on-failure -j "$JOBS" "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  set -e
  count_ctest
  return 0
}

echo "== build (RelWithDebInfo)"
build build -DCMAKE_BUILD_TYPE=RelWithDebInfo
echo "== C/C++ tests"
run_ctest build -LE interop

echo "== interop tests against the real smdebug (and a local S3 server for the s3:// ones)"
set +e
s3state=$(mktemp -d "${TMPDIR:-/tmp}/smd-s3-interop.XXXXXX")
s3env=
if scripts/s3-server.sh start "$s3state" >/dev/null; then s3env=$s3state/env; fi
SMD_S3_ENV_FILE=$s3env SMD_BUILD_DIR=$PWD/build .venv/bin/python -m pytest tests/interop -q -p no:cacheprovider 2>&1 | tee "$log"
scripts/s3-server.sh stop "$s3state" >/dev/null 2>&1
rm -rf "$s3state"
set -e
p=$( (grep -Eo '[0-9]+ passed' "$log" || true) | tail -1 | grep -Eo '[0-9]+' || echo 0)
f=$( (grep -Eo '[0-9]+ (failed|error|errors)' "$log" || true) | awk '{s+=$1} END {print s+0}')
passed=$((passed + p)); failed=$((failed + f))
if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then failed=$((failed + 1)); echo "pytest ran no test"; fi

if [ "${SMD_TEST_QUICK:-0}" != "1" ]; then
  echo "== C/C++ tests under AddressSanitizer + UndefinedBehaviorSanitizer"
  build build-asan -DCMAKE_BUILD_TYPE=Debug -DSMD_SANITIZE=address,undefined -DSMD_BUILD_BENCH=OFF
  ASAN_OPTIONS=detect_leaks=1 run_ctest build-asan -LE 'interop|abi'
  echo "== C API tests (hook writer threads) under ThreadSanitizer"
  build build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSMD_SANITIZE=thread -DSMD_BUILD_BENCH=OFF
  TSAN_OPTIONS=halt_on_error=1 run_ctest build-tsan -L 'capi|hook|impl'
  echo "== fuzzing: every libFuzzer target for ${SMD_FUZZ_SECONDS:-60} s"
  set +e
  tests/fuzz/run.sh "${SMD_FUZZ_SECONDS:-60}" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  set -e
  p=$(grep -c ': ok (' "$log" || true)
  f=$(grep -c ': FAILED (' "$log" || true)
  passed=$((passed + p)); failed=$((failed + f))
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then failed=$((failed + 1)); echo "fuzzing failed to run"; fi
fi

echo
echo "all suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
