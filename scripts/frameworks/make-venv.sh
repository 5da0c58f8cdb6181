#!/usr/bin/env bash
# Creates or brings up to date one framework suite's virtual environment at the repository root:
#   scripts/frameworks/make-venv.sh NAME PIN... [--no-deps PIN...]
# makes .venv-NAME with the pinned packages (installed once: a stamp file remembers the pins) and
# the PINs after --no-deps without their dependencies, then installs the smd wheel ($SMD_WHEEL, or
# the one scripts/python-wheel.sh builds) every run, since it changes with the tree. Prints the
# venv's python. SMD_FRAMEWORK_PYTHON picks the interpreter (default python3).
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.venv-$1
shift
pins=() nodeps=()
while [ $# -gt 0 ]; do
  if [ "$1" = --no-deps ]; then shift; nodeps=("$@"); break; fi
  pins+=("$1"); shift
done
if [ ! -x "$venv/bin/python" ]; then
  "${SMD_FRAMEWORK_PYTHON:-python3}" -m venv "$venv" >&2
fi
stamp=$venv/.smd-pins
want="${pins[*]} --no-deps ${nodeps[*]}"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  "$venv/bin/pip" install -q --disable-pip-version-check "${pins[@]}" >&2
  if [ ${#nodeps[@]} -gt 0 ]; then
    "$venv/bin/pip" install -q --disable-pip-version-check --no-deps "${nodeps[@]}" >&2
  fi
  echo "$want" >"$stamp"
fi
wheel=${SMD_WHEEL:-$(scripts/python-wheel.sh)}
"$venv/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps "$wheel" >&2
echo "$venv/bin/python"
