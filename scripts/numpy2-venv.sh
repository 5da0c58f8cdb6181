#!/usr/bin/env bash
# Makes .venv-np2 (idempotently): the Python binding's and the interop suites' environment under
# numpy 2. The same packages as .venv (scripts/requirements.txt) except numpy, which is the current
# 2.x. smdebug 1.0.34 declares numpy < 2, so it is installed without its dependencies (they are
# the ones listed here); under numpy 2 its writer needs ndarray.tostring, which
# tests/interop/smdebug_env.py supplies to it alone (its reader runs unchanged).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${SMD_NUMPY2_VENV:-$PWD/.venv-np2}
PY=$(sed -n 's/^home = //p' .venv/pyvenv.cfg 2>/dev/null)/python3
[ -x "$PY" ] || PY=$(command -v python3)
stamp="$VENV/.smd-numpy2"
want="numpy>=2,<3 tensorboard>=2.18 $(cat scripts/requirements.txt | sha256sum | cut -c1-16)"
if [ -x "$VENV/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then exit 0; fi
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
grep -Ev '^(numpy|smdebug|pandas|tensorboard)==' scripts/requirements.txt > "$VENV/requirements-np2.txt"
"$VENV/bin/pip" install -q --disable-pip-version-check -r "$VENV/requirements-np2.txt" 'numpy>=2,<3' 'pandas>=2.2.3' 'tensorboard>=2.18'
# smdebug's own dependencies other than numpy and protobuf (pinned above), as .venv resolved them.
"$VENV/bin/pip" install -q --disable-pip-version-check boto3 packaging 'pyinstrument==3.4.2'
"$VENV/bin/pip" install -q --disable-pip-version-check --no-deps smdebug==1.0.34
"$VENV/bin/python" -c 'import numpy, smdebug; assert numpy.__version__ >= "2"; print("numpy", numpy.__version__, "smdebug", smdebug.__version__)'
echo "$want" > "$stamp"
