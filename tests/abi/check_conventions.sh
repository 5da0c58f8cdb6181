#!/usr/bin/env bash
# Mechanical checks of the C ABI's conventions (smd/smd.h lists them), over every SMD_API
# declaration of the public headers, and of what the headers and impl/ may cite:
#  1. a mode is always an smd_mode (never an int);
#  2. arguments come in the order step, mode, worker (then the rest);
#  3. every setter (a name with _set_) returns smd_error *;
#  4. arrays come back as a caller-owned pointer plus a size_t count out-parameter (numbers and
#     handles) or an smd_strarray (strings), never into a caller buffer with a capacity;
#  5. a function whose first argument is a non-const handle changes that handle: its name says how
#     (create, set, add, close, save, ...); every query takes a const handle;
#  6. the headers cite only documents that ship with the project (docs/*.md that exist);
#  7. impl/ messages do not name C functions (the C boundary adds C-specific advice).
set -euo pipefail
root=$1
headers=$root/capi/include/smd
fail=0
bad() { echo "convention broken: $*"; fail=1; }

# One line per declaration, whitespace squeezed, without SMD_API / SMD_MUST_USE / SMD_NOEXCEPT.
decls=$(cat "$headers"/*.h | awk '/^SMD_API/ { d = $0; while (d !~ /;/) { getline l; d = d " " l }; print d }' |
  sed -E 's/SMD_API |SMD_MUST_USE |SMD_NOEXCEPT//g; s/[[:space:]]+/ /g; s/\( /(/g')
[ -n "$decls" ] || { echo "no declarations found under $headers"; exit 1; }
count=0
verbs='_(create|clone|free|set|unset|add|parse|close|flush|begin_step|end_step|make_due|save|get_collection|include_collection|report|require_tensor|end_rule|fail|invoke|refresh|wait_for_steps|clear)'
while IFS= read -r d; do
  count=$((count + 1))
  [[ $d =~ (smd_[a-z0-9_]+)\( ]] && name=${BASH_REMATCH[1]} || { bad "cannot parse: $d"; continue; }
  params=${d#*"$name("}
  params=${params%)*}
  IFS=',' read -r -a plist <<< "$params"
  ps='' pm='' pw='' i=0 int_mode=0 capacity=0 array_out=0 count_out=0
  for p in "${plist[@]}"; do
    i=$((i + 1))
    p=${p# }
    [[ $p =~ ^(int64_t\ (mode_)?step|int64_t\ global_step)$ && -z $ps ]] && ps=$i
    [[ $p =~ ^smd_mode\ \*?mode$ && -z $pm ]] && pm=$i
    [[ $p == "const char *worker" && -z $pw ]] && pw=$i
    [[ $p =~ ^(int|int32_t|int64_t|unsigned)\ mode$ ]] && int_mode=1
    [[ $p == *capacity* ]] && capacity=1
    [[ $p =~ ^((int64_t|size_t|double|smd_mode|smd_dtype)\ \*\*|smd_value\ \*\*\*)[a-z_]*_out$ ]] && array_out=1
    [[ $p =~ ^size_t\ \*(n|ndim)_out$ ]] && count_out=1
  done
  # 1. modes
  [ $int_mode -eq 0 ] || bad "$name takes an integer mode (use smd_mode)"
  # 2. order: step, mode, worker
  if [ -n "$ps" ] && [ -n "$pm" ] && [ "$ps" -gt "$pm" ]; then bad "$name: the step must come before the mode"; fi
  if [ -n "$pm" ] && [ -n "$pw" ] && [ "$pm" -gt "$pw" ]; then bad "$name: the mode must come before the worker"; fi
  if [ -n "$ps" ] && [ -n "$pw" ] && [ "$ps" -gt "$pw" ]; then bad "$name: the step must come before the worker"; fi
  # 3. setters
  if [[ $name == *_set_* ]] && [[ $d != "smd_error *"* ]]; then bad "$name is a setter but does not return smd_error *"; fi
  # 4. arrays
  [ $capacity -eq 0 ] || bad "$name fills a caller buffer with a capacity"
  if [ $array_out -eq 1 ] && [ $count_out -eq 0 ]; then bad "$name returns an array without a size_t *n_out count"; fi
  # 5. const queries
  first=${plist[0]# }
  if [[ $first =~ ^smd_[a-z_]+\ \*[a-z_]+$ ]] && [[ $first != smd_error* ]] && [[ $first != smd_strarray* ]]; then
    [[ $name =~ $verbs ]] || bad "$name takes a non-const handle but its name says no change (make the handle const)"
  fi
done <<< "$decls"

# 6. citations in the public headers
if grep -nE 'shared/|BEHAVIOR\.md|FORMAT\.md|DUMP\.md|seed [0-9]|§' "$headers"/*.h; then bad "a header cites a document that does not ship"; fi
for doc in $(grep -ohE 'docs/[A-Za-z0-9_.-]+\.md' "$headers"/*.h | sort -u); do
  [ -f "$root/$doc" ] || bad "a header cites $doc, which does not exist"
done

# 7. impl messages naming C functions
if grep -rnE '"[^"]*smd_(hook|trial|tensor|value|rule|collection|save_config|reduction_config|tensorboard|error|strarray|dtype|mode)_[a-z_]+' \
    "$root/impl" --include='*.cc' --include='*.h'; then
  bad "an impl message names a C function (say it at the C boundary, in capi/src)"
fi

[ $fail -eq 0 ] && echo "conventions: $count declarations follow them"
exit $fail
