#!/usr/bin/env python3
"""Mechanical checks of the C ABI's conventions (smd/smd.h lists them), over every function of
capi/api.json (the description tests/abi/api_compiles.py proves equal to the headers), and of what
the headers and impl/ may cite (ctest abi.conventions):

 1. a mode is always an smd_mode (never an integer);
 2. arguments come in the order step, mode, worker (then the rest);
 3. every setter (a name with _set_) returns smd_error *;
 4. arrays come back as a caller-owned pointer plus a size_t count out-parameter (numbers and
    handles) or an smd_strarray (strings), never into a caller buffer with a capacity;
 5. a function whose first argument is a non-const handle changes that handle: its name says how
    (create, set, add, close, save, ...); every query takes a const handle;
 6. outputs are named out or *_out and come last;
 7. every handle (an opaque type with a _free function) is freed by a function returning void;
 8. the headers cite only documents that ship with the project (docs/*.md that exist);
 9. impl/ messages do not name C functions (the C boundary adds C-specific advice).

    check_conventions.py ROOT
"""
import json
import pathlib
import re
import sys

VERBS = re.compile(r"_(create|clone|free|set|unset|add|parse|close|flush|begin_step|end_step|"
                   r"make_due|save|get_collection|include_collection|report|require_tensor|"
                   r"end_rule|fail|invoke|refresh|wait_for_steps|clear)")
ARRAY_OUT = re.compile(r"^(int64_t|size_t|double|smd_mode|smd_dtype) \*\*$|^smd_value \*\*\*$")


def check_function(f, handles, bad):
    name, params = f["name"], f["params"]
    names = [p["name"] for p in params]
    types = [p["type"] for p in params]

    def first(pred):
        return next((i for i, p in enumerate(params) if pred(p)), None)

    # 1. modes
    for p in params:
        if p["name"] == "mode" and p["type"] in ("int", "int32_t", "int64_t", "unsigned int"):
            bad(f"{name} takes an integer mode (use smd_mode)")
    # 2. order: step, mode, worker
    ps = first(lambda p: p["type"] == "int64_t" and p["name"] in ("step", "mode_step", "global_step"))
    pm = first(lambda p: p["type"] in ("smd_mode", "smd_mode *") and p["name"] == "mode")
    pw = first(lambda p: p["type"] == "const char *" and p["name"] == "worker")
    if ps is not None and pm is not None and ps > pm:
        bad(f"{name}: the step must come before the mode")
    if pm is not None and pw is not None and pm > pw:
        bad(f"{name}: the mode must come before the worker")
    if ps is not None and pw is not None and ps > pw:
        bad(f"{name}: the step must come before the worker")
    # 3. setters
    if "_set_" in name and f["returns"] != "smd_error *":
        bad(f"{name} is a setter but does not return smd_error *")
    # 4. arrays
    if any("capacity" in n for n in names):
        bad(f"{name} fills a caller buffer with a capacity")
    array_out = any(ARRAY_OUT.match(p["type"]) and p["name"].endswith("_out") for p in params)
    count_out = any(p["type"] == "size_t *" and p["name"] in ("n_out", "ndim_out") for p in params)
    if array_out and not count_out:
        bad(f"{name} returns an array without a size_t *n_out count")
    # 5. const queries
    if params and re.fullmatch(r"smd_[a-z_]+ \*", types[0]) and types[0] not in ("smd_error *", "smd_strarray *"):
        if not VERBS.search(name):
            bad(f"{name} takes a non-const handle but its name says no change (make the handle const)")
    # 6. outputs last (a function returning smd_error * puts its results in out / *_out)
    outs = [i for i, n in enumerate(names) if n == "out" or n.endswith("_out")]
    if outs and outs != list(range(len(params) - len(outs), len(params))):
        bad(f"{name}: outputs ({', '.join(names[i] for i in outs)}) must be the last parameters")
    for i in outs:
        if not types[i].endswith("*"):
            bad(f"{name}: output {names[i]} is not a pointer")
    # 7. handles are freed by void functions
    if name.endswith("_free") and name[: -len("_free")] in handles and f["returns"] != "void":
        bad(f"{name} frees a handle but does not return void")


def main():
    root = pathlib.Path(sys.argv[1])
    api = json.loads((root / "capi" / "api.json").read_text())
    headers = root / "capi" / "include" / "smd"
    failures = []
    bad = failures.append
    functions = api["functions"]
    if len(functions) < 150:
        bad(f"api.json lists only {len(functions)} functions")
    names = {f["name"] for f in functions}
    handles = {o["name"] for o in api["opaque"] if o["name"] + "_free" in names}
    for f in functions:
        if not f["name"].startswith("smd_"):
            bad(f"{f['name']} is not named smd_<module>_<verb>")
        check_function(f, handles, bad)
    # 8. citations in the public headers
    text = {h.name: h.read_text() for h in sorted(headers.glob("*.h"))}
    for h, t in text.items():
        for m in re.finditer(r"shared/|BEHAVIOR\.md|FORMAT\.md|DUMP\.md|seed [0-9]|§", t):
            bad(f"{h} cites a document that does not ship: {m.group(0)!r}")
        for doc in sorted(set(re.findall(r"docs/[A-Za-z0-9_.-]+\.md", t))):
            if not (root / doc).is_file():
                bad(f"{h} cites {doc}, which does not exist")
    # 9. impl messages naming C functions
    cfun = re.compile(r'"[^"\n]*smd_(hook|trial|tensor|value|rule|collection|save_config|'
                      r'reduction_config|tensorboard|error|strarray|dtype|mode|storage)_[a-z_]+')
    for src in sorted((root / "impl").rglob("*")):
        if src.suffix in (".cc", ".h"):
            for n, line in enumerate(src.read_text().splitlines(), 1):
                if cfun.search(line):
                    bad(f"{src.relative_to(root)}:{n}: an impl message names a C function (say it "
                        f"at the C boundary, in capi/src)")
    for f in failures:
        print("convention broken: " + f)
    if not failures:
        print(f"conventions: {len(functions)} functions follow them")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
