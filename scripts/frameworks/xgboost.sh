#!/usr/bin/env bash
# Creates (idempotently) .venv-xgboost at the repository root: XGBoost with numpy/scipy and the
# smd wheel of scripts/python-wheel.sh. Prints the venv's python.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.venv-xgboost
pins=(xgboost==3.2.0 numpy==2.4.6 scipy==1.17.1 pytest==9.2.0)
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
stamp="$venv/.smd-pins"
if [ "$(cat "$stamp" 2>/dev/null)" != "${pins[*]}" ]; then
  "$venv/bin/pip" install -q --disable-pip-version-check "${pins[@]}" >&2
  echo "${pins[*]}" > "$stamp"
fi
wheel=$(scripts/python-wheel.sh)
"$venv/bin/pip" install -q --disable-pip-version-check --no-deps --force-reinstall "$wheel" >&2
echo "$venv/bin/python"
