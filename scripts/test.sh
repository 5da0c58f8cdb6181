#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test:
#   1. the C/C++ tests (header, C API, impl unit tests, ABI, S3 against a local server), the
#      interop tests against the real smdebug, the crash tests (tests/crash: kill -9, a full file
#      system), and the bindings' suites: Python (after pip install ./bindings/python), Rust
#      (cargo test, the examples, clippy, rustdoc), Go (scripts/test_go.sh) and Java (mvn package
#      with its JUnit tests, the examples, the cross-language test tests/cross), and the framework
#      hooks (tests/frameworks: PyTorch, TensorFlow/Keras, XGBoost, MXNet, each framework set in
#      its own scripts/frameworks/*.sh venv), the Python binding's and the interop suites again
#      under numpy 2 (.venv-np2, scripts/numpy2-venv.sh), and the benchmarks once each at a tiny
#      size (tests/bench: bench_rules, bench_writer, bench_reader, bench_codec, bench_histogram,
#      bench_python, bench_s3, bench_frameworks, bench_bindings), on a normal build; then
#      tests/install/run.sh: smd used from programs outside the clone, from an installed prefix
#      (C, Rust, Go, Java, Python, a portable wheel);
#   2. the C/C++ tests again under AddressSanitizer + UndefinedBehaviorSanitizer;
#   3. the C API, C++ unit and S3 tests (the hook's writer threads, concurrent reads, uploads) under
#      ThreadSanitizer;
#   4. every libFuzzer target for SMD_FUZZ_SECONDS (default 60) seconds.
# SMD_TEST_QUICK=1 skips the sanitizer builds and the fuzzing.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
# No test may reach the EC2 instance metadata address (169.254.169.254) by accident: the S3
# client's credential chain skips it. Tests of that path set AWS_EC2_METADATA_SERVICE_ENDPOINT to
# a local server (tests/impl/storage/s3/credentials_test.cc).
export AWS_EC2_METADATA_DISABLED=true

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

count_pytest() {  # count_pytest WHAT: adds pytest's "N passed, M failed, K errors" in $log
  local p f
  p=$( (grep -Eo '[0-9]+ passed' "$log" || true) | tail -1 | grep -Eo '[0-9]+' || echo 0)
  f=$( (grep -Eo '[0-9]+ (failed|error|errors)' "$log" || true) | awk '{s+=$1} END {print s+0}')
  passed=$((passed + p)); failed=$((failed + f))
  if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then failed=$((failed + 1)); echo "$1: pytest ran no test"; fi
}

run_pytest() {  # run_pytest WHAT COMMAND...: runs a pytest command and counts its results
  local what=$1; shift
  set +e
  "$@" 2>&1 | tee "$log"
  set -e
  count_pytest "$what"
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

echo "== capi/api.json, capi/smd.symbols and bindings/swig/smd_handles.i are current (scripts/gen-api.py)"
if .venv/bin/python scripts/gen-api.py --check; then passed=$((passed + 1)); else failed=$((failed + 1)); fi

echo "== build (RelWithDebInfo)"
build build -DCMAKE_BUILD_TYPE=RelWithDebInfo
echo "== C/C++ tests"
run_ctest build -LE interop

echo "== interop tests against the real smdebug (and a local S3 server for the s3:// ones)"
# One local S3 server for the suites run from here (interop, Rust, Go), stopped at exit; the
# ctest S3 tests start their own (tests/CMakeLists.txt).
s3state=$(mktemp -d "${TMPDIR:-/tmp}/smd-s3.XXXXXX")
trap 'rm -f "$log"; "$PWD/scripts/s3-server.sh" stop "$s3state" >/dev/null 2>&1 || true; rm -rf "$s3state"' EXIT
s3env= s3vars=()
if scripts/s3-server.sh start "$s3state" >/dev/null; then
  s3env=$s3state/env
  s3vars=($(sed -n 's/^export //p' "$s3env"))
fi
run_pytest "interop" env SMD_S3_ENV_FILE="$s3env" SMD_BUILD_DIR="$PWD/build" \
  .venv/bin/python -m pytest tests/interop -q -p no:cacheprovider -n "$JOBS"

echo "== crash tests: kill -9 at random moments and file operations, a full file system"
run_pytest "crash" env SMD_BUILD_DIR="$PWD/build" .venv/bin/python -m pytest tests/crash -q -p no:cacheprovider

echo "== Python binding: pip install ./bindings/python into .venv, then its tests"
# The binding and the wheel carry the libsmd built above (not compiled a second time).
export SMD_PYTHON_LIBSMD_BUILD_DIR="$PWD/build"
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
set +e
CMAKE_ARGS="${launcher[*]}" CMAKE_BUILD_PARALLEL_LEVEL=$JOBS .venv/bin/pip install -q \
  --disable-pip-version-check --no-build-isolation --force-reinstall --no-deps ./bindings/python 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" -ne 0 ]; then
  failed=$((failed + 1)); echo "pip install ./bindings/python failed"
else
  # From the tests' folder, so that `import smd` finds the installed package, not the sources.
  run_pytest "Python binding" bash -c 'cd bindings/python/tests &&
    SMD_BUILD_DIR="$0/build" "$0/.venv/bin/python" -m pytest . -q -p no:cacheprovider -n "$1"' "$PWD" "$JOBS"
fi

# The framework suites' venvs (scripts/frameworks/*.sh) install one smd wheel, built once here.
SMD_WHEEL=$(scripts/python-wheel.sh) || SMD_WHEEL=
export SMD_WHEEL

echo "== TensorFlow/Keras hooks (scripts/frameworks/tf.sh makes .venv-tf with the smd wheel)"
if scripts/frameworks/tf.sh; then
  run_pytest "tensorflow hooks" env SMD_BUILD_DIR="$PWD/build" \
    .venv-tf/bin/python -m pytest tests/frameworks/tensorflow -q -p no:cacheprovider
else
  failed=$((failed + 1)); echo "scripts/frameworks/tf.sh failed"
fi

echo "== XGBoost hook (scripts/frameworks/xgboost.sh makes .venv-xgboost with the smd wheel)"
if scripts/frameworks/xgboost.sh; then
  run_pytest "xgboost hooks" env SMD_BUILD_DIR="$PWD/build" \
    .venv-xgboost/bin/python -m pytest tests/frameworks/xgboost -q -p no:cacheprovider
else
  failed=$((failed + 1)); echo "scripts/frameworks/xgboost.sh failed"
fi

echo "== PyTorch hooks (.venv-torch: torch 2.15.0 + the smd wheel, scripts/frameworks/torch.sh)"
if scripts/frameworks/torch.sh >/dev/null; then
  run_pytest "pytorch hooks" env SMD_BUILD_DIR="$PWD/build" \
    .venv-torch/bin/python -m pytest tests/frameworks/pytorch -q -p no:cacheprovider
else
  failed=$((failed + 1)); echo "failed: scripts/frameworks/torch.sh"
fi

echo "== MXNet hooks (.venv-mxnet: MXNet 1.9.1, numpy 1.23 + the smd wheel, scripts/frameworks/mxnet.sh)"
if scripts/frameworks/mxnet.sh >/dev/null; then
  run_pytest "mxnet hooks" env SMD_BUILD_DIR="$PWD/build" \
    .venv-mxnet/bin/python -m pytest tests/frameworks/mxnet -q -p no:cacheprovider
else
  failed=$((failed + 1)); echo "failed: scripts/frameworks/mxnet.sh"
fi

echo "== Rust binding (bindings/rust): cargo test, clippy, doc"
export PATH="$HOME/.cargo/bin:$PATH"
rust_env=(env SMD_LIB_DIR="$PWD/build/capi" SMD_LINK=dynamic SMD_PYTHON="$PWD/.venv/bin/python" RUSTDOCFLAGS="-D warnings")
set +e
(cd bindings/rust && "${rust_env[@]}" "${s3vars[@]}" SMD_RUST_REQUIRE_S3=1 cargo test --workspace --all-targets --no-fail-fast 2>&1 &&
   "${rust_env[@]}" cargo test --workspace --doc 2>&1) | tee "$log"
rc=${PIPESTATUS[0]}
set -e
p=$( (grep -Eo 'test result: [a-zA-Z]+\. [0-9]+ passed' "$log" || true) | awk '{s+=$4} END {print s+0}')
f=$( (grep -Eo '[0-9]+ failed;' "$log" || true) | awk '{s+=$1} END {print s+0}')
passed=$((passed + p)); failed=$((failed + f))
if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then failed=$((failed + 1)); echo "cargo test failed to build or crashed"; fi
# The examples: train the MLP into saturation from Rust; the analysis finds vanishing gradients.
rust_ex=$(mktemp -d)
if (cd bindings/rust && "${rust_env[@]}" cargo run -q --example train_mlp -- "$rust_ex/run" --lr 1000 --steps 60 &&
    "${rust_env[@]}" cargo run -q --example analyze -- "$rust_ex/run") 2>&1 | tee "$log" &&
   grep -Eq '^VanishingGradient: [0-9]+ steps evaluated, condition met [1-9]' "$log"; then
  passed=$((passed + 1))
else
  failed=$((failed + 1)); echo "failed: the Rust examples (train_mlp, analyze)"
fi
rm -rf "$rust_ex"
for check in "cargo clippy --workspace --all-targets -- -D warnings" "cargo doc --workspace --no-deps"; do
  if (cd bindings/rust && "${rust_env[@]}" $check); then
    passed=$((passed + 1))
  else
    failed=$((failed + 1)); echo "failed: $check"
  fi
done

echo "== Go binding (bindings/go)"
set +e
env "${s3vars[@]}" ./scripts/test_go.sh build 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
p=$(grep -Ec '^--- PASS' "$log" || true)
f=$(grep -Ec '^--- FAIL|^FAIL[[:space:]].*\[(build|setup) failed\]' "$log" || true)
passed=$((passed + p)); failed=$((failed + f))
if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then failed=$((failed + 1)); echo "the Go suite failed to run"; fi

echo "== Java binding (bindings/java): mvn package (JUnit), the examples, the cross-language test"
set +e
(cd bindings/java && mvn -B -ntp -Dsmd.build.dir="$PWD/../../build" package) 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
# Surefire's total: the last "Tests run: N, Failures: F, Errors: E, Skipped: S" without a class.
line=$( (grep -E 'Tests run: [0-9]+, Failures: [0-9]+, Errors: [0-9]+, Skipped: [0-9]+$' "$log" || true) | tail -1)
read -r t f e s < <(sed -E 's/.*Tests run: ([0-9]+), Failures: ([0-9]+), Errors: ([0-9]+), Skipped: ([0-9]+).*/\1 \2 \3 \4/' <<<"${line:-Tests run: 0, Failures: 0, Errors: 0, Skipped: 0}")
passed=$((passed + t - f - e - s)); failed=$((failed + f + e))
if [ "$rc" -ne 0 ] && [ $((f + e)) -eq 0 ]; then failed=$((failed + 1)); echo "mvn package failed to build or run the tests"; fi
# The examples: train the MLP into saturation from Java; the analysis finds vanishing gradients.
java_ex=$(mktemp -d)
jar=$(ls bindings/java/target/smd-*.jar 2>/dev/null | head -1 || true)
if [ -n "$jar" ] && java -cp "$jar" ai.smd.examples.TrainMlp "$java_ex/run" --lr 1000 --steps 60 &&
   java -cp "$jar" ai.smd.examples.Analyze "$java_ex/run" 2>&1 | tee "$log" &&
   grep -Eq '^VanishingGradient: [0-9]+ steps evaluated, condition met [1-9]' "$log"; then
  passed=$((passed + 1))
else
  failed=$((failed + 1)); echo "failed: the Java examples (TrainMlp, Analyze)"
fi
rm -rf "$java_ex"
# A trial written from Java, read identically from Java, Go, Rust and the real smdebug.
run_pytest "cross-language" env SMD_BUILD_DIR="$PWD/build" SMD_JAVA_JAR="$PWD/${jar:-missing.jar}" \
  .venv/bin/python -m pytest tests/cross -q -p no:cacheprovider

echo "== numpy 2: the Python binding's suite and the interop suite again, in .venv-np2 (scripts/numpy2-venv.sh)"
if scripts/numpy2-venv.sh; then
  # The wheel built above (libsmd is not compiled a third time); from the sources if it failed.
  set +e
  if [ -n "$SMD_WHEEL" ]; then
    .venv-np2/bin/pip install -q --disable-pip-version-check --force-reinstall --no-deps "$SMD_WHEEL" 2>&1 | tee "$log"
  else
    CMAKE_ARGS="${launcher[*]}" CMAKE_BUILD_PARALLEL_LEVEL=$JOBS .venv-np2/bin/pip install -q \
      --disable-pip-version-check --no-build-isolation --force-reinstall --no-deps ./bindings/python 2>&1 | tee "$log"
  fi
  rc=${PIPESTATUS[0]}
  set -e
  if [ "$rc" -ne 0 ]; then
    failed=$((failed + 1)); echo "pip install ./bindings/python into .venv-np2 failed"
  else
    run_pytest "Python binding (numpy 2)" bash -c 'cd bindings/python/tests &&
      SMD_BUILD_DIR="$0/build" "$0/.venv-np2/bin/python" -m pytest . -q -p no:cacheprovider -n "$1"' "$PWD" "$JOBS"
  fi
  run_pytest "interop (numpy 2)" env SMD_S3_ENV_FILE="$s3env" SMD_BUILD_DIR="$PWD/build" \
    .venv-np2/bin/python -m pytest tests/interop -q -p no:cacheprovider -n "$JOBS"
else
  failed=$((failed + 1)); echo "scripts/numpy2-venv.sh failed"
fi

echo "== benchmarks, each once at a tiny size (they print figures; here only that they run)"
bench_ok() {  # bench_ok NAME PATTERN COMMAND...: passes when COMMAND exits 0 and prints PATTERN
  local name=$1 pattern=$2; shift 2
  set +e
  "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  set -e
  if [ "$rc" -eq 0 ] && grep -Eq "$pattern" "$log"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1)); echo "failed: benchmark $name"
  fi
}
bench_ok bench_rules '^\| smd built-in VanishingGradient \|' \
  .venv/bin/python tests/bench/bench_rules.py --build build --steps 110 --tensors 2 --repeat 1
bench_ok bench_writer '^\| W4 save when nothing due \(ns\) +\| [0-9.,]+ +\| [0-9.,]+ ' \
  .venv/bin/python tests/bench/bench_writer.py --build build --scratch "${TMPDIR:-/tmp}/smd-bench-writer" --tiny
bench_ok bench_reader '^\| MEM bytes per \(tensor, step, worker\) entry, 200 x 10 +\| [0-9.,]+ +\| [0-9]+ ' \
  .venv/bin/python tests/bench/bench_reader.py --build build --scratch "${TMPDIR:-/tmp}/smd-bench-reader" --tiny
bench_ok bench_codec '^65536 KiB +[0-9.]+GB/s +[0-9.]+GB/s ' build/tests/bench/bench_codec 1
bench_ok bench_histogram '^smd: +histogram of 10000 float32: best [0-9.]+ ms' \
  env SMD_BUILD_DIR="$PWD/build" .venv/bin/python tests/bench/bench_histogram.py 10000 3
bench_ok bench_python '^  peak RSS during the read \(x size\) +[0-9.]+x +[0-9.]+x' \
  env SMD_BENCH_STEPS=20 SMD_BENCH_TENSORS=3 SMD_BENCH_SAVES=10 SMD_BENCH_BIG_MIB=8 .venv/bin/python tests/bench/bench_python.py
bench_ok bench_s3 '^S5 refresh after 10 new steps \(100\) +[0-9.]+ ' \
  env SMD_S3_ENV_FILE="$s3env" SMD_BUILD_DIR="$PWD/build" .venv/bin/python tests/bench/bench_s3.py --tiny
# The framework hooks' table: frameworks/{keras,mxnet,torch}_bench.py, each in its venv made above.
bench_ok bench_frameworks '^pytorch +.* smdebug every 100 ' \
  .venv/bin/python tests/bench/bench_frameworks.py --tiny
# The bindings' table: the Rust bench in the dev profile the Rust suite above compiled, the Go
# package and the Java jar built above.
bench_ok bench_bindings '^read one value +Java \(getDouble\) +[0-9.]+ ns +[0-9.]+ ns +[-+][0-9.]+ ns' \
  tests/bench/bench_bindings.sh build --tiny
# frameworks/gpu_bench.py --tiny runs in the PyTorch suite (test_gpu_benchmark_runs_on_the_cpu).

echo "== using smd from a program outside the clone: C, Rust (path, git), Go, Java, Python, portable wheel"
set +e
tests/install/run.sh build 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
line=$( (grep -E '^install tests: [0-9]+ passed, [0-9]+ failed' "$log" || true) | tail -1)
p=$(sed -E 's/.*: ([0-9]+) passed.*/\1/' <<<"${line:-: 0 passed, 0 failed}")
f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"${line:-: 0 passed, 0 failed}")
passed=$((passed + p)); failed=$((failed + f))
if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then failed=$((failed + 1)); echo "tests/install/run.sh failed to run"; fi

if [ "${SMD_TEST_QUICK:-0}" != "1" ]; then
  echo "== C/C++ tests under AddressSanitizer + UndefinedBehaviorSanitizer"
  # -g1: line tables only, enough for the sanitizers' symbolized reports (about 10% less compile).
  build build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG=-g1 -DCMAKE_CXX_FLAGS_DEBUG=-g1 \
    -DSMD_SANITIZE=address,undefined -DSMD_BUILD_BENCH=OFF
  ASAN_OPTIONS=detect_leaks=1 run_ctest build-asan -LE 'interop|abi'
  echo "== C API, unit and S3 tests (writer threads, uploads) under ThreadSanitizer"
  # -O1: TSan's advice, and half the compile time of -O2 (the build is most of this step).
  build build-tsan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS=-O1 -DCMAKE_CXX_FLAGS=-O1 \
    -DCMAKE_C_FLAGS_DEBUG=-g1 -DCMAKE_CXX_FLAGS_DEBUG=-g1 \
    -DSMD_SANITIZE=thread -DSMD_BUILD_BENCH=OFF
  TSAN_OPTIONS=halt_on_error=1 run_ctest build-tsan -L 'capi|hook|impl|s3'
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
