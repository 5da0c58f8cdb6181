#!/usr/bin/env bash
# The demo: installs what is missing, builds smd, runs a small training loop instrumented by the
# hook (examples/train_mlp.c), then shows what it wrote with `smd ls`.
#   DEMO_DIR (default ./demo-output) receives the trial.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh >/dev/null
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build --target smd_tool train_mlp >/dev/null

out=${DEMO_DIR:-$PWD/demo-output}
rm -rf "$out"
mkdir -p "$out"
echo "== a training run instrumented by the hook (build/examples/train_mlp)"
./build/examples/train_mlp "$out/healthy" --steps 200
echo
echo "== what the hook wrote: smd ls $out/healthy"
./build/tools/smd/smd ls "$out/healthy"
