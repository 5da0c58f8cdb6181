#!/usr/bin/env bash
# Creates (or brings up to date) .venv-mxnet at the repository root: MXNet 1.9.1 (its last release;
# it imports only with numpy < 1.24, hence its own environment),
# the real smdebug 1.0.34 (its MXNet hook is the reference of a test) and the smd wheel of
# scripts/python-wheel.sh (built against .venv's numpy; smd uses numpy only from Python, and its
# tests run here with numpy 1.23). Idempotent like torch.sh. Prints the venv's python.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.venv-mxnet
py=${SMD_FRAMEWORK_PYTHON:-python3}
pins=(mxnet==1.9.1 numpy==1.23.5 pytest==9.2.0
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
