#!/usr/bin/env bash
# Regenerates tests/data/trials/: small trials written by the REAL smdebug (tests/interop/cases.py),
# read by the C tests (tests/capi) and usable by every binding's tests.
#   tests/data/make_fixtures.sh [PYTHON]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
py=${1:-$here/../../.venv/bin/python}
out=$here/trials
rm -rf "$out"
mkdir -p "$out"
for c in modes_reentry dtypes shapes reductions_float workers3_running; do
  PYTHONHASHSEED=0 SMDEBUG_LOG_LEVEL=error "$py" "$here/../interop/writer.py" "$c" "$out/$c" >/dev/null 2>&1
done
echo "fixtures written to $out"
