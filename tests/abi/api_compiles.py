#!/usr/bin/env python3
"""Checks capi/api.json against the public headers with the C compiler (ctest abi.api):

    api_compiles.py ROOT INCLUDE_DIR... -- CC

It writes a C file in which every function of api.json is assigned to a pointer of exactly the
described type, every struct is mirrored field by field (same types, offsets and size), every enum
value is asserted, and every enum is switched over with only the listed values under
-Werror=switch-enum (so a value the headers have and api.json lacks fails too); then compiles it
with -Werror. A description that differs from the headers in any signature, field or value does
not compile. Needs only the Python standard library and a C compiler (gen-api.py needs pycparser).
"""
import json
import pathlib
import subprocess
import sys
import tempfile


def t(ctype):
    return f"__typeof__({ctype})"


def generate(api):
    out = ['#include <stddef.h>', '#include "smd/smd.h"', ""]
    for f in api["functions"]:
        params = ", ".join(t(p["type"]) for p in f["params"]) or "void"
        out.append(f"static {t(f['returns'])} (*const check_{f['name']})({params}) = {f['name']};")
    for c in api["callbacks"]:
        params = ", ".join(t(p["type"]) for p in c["params"]) or "void"
        out.append(f"static {t(c['returns'])} (*check_cb_{c['name']})({params});")
        out.append(f"static {c['name']} *check_cbp_{c['name']} = &check_cb_{c['name']};")
    for e in api["enums"]:
        tag = e["name"].replace(" ", "_")
        cases = " ".join(f"case {v['name']}:" for v in e["values"])
        out.append(f"static int check_enum_{tag}({e['name']} v) {{ switch (v) {{ {cases} return 1; }} return 0; }}")
        for v in e["values"]:
            out.append(f'_Static_assert({v["name"]} == {v["value"]}, "{v["name"]} is {v["value"]} in api.json");')
    for s in api["structs"]:
        tag = s["name"].replace(" ", "_")
        fields = " ".join(f"{t(x['type'])} {x['name']};" for x in s["fields"])
        out.append(f"struct mirror_{tag} {{ {fields} }};")
        out.append(f'_Static_assert(sizeof({s["name"]}) == sizeof(struct mirror_{tag}), '
                   f'"{s["name"]}: fields of api.json do not fill it");')
        for x in s["fields"]:
            out.append(f'_Static_assert(offsetof({s["name"]}, {x["name"]}) == '
                       f'offsetof(struct mirror_{tag}, {x["name"]}), "{s["name"]}.{x["name"]} moved");')
        checks = " ".join(f"{{ {t(x['type'])} *p = &s->{x['name']}; (void)p; }}" for x in s["fields"])
        out.append(f"static void check_struct_{tag}({s['name']} *s) {{ {checks} }}")
    for o in api["opaque"]:
        out.append(f"static {o['name']} *check_opaque_{o['name']};")
    # everything above is used, so that -Wunused does not fire
    uses = [f"(void)check_{f['name']};" for f in api["functions"]]
    uses += [f"(void)check_cbp_{c['name']};" for c in api["callbacks"]]
    uses += [f"(void)check_enum_{e['name'].replace(' ', '_')};" for e in api["enums"]]
    uses += [f"(void)check_struct_{s['name'].replace(' ', '_')};" for s in api["structs"]]
    uses += [f"(void)check_opaque_{o['name']};" for o in api["opaque"]]
    out.append("int main(void) {")
    out += ["  " + u for u in uses]
    out.append("  return 0;\n}")
    return "\n".join(out) + "\n"


def main():
    args = sys.argv[1:]
    sep = args.index("--")
    root, includes, cc = pathlib.Path(args[0]), args[1:sep], args[sep + 1:]
    api = json.loads((root / "capi" / "api.json").read_text())
    if len(api["functions"]) < 150:
        sys.exit(f"api.json lists only {len(api['functions'])} functions")
    with tempfile.TemporaryDirectory() as tmp:
        src = pathlib.Path(tmp) / "api_check.c"
        src.write_text(generate(api))
        cmd = cc + ["-std=gnu99", "-Wall", "-Wextra", "-Werror", "-Wswitch-enum",
                    "-Wincompatible-pointer-types", "-fsyntax-only"]
        cmd += [f"-I{i}" for i in includes] + [str(src)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stdout + r.stderr)
            print("capi/api.json does not describe the headers: run scripts/gen-api.py")
            sys.exit(1)
    n = {k: len(api[k]) for k in ("functions", "callbacks", "enums", "structs", "opaque")}
    print("api.json matches the headers: " + ", ".join(f"{v} {k}" for k, v in n.items()))


if __name__ == "__main__":
    main()
