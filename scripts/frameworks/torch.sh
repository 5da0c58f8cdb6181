#!/usr/bin/env bash
# Creates (or brings up to date) .venv-torch at the repository root: pinned PyTorch (CPU use; the
# PyPI wheel brings its CUDA libraries along), the real smdebug 1.0.34 (its PyTorch hook is the
# benchmark's reference) and the smd wheel of scripts/python-wheel.sh. Idempotent: the pinned
# packages are installed once (pip's cache is kept), the smd wheel every run (it changes with the
# tree). Prints the venv's python.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.venv-torch
py=${SMD_FRAMEWORK_PYTHON:-python3}
pins=(torch==2.15.0 numpy==1.26.4 pytest==9.2.0
      smdebug==1.0.34 protobuf==3.20.3 boto3==1.44.8 packaging pyinstrument==3.4.2
      requests==2.34.2 psutil==7.2.2 pandas==2.2.3)
stamp=$venv/.smd-pins
if [[ ! -x $venv/bin/python ]]; then
  "$py" -m venv "$venv" >&2
fi
if [[ ! -f $stamp || "$(cat "$stamp")" != "${pins[*]}" ]]; then
  "$venv/bin/pip" install -q --disable-pip-version-check "${pins[@]}" >&2
  echo "${pins[*]}" >"$stamp"
fi
wheel=$(scripts/python-wheel.sh)
"$venv/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps "$wheel" >&2
echo "$venv/bin/python"
