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
#   tests/bench/bench_bindings.sh [BUILD_DIR]     (default build; libsmd must be built there)
#
# Needs cargo, go, a JDK and Maven (scripts/setup.sh installs them). The machine's other load
# shows in the figures: each is the best of several rounds.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
build=$(cd "${1:-build}" && pwd)
export PATH="$HOME/.cargo/bin:/usr/local/go/bin:$PATH"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

num() { awk -v k="$1" '$1 == k {print $2}' "$2"; }

echo "bench_bindings: Rust ..." >&2
(cd bindings/rust && SMD_LIB_DIR="$build/capi" cargo run -q --release --example bench -- "$work/rust") > "$work/rust.txt"
# Lines: "<operation words> <C> ns|µs <Rust> ns|µs <overhead> ns|µs"
# (the operation is the first 34 characters).
rust_field() { grep -F "$1" "$work/rust.txt" | cut -c35- | awk '{n = 0; for (i = 1; i <= NF; ++i) if ($i ~ /^[-+]?[0-9.]+$/) v[++n] = $i; print v['"$2"']}'; }

echo "bench_bindings: Go ..." >&2
# The prefix scripts/test_go.sh uses: Go's build cache keeps the cgo flags of the first build
# (pkg-config's -L), so every run must name the same, lasting folder.
prefix="$build/go-prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
pc=$(ls "$prefix"/lib*/pkgconfig/smd.pc | head -1)
(cd bindings/go && PKG_CONFIG_PATH=$(dirname "$pc") LD_LIBRARY_PATH=$(dirname "$(dirname "$pc")") \
   go test -run '^$' -bench 'CgoEmptyCall|SaveTensorNotDue|SaveTensor4MiB|ReadValue' -benchtime 1s -count 3 .) > "$work/go.txt"
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
java -cp "$jar:$work/jclasses" -Djava.library.path="$work" ai.smd.BenchBindings "$work/java" > "$work/java.txt"
j() { num "$1" "$work/java.txt"; }

row() { # operation language binding c unit
  awk -v op="$1" -v lang="$2" -v b="$3" -v c="$4" -v u="$5" \
    'BEGIN {printf "%-34s %-22s %10.1f %s %10.1f %s %+10.1f %s\n", op, lang, b, u, c, u, b - c, u}'
}
echo
printf '%-34s %-22s %13s %13s %13s\n' "operation" "binding" "binding" "C, same run" "overhead"
row "save_tensor, nothing due" "Rust" "$(rust_field 'nothing due' 2)" "$(rust_field 'nothing due' 1)" ns
row "save_tensor, nothing due" "Go" "$(go_ns SaveTensorNotDue)" "$(go_ns SaveTensorNotDueFromC)" ns
row "save_tensor, nothing due" "Java (float[])" "$(j java_idle_ns)" "$(j c_idle_ns)" ns
row "save_tensor 4 MiB, due" "Rust" "$(rust_field '4 MiB' 2)" "$(rust_field '4 MiB' 1)" µs
row "save_tensor 4 MiB, due" "Go (+begin_step)" "$(awk -v x="$(go_ns SaveTensor4MiB)" 'BEGIN {print x / 1000}')" \
    "$(awk -v x="$(go_ns SaveTensor4MiBFromC)" 'BEGIN {print x / 1000}')" µs
row "save_tensor 4 MiB, due" "Java (float[])" "$(j java_big_us)" "$(j c_big_us)" µs
row "save_tensor 4 MiB, due" "Java (direct buffer)" "$(j java_big_buffer_us)" "$(j c_big_us)" µs
row "read one value" "Rust (as_slice)" "$(rust_field 'read one value' 2)" "$(rust_field 'read one value' 1)" ns
row "read one value" "Go (At)" "$(go_ns ReadValue)" "$(go_ns ReadValueFromC)" ns
row "read one value" "Java (buffer view)" "$(j java_read_ns)" "$(j c_read_ns)" ns
row "read one value" "Java (getDouble)" "$(j java_read_double_ns)" "$(j c_read_ns)" ns
printf '%-34s %-22s %10.1f ns\n' "empty cgo call (Go's floor)" "Go" "$(go_ns CgoEmptyCall)"
