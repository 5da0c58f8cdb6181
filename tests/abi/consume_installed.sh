#!/usr/bin/env bash
# Installs the build into a scratch prefix and builds tests/abi/consumer.c the way an outside
# project would, from nothing but pkg-config's answers about that prefix: once against libsmd.so
# (`pkg-config --cflags --libs smd`) and, when libsmd.a is installed, once statically
# (`pkg-config --static --cflags --libs smd`, which must name every library smd_impl needs). Both
# programs must run; then a CMake project that uses find_package(smd). Also checks that smd.pc
# names no include folder but the prefix's own, and that it is relocatable (installed into a
# prefix other than the configured one, it names that prefix).
#   consume_installed.sh BUILD_DIR SOURCE_DIR SCRATCH_DIR
set -euo pipefail
build=$1 src=$2 scratch=$3
cc=${CC:-cc}
extra=${SMD_CONSUMER_FLAGS:-}  # e.g. -fsanitize=... for a sanitized build
rm -rf "$scratch"
mkdir -p "$scratch"
prefix="$scratch/prefix"
cmake --install "$build" --prefix "$prefix" >"$scratch/install.log"
libdir=$(dirname "$(find "$prefix" -name smd.pc -path '*/pkgconfig/*' | head -1)")
[ -n "$libdir" ] || { echo "no smd.pc installed under $prefix"; exit 1; }
libdir=$(dirname "$libdir")

# smd.pc names its prefix relative to its own folder: installed anywhere, it needs no editing.
export PKG_CONFIG_PATH="$libdir/pkgconfig"
[ "$(pkg-config --variable=includedir smd)" -ef "$prefix/include" ] ||
  { echo "smd.pc's includedir is not $prefix/include: $(pkg-config --variable=includedir smd)"; exit 1; }
cflags=$(pkg-config --cflags smd)
for flag in $cflags; do
  case $flag in
    -I"$prefix"/*) ;;
    -I*) echo "smd.pc leaks an include folder: $flag"; exit 1 ;;
  esac
done

trial="$src/tests/data/trials/dtypes"
# The fixture's distinct tensor names containing "int", as its index files list them.
expected=$(cat "$trial"/index/*/*.json | grep -o '"tensorname": *"[^"]*"' | sort -u | grep -c 'int')

status=0
unset LD_LIBRARY_PATH
$cc -std=c99 -Wall -Wextra -Werror $extra $(pkg-config --cflags smd) "$src/tests/abi/consumer.c" \
  -o "$scratch/consumer_shared" $(pkg-config --libs smd)
if ! "$scratch/consumer_shared" "$trial" 'int' "$expected"; then status=1; fi
# It runs with no LD_LIBRARY_PATH: smd.pc's Libs give the rpath of the prefix's library folder.
# (ldd's output is taken whole first: under pipefail, `ldd | grep -q` fails when grep stops
# reading early and ldd gets SIGPIPE.)
deps=$(ldd "$scratch/consumer_shared")
loaded=$(awk '$1 ~ /^libsmd\.so/ {print $3}' <<<"$deps")
if [ -n "$loaded" ] && [ "$(realpath "$loaded")" = "$(realpath "$libdir/libsmd.so")" ]; then :; else
  echo "consumer_shared does not load $libdir/libsmd.so:"; echo "$deps"; status=1
fi

if [ -f "$libdir/libsmd.a" ]; then
  # -l:libsmd.a picks the archive next to libsmd.so; everything else comes from smd.pc.
  static_libs=$(pkg-config --static --libs smd | sed 's/-lsmd\b/-l:libsmd.a/')
  $cc -std=c99 -Wall -Wextra -Werror $extra $(pkg-config --static --cflags smd) \
    "$src/tests/abi/consumer.c" -o "$scratch/consumer_static" $static_libs
  deps=$(ldd "$scratch/consumer_static")
  if grep -q libsmd <<<"$deps"; then
    echo "consumer_static loads libsmd.so"; status=1
  fi
  if ! "$scratch/consumer_static" "$trial" 'int' "$expected"; then status=1; fi
fi
# The CMake package: find_package(smd) and the smd::smd target, nothing else.
proj="$scratch/cmake_consumer"
mkdir -p "$proj"
cat >"$proj/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.18)
project(smd_consumer C)
find_package(smd REQUIRED)
add_executable(consumer "$src/tests/abi/consumer.c")
target_link_libraries(consumer PRIVATE smd::smd)
CMAKE
if CC="$cc" CFLAGS="$extra" LDFLAGS="$extra" cmake -S "$proj" -B "$proj/build" \
     -DCMAKE_PREFIX_PATH="$prefix" >"$scratch/cmake_consumer.log" 2>&1 &&
   cmake --build "$proj/build" >>"$scratch/cmake_consumer.log" 2>&1; then
  if ! "$proj/build/consumer" "$trial" 'int' "$expected"; then status=1; fi
else
  echo "the CMake consumer does not build:"; cat "$scratch/cmake_consumer.log"; status=1
fi

[ $status -eq 0 ] && echo "install-and-consume: ok ($(pkg-config --libs smd); static: ${static_libs:-none})"
exit $status
