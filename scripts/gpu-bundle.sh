#!/usr/bin/env bash
# Prepares what a GPU machine without build tools or network needs to run smd's GPU checks: a
# portable smd wheel for that machine's Python, the wheels of smdebug 1.0.34, protobuf 3.20.3
# (smdebug's generated code needs protobuf 3.x) and pytest, and a script that installs them and
# runs the checks. PyTorch itself is the GPU machine's own.
#
#   scripts/gpu-bundle.sh [FOLDER] [PYTHON_VERSION]    (default .gpu and 3.12)
#
# FOLDER must be one that git ignores and is small enough to be carried (about 26 MB); the
# default .gpu is listed in .git/info/exclude by this script. Then, on the GPU machine, from the
# repository root:
#
#   FOLDER/run.sh            the device tests (SMD_TEST_DEVICE=cuda) and gpu_bench.py; output under
#                            $OUT (or FOLDER/out): pytest.txt, bench.txt, bench.err
#
# run.sh options through the environment: SMD_GPU_BENCH_ARGS (gpu_bench.py's arguments; default
# one round of fp32 without smdebug's every-step run), SMD_GPU_TEST_TIMEOUT and
# SMD_GPU_BENCH_TIMEOUT (seconds; default 120 and 300). Needs scripts/setup.sh's tools here.
set -euo pipefail
cd "$(dirname "$0")/.."
folder=${1:-.gpu}
pyver=${2:-3.12}
py=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$pyver".*/bin/python3 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$py" ]; then
  echo "gpu-bundle: no Python $pyver under pyenv (${PYENV_ROOT:-$HOME/.pyenv}/versions)" >&2
  exit 2
fi
exclude="$(git rev-parse --git-common-dir)/info/exclude"
if [ "$folder" = .gpu ] && ! grep -qx '/.gpu/' "$exclude" 2>/dev/null; then
  mkdir -p "$(dirname "$exclude")" && echo '/.gpu/' >> "$exclude"
fi
mkdir -p "$folder/deps"
if ! git check-ignore -q "$folder/"; then
  echo "gpu-bundle: git does not ignore $folder (the device tool carries only ignored paths it is given)" >&2
  exit 2
fi
rm -f "$folder"/smd-*.whl "$folder"/deps/*.whl

wheel=$(scripts/python-wheel.sh --portable "$py" | tail -1)
cp "$wheel" "$folder/"
tag="cp${pyver/./}"
# Pure-Python wheels (smdebug's own dependencies are not needed by the checks: --no-deps for it).
.venv/bin/pip download -q --disable-pip-version-check --only-binary=:all: --no-deps \
  --python-version "$pyver" --implementation cp --abi "$tag" --platform manylinux2014_x86_64 \
  -d "$folder/deps" smdebug==1.0.34 protobuf==3.20.3
.venv/bin/pip download -q --disable-pip-version-check --only-binary=:all: \
  --python-version "$pyver" --implementation cp --abi "$tag" --platform manylinux2014_x86_64 \
  -d "$folder/deps" pytest

cat > "$folder/run.sh" <<'EOF'
#!/usr/bin/env bash
# Written by scripts/gpu-bundle.sh: installs the carried wheels into a private folder and runs
# smd's GPU checks from the repository root. Output under $OUT (or this folder's out/).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."
out=${OUT:-$here/out}
mkdir -p "$out"
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" "$here"/smd-*.whl "$here"/deps/*.whl
export PYTHONPATH=$site SMDEBUG_LOG_LEVEL=error
python3 - <<'PY' 2>&1 | tee "$out/versions.txt"
import smd
print("smd", smd.__version__)
try:
    import torch
    cuda = torch.cuda.is_available()
    print("torch", torch.__version__, "cuda", cuda, torch.cuda.get_device_name(0) if cuda else "")
except ImportError as e:
    print("no torch:", e)
PY
(cd tests/frameworks/pytorch &&
 SMD_TEST_DEVICE=${SMD_TEST_DEVICE:-cuda} timeout "${SMD_GPU_TEST_TIMEOUT:-120}" python3 -m pytest \
   test_pytorch_device.py -q -p no:cacheprovider -k "not gpu_benchmark") > "$out/pytest.txt" 2>&1
echo "device tests rc $?"; tail -3 "$out/pytest.txt"
bench_args=(--rounds 1 --precisions fp32 --skip "smdebug:everything every step")
if [ -n "${SMD_GPU_BENCH_ARGS:-}" ]; then eval "bench_args=($SMD_GPU_BENCH_ARGS)"; fi
timeout "${SMD_GPU_BENCH_TIMEOUT:-300}" python3 tests/bench/frameworks/gpu_bench.py "${bench_args[@]}" \
  > "$out/bench.txt" 2> "$out/bench.err"
echo "gpu_bench rc $?"; tail -14 "$out/bench.txt"; tail -3 "$out/bench.err"
EOF
chmod +x "$folder/run.sh"
du -sh "$folder" | awk '{print "gpu-bundle: " $2 " holds " $1 ": run " $2 "/run.sh on the GPU machine"}'
ls "$folder" "$folder/deps"
