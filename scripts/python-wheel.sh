#!/usr/bin/env bash
# Builds the Python binding's wheel (bindings/python, with libsmd inside) into build/wheels/ with
# .venv's build backend, and prints the wheel's path. Virtual environments other than .venv (the
# framework suites' ones) install this wheel instead of building libsmd again. Run after
# scripts/setup.sh; rebuilds only what changed (scikit-build-core keeps its build folder).
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/wheels
mkdir -p "$out"
rm -f "$out"/smd-*.whl
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
CMAKE_ARGS="${launcher[*]}" CMAKE_BUILD_PARALLEL_LEVEL=${SMD_JOBS:-$(nproc)} .venv/bin/pip wheel -q \
  --disable-pip-version-check --no-build-isolation --no-deps -w "$out" ./bindings/python >&2
ls "$out"/smd-*.whl
