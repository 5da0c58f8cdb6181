#!/usr/bin/env bash
# One table of the language bindings' costs, each next to the same call made from C in the same
# process (so both share the machine's state of the moment):
#   - save_tensor when nothing is due (ns per call),
#   - a 4 MiB float32 save_tensor that is due (µs per call; smd copies the data once, a binding
#     that adds no copy costs what C costs),
#   - reading one value (ns per value: get the value of a step, read an element, release it),
# for Rust (bindings/rust/smd/examples/bench.rs), Go (bindings/go/bench_test.go, which also gives
# the cost of an empty cgo call) and Java (tests/bench/java: BenchBindings.java and its C side
# bench_bindings_jni.c). The C baselines run inside each language's process.
#
#   tests/bench/bench_bindings.sh [BUILD_DIR] [--tiny]   (default build; libsmd must be built there)
#
# Needs cargo, go, a JDK and Maven (scripts/setup.sh installs them). The machine's other load
# shows in the figures: each is the best of several rounds.
#
# --tiny: every loop at its smallest (one round, iteration counts divided by 1000, at least 1;
# SMD_BENCH_TINY=1 for the Rust and Java programs, -benchtime 1x -count 1 for Go), the Rust bench
# in the dev profile with the Rust suite's settings (SMD_LINK=dynamic), so that cargo reuses what
# scripts/test.sh compiled instead of a release build. The figures mean nothing then; the table is
# printed all the same. That is the test command's run, so that the script cannot rot.
# Either way a part that fails, or a figure missing from the table, makes the script fail.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
tiny=0
args=()
for a in "$@"; do
  if [ "$a" = --tiny ]; then tiny=1; else args+=("$a"); fi
done
build=$(cd "${args[0]:-build}" && pwd)
export PATH="$HOME/.cargo/bin:/usr/local/go/bin:$PATH"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

num() { awk -v k="$1" '$1 == k {print $2}' "$2"; }

echo "bench_bindings: Rust ..." >&2
if [ "$tiny" = 1 ]; then
  # The dev profile and the environment of scripts/test.sh's Rust suite (smd-sys reruns its build
  # script when SMD_LIB_DIR or SMD_LINK change): smd and smd-sys are compiled there already, only
  # the example itself is compiled here (about a second).
  (cd bindings/rust && SMD_LIB_DIR="$build/capi" SMD_LINK=dynamic SMD_BENCH_TINY=1 \
     cargo run -q --example bench -- "$work/rust") > "$work/rust.txt"
else
  (cd bindings/rust && SMD_LIB_DIR="$build/capi" SMD_BENCH_TINY=0 \
     cargo run -q --release --example bench -- "$work/rust") > "$work/rust.txt"
fi
# Lines: "<operation words> <C> ns|µs <Rust> ns|µs <overhead> ns|µs"
# (the operation is the first 34 characters).
rust_field() { grep -F "$1" "$work/rust.txt" | cut -c35- | awk '{n = 0; for (i = 1; i <= NF; ++i) if ($i ~ /^[-+]?[0-9.]+$/) v[++n] = $i; print v['"$2"']}'; }

echo "bench_bindings: Go ..." >&2
# The prefix scripts/test_go.sh uses: Go's build cache keeps the cgo flags of the first build
# (pkg-config's -L), so every run must name the same, lasting folder.
prefix="$build/go-prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
pc=$(ls "$prefix"/lib*/pkgconfig/smd.pc | head -1)
gotime=(-benchtime 1s -count 3)
if [ "$tiny" = 1 ]; then gotime=(-benchtime 1x -count 1); fi
(cd bindings/go && PKG_CONFIG_PATH=$(dirname "$pc") LD_LIBRARY_PATH=$(dirname "$(dirname "$pc")") \
   go test -run '^$' -bench 'CgoEmptyCall|SaveTensorNotDue|SaveTensor4MiB|ReadValue' "${gotime[@]}" .) > "$work/go.txt"
go_ns() { # the best ns/op of benchmark $1 (exact name)
  awk -v b="Benchmark$1" '{n = $1; sub(/-[0-9]+$/, "", n)} n == b {for (i = 2; i < NF; ++i) if ($(i+1) == "ns/op") print $i}' "$work/go.txt" |
    sort -g | head -1
}

echo "bench_bindings: Java ..." >&2
jar=$(ls bindings/java/target/smd-*.jar 2>/dev/null | head -1 || true)
if [ -z "$jar" ]; then
  (cd bindings/java && mvn -B -q -Dsmd.build.dir="$build" -DskipTests package)
  jar=$(ls bindings/java/target/smd-*.jar | head -1)
fi
jdk=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
mkdir -p "$work/jclasses"
cc -O2 -shared -fPIC -I"$jdk/include" -I"$jdk/include/linux" -Icapi/include -I"$build/include" \
   tests/bench/java/bench_bindings_jni.c -L"$build/capi" -lsmd -o "$work/libsmd_bench_jni.so"
javac -d "$work/jclasses" -cp "$jar" tests/bench/java/ai/smd/BenchBindings.java
SMD_BENCH_TINY=$tiny java -cp "$jar:$work/jclasses" -Djava.library.path="$work" ai.smd.BenchBindings "$work/java" > "$work/java.txt"
j() { num "$1" "$work/java.txt"; }

# A figure that is missing (a part printed no such line) or not a number is shown as it is and
# fails the script once the table is out (awk would print it as 0.0).
missing=()
is_num() { [[ $1 =~ ^[-+]?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$ ]]; }
row() { # operation language binding c unit
  if ! is_num "$3" || ! is_num "$4"; then
    printf '%-34s %-22s %13s %13s\n' "$1" "$2" "${3:-missing}" "${4:-missing}"
    missing+=("$1 / $2")
    return
  fi
  awk -v op="$1" -v lang="$2" -v b="$3" -v c="$4" -v u="$5" \
    'BEGIN {printf "%-34s %-22s %10.1f %s %10.1f %s %+10.1f %s\n", op, lang, b, u, c, u, b - c, u}'
}
go_us() { # go_ns in µs
  local ns
  ns=$(go_ns "$1")
  if is_num "$ns"; then awk -v x="$ns" 'BEGIN {print x / 1000}'; else printf '%s' "$ns"; fi
}
echo
printf '%-34s %-22s %13s %13s %13s\n' "operation" "binding" "binding" "C, same run" "overhead"
row "save_tensor, nothing due" "Rust" "$(rust_field 'nothing due' 2)" "$(rust_field 'nothing due' 1)" ns
row "save_tensor, nothing due" "Go" "$(go_ns SaveTensorNotDue)" "$(go_ns SaveTensorNotDueFromC)" ns
row "save_tensor, nothing due" "Java (float[])" "$(j java_idle_ns)" "$(j c_idle_ns)" ns
row "save_tensor 4 MiB, due" "Rust" "$(rust_field '4 MiB' 2)" "$(rust_field '4 MiB' 1)" µs
row "save_tensor 4 MiB, due" "Go (+begin_step)" "$(go_us SaveTensor4MiB)" "$(go_us SaveTensor4MiBFromC)" µs
row "save_tensor 4 MiB, due" "Java (float[])" "$(j java_big_us)" "$(j c_big_us)" µs
row "save_tensor 4 MiB, due" "Java (direct buffer)" "$(j java_big_buffer_us)" "$(j c_big_us)" µs
row "read one value" "Rust (as_slice)" "$(rust_field 'read one value' 2)" "$(rust_field 'read one value' 1)" ns
row "read one value" "Go (At)" "$(go_ns ReadValue)" "$(go_ns ReadValueFromC)" ns
row "read one value" "Java (buffer view)" "$(j java_read_ns)" "$(j c_read_ns)" ns
row "read one value" "Java (getDouble)" "$(j java_read_double_ns)" "$(j c_read_ns)" ns
cgo=$(go_ns CgoEmptyCall)
if is_num "$cgo"; then
  printf '%-34s %-22s %10.1f ns\n' "empty cgo call (Go's floor)" "Go" "$cgo"
else
  printf '%-34s %-22s %13s\n' "empty cgo call (Go's floor)" "Go" "${cgo:-missing}"
  missing+=("empty cgo call / Go")
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "bench_bindings: no figure for:" >&2
  printf '  %s\n' "${missing[@]}" >&2
  exit 1
fi
