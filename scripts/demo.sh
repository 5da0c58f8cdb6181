#!/usr/bin/env bash
# The demo: installs what is missing, builds smd, runs a small training loop instrumented by the
# hook (examples/train_mlp.c) twice — a healthy run and one whose gradients vanish — then shows
# what was written (`smd ls`), runs built-in rules over both runs (`smd rules`), and points at the
# TensorBoard logs the hook wrote.
#   DEMO_DIR (default ./demo-output) receives the trials.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh >/dev/null
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build --target smd_tool train_mlp >/dev/null

out=${DEMO_DIR:-$PWD/demo-output}
smd=./build/tools/smd/smd
rm -rf "$out"
mkdir -p "$out"
rules=(--rule VanishingGradient --rule ExplodingTensor --rule LossNotDecreasing)

echo "== 1. a healthy training run, instrumented by the hook"
echo "\$ build/examples/train_mlp $out/healthy --tensorboard"
./build/examples/train_mlp "$out/healthy" --tensorboard
echo
echo "== 2. a bad run: learning rate 1000 saturates the hidden layer"
echo "\$ build/examples/train_mlp $out/bad --lr 1000"
./build/examples/train_mlp "$out/bad" --lr 1000
echo
echo "== 3. what the hook wrote"
echo "\$ smd ls $out/healthy"
"$smd" ls "$out/healthy"
echo
echo "== 4. rules over the healthy run"
echo "\$ smd rules $out/healthy ${rules[*]}"
"$smd" rules "$out/healthy" "${rules[@]}" && echo "(exit status 0: no rule fired)"
echo
echo "== 5. rules over the bad run"
echo "\$ smd rules $out/bad ${rules[*]}"
set +e
"$smd" rules "$out/bad" "${rules[@]}"
status=$?
set -e
if [ "$status" -eq 6 ]; then
  echo "(exit status 6: a rule fired)"
else
  echo "demo: expected a rule to fire on the bad run (exit status 6), got $status" >&2
  exit 1
fi
echo
echo "== 6. TensorBoard logs of the healthy run: $out/healthy/tensorboard"
echo "   look at them with: .venv/bin/tensorboard --logdir $out/healthy/tensorboard"
