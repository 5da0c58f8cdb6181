#!/usr/bin/env bash
# The dynamic symbols libsmd exports must be exactly capi/smd.symbols, and every SMD_API function
# declared in the public headers must be in that list.
set -euo pipefail
lib=$1 symbols=$2 headers=$3
exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TtWwVvDdBbRr]$/ {print $3}' | sed 's/@.*//' | grep -v '^SMD_' | sort -u)
expected=$(grep '^smd_' "$symbols" | sort -u)
declared=$(grep -h -A3 '^SMD_API' "$headers"/*.h | tr '\n' ' ' | grep -o 'smd_[a-z0-9_]*(' | tr -d '(' | sort -u)
status=0
if [ "$exported" != "$expected" ]; then
  echo "exported symbols differ from $symbols:"; diff <(echo "$expected") <(echo "$exported") || true; status=1
fi
if [ "$declared" != "$expected" ]; then
  echo "symbols declared in the headers differ from $symbols:"; diff <(echo "$expected") <(echo "$declared") || true; status=1
fi
[ $status -eq 0 ] && echo "abi: $(echo "$expected" | wc -l) symbols, exactly the smd_* ABI"
exit $status
