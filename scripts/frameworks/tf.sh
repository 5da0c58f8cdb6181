#!/usr/bin/env bash
# Creates (idempotently) .venv-tf at the repository root: TensorFlow (CPU) with Keras 3 and the
# legacy Keras 2 (tf_keras), smdebug 1.0.34 for the side-by-side benchmark (its dependencies but
# not its protobuf pin, which TensorFlow does not accept: it runs with protobuf's pure-Python
# parser, as far as it runs with today's TensorFlow at all), and the smd wheel of
# scripts/python-wheel.sh. Prints the venv's python.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.venv-tf
pins=(tensorflow-cpu==2.21.0 keras==3.15.1 tf-keras==2.21.0 numpy==2.4.6 pytest==9.2.0
      boto3==1.44.8 pyinstrument==3.4.2 pandas==3.1.1 psutil==7.2.2)
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
stamp="$venv/.smd-pins"
if [ "$(cat "$stamp" 2>/dev/null)" != "${pins[*]}" ]; then
  "$venv/bin/pip" install -q --disable-pip-version-check "${pins[@]}" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check --no-deps smdebug==1.0.34 >&2
  echo "${pins[*]}" > "$stamp"
fi
wheel=$(scripts/python-wheel.sh)
"$venv/bin/pip" install -q --disable-pip-version-check --no-deps --force-reinstall "$wheel" >&2
echo "$venv/bin/python"
