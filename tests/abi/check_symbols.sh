#!/usr/bin/env bash
# The dynamic symbols libsmd exports must be exactly capi/smd.symbols, and capi/smd.symbols must
# list exactly the functions of capi/api.json (both written by scripts/gen-api.py; api.json is
# checked against the headers by the C compiler, ctest abi.api).
set -euo pipefail
lib=$1 symbols=$2 api=$3
exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TtWwVvDdBbRr]$/ {print $3}' | sed 's/@.*//' | grep -v '^SMD_' | sort -u)
expected=$(grep '^smd_' "$symbols" | sort -u)
declared=$(python3 -c 'import json, sys; print("\n".join(f["name"] for f in json.load(open(sys.argv[1]))["functions"]))' "$api" | sort -u)
status=0
if [ "$exported" != "$expected" ]; then
  echo "exported symbols differ from $symbols:"; diff <(echo "$expected") <(echo "$exported") || true; status=1
fi
if [ "$declared" != "$expected" ]; then
  echo "functions of $api differ from $symbols (run scripts/gen-api.py):"; diff <(echo "$expected") <(echo "$declared") || true; status=1
fi
[ $status -eq 0 ] && echo "abi: $(echo "$expected" | wc -l) symbols, exactly the smd_* ABI"
exit $status
