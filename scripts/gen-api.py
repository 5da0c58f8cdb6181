#!/usr/bin/env python3
"""Writes capi/api.json, the machine-readable description of smd's public C API, and
capi/smd.symbols (the exported function names), from capi/include/smd/*.h.

    .venv/bin/python scripts/gen-api.py          # after changing a public header
    .venv/bin/python scripts/gen-api.py --check  # exit 1 if api.json or smd.symbols is stale

The headers are preprocessed by the C compiler (with stand-ins for the three libc headers they
include, scripts/api/fake_libc/) and parsed by pycparser: one real C parser, so no consumer has to
read the headers itself. api.json drives the symbol list and its check (tests/abi/check_symbols.sh),
the conventions check (tests/abi/check_conventions.py), the Rust FFI declarations
(bindings/rust/smd-sys/gen_bindings.py), the Go binding's coverage test, and the SWIG proxies of
the handles (bindings/swig/smd_handles.i, written here too). tests/abi/api_compiles.py turns api.json back into C that must compile against
the headers (every signature, enum value and struct), so the description cannot drift from them.
"""
import copy
import json
import pathlib
import subprocess
import sys

from pycparser import c_ast, c_generator, c_parser

ROOT = pathlib.Path(__file__).resolve().parent.parent
HEADERS = ROOT / "capi" / "include" / "smd"
FAKE_LIBC = ROOT / "scripts" / "api" / "fake_libc"
API_JSON = ROOT / "capi" / "api.json"
SYMBOLS = ROOT / "capi" / "smd.symbols"
SWIG_HANDLES = ROOT / "bindings" / "swig" / "smd_handles.i"
# smd.h only includes the others (and the generated version.h, which holds macros only).
SKIP = {"smd.h", "export.h"}


def preprocess():
    units = "".join(f'#include "smd/{h.name}"\n' for h in sorted(HEADERS.glob("*.h"))
                    if h.name not in SKIP)
    cmd = ["cc", "-E", "-std=c99", "-nostdinc", f"-I{FAKE_LIBC}", f"-I{ROOT / 'capi' / 'include'}",
           "-DSMD_EXPORT_H", "-DSMD_API=", "-DSMD_MUST_USE=", "-DSMD_NOEXCEPT=", "-DSMD_DEPRECATED=",
           "-x", "c", "-"]
    return subprocess.run(cmd, input=units, capture_output=True, text=True, check=True).stdout


def type_text(node):
    """The C spelling of a type node without any declared name ("const smd_trial *")."""
    node = _strip_names(node)
    text = c_generator.CGenerator().visit(c_ast.Typename(None, [], None, node))
    return " ".join(text.split()).replace("* ", "*").replace(" *", " *")


def _strip_names(node):
    node = copy.deepcopy(node)
    n = node
    while n is not None:
        if isinstance(n, c_ast.TypeDecl):
            n.declname = None
            break
        if isinstance(n, c_ast.FuncDecl):
            # a function pointer: strip the names of its parameters too
            if n.args is not None:
                for p in n.args.params:
                    if isinstance(p, (c_ast.Decl, c_ast.Typename)):
                        p.name = None
                        p.type = _strip_names(p.type)
        n = getattr(n, "type", None)
    return node


def params_of(funcdecl):
    out = []
    if funcdecl.args is None:
        return out
    for p in funcdecl.args.params:
        if isinstance(p, c_ast.Typename) and type_text(p.type) == "void":
            continue
        out.append({"name": p.name, "type": type_text(p.type)})
    return out


def header_of(node):
    return pathlib.Path(node.coord.file).name if node.coord and node.coord.file else ""


def describe(ast):
    api = {"functions": [], "enums": [], "structs": [], "opaque": [], "callbacks": []}
    for node in ast.ext:
        header = header_of(node)
        if not header.endswith(".h") or header not in {h.name for h in HEADERS.glob("*.h")}:
            continue  # the stand-in libc headers
        if isinstance(node, c_ast.Decl) and isinstance(node.type, c_ast.FuncDecl):
            api["functions"].append({"name": node.name, "header": header,
                                     "returns": type_text(node.type.type),
                                     "params": params_of(node.type)})
        elif isinstance(node, c_ast.Typedef):
            t = node.type
            if isinstance(t, c_ast.PtrDecl) and isinstance(t.type, c_ast.FuncDecl):
                api["callbacks"].append({"name": node.name, "header": header,
                                         "returns": type_text(t.type.type),
                                         "params": params_of(t.type)})
            elif isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.Enum):
                api["enums"].append({"name": node.name, "header": header,
                                     "values": enum_values(t.type)})
            elif isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.Struct):
                s = t.type
                if s.decls is None:
                    api["opaque"].append({"name": node.name, "header": header})
                else:
                    api["structs"].append({"name": node.name, "header": header, "fields": [
                        {"name": d.name, "type": type_text(d.type)} for d in s.decls]})
        elif isinstance(node, c_ast.Decl) and isinstance(node.type, c_ast.Struct):
            s = node.type
            if s.decls is not None:  # a struct defined without a typedef (DLPack's)
                api["structs"].append({"name": "struct " + s.name, "header": header, "fields": [
                    {"name": d.name, "type": type_text(d.type)} for d in s.decls]})
        elif isinstance(node, c_ast.Decl) and isinstance(node.type, c_ast.Enum):
            if node.type.values is not None:
                api["enums"].append({"name": "enum " + node.type.name, "header": header,
                                     "values": enum_values(node.type)})
    return api


def enum_values(enum):
    values, nxt = [], 0
    for e in enum.values.enumerators:
        if e.value is not None:
            nxt = const_int(e.value, {v["name"]: v["value"] for v in values})
        values.append({"name": e.name, "value": nxt})
        nxt += 1
    return values


def const_int(node, known):
    if isinstance(node, c_ast.Constant):
        return int(node.value.rstrip("uUlL"), 0)
    if isinstance(node, c_ast.UnaryOp) and node.op == "-":
        return -const_int(node.expr, known)
    if isinstance(node, c_ast.ID) and node.name in known:
        return known[node.name]
    if isinstance(node, c_ast.BinaryOp):
        a, b = const_int(node.left, known), const_int(node.right, known)
        return {"+": a + b, "-": a - b, "<<": a << b, "|": a | b, "*": a * b}[node.op]
    raise ValueError(f"enum value not understood: {c_generator.CGenerator().visit(node)}")


def render():
    api = describe(c_parser.CParser().parse(preprocess(), "smd.h"))
    # One entry per line: readable, and a change to one declaration is a one-line diff.
    parts = ['{\n "comment": "Generated by scripts/gen-api.py from capi/include/smd/*.h. Do not edit."']
    for key in ("functions", "callbacks", "enums", "structs", "opaque"):
        items = ",\n  ".join(json.dumps(x, separators=(", ", ": ")) for x in api[key])
        parts.append(f' "{key}": [\n  {items}\n ]')
    text = ",\n".join(parts) + "\n}\n"
    symbols = "".join(n + "\n" for n in sorted(f["name"] for f in api["functions"]))
    return text, symbols, swig_handles(api)


def swig_handles(api):
    """The SWIG proxies of the handles: every opaque type T with a T_free(T *) owns its handle
    and frees it in its destructor; T_free itself is not bound (smd_error is the typemaps')."""
    frees = {f["name"] for f in api["functions"]
             if f["name"].endswith("_free") and len(f["params"]) == 1}
    handles = [o["name"] for o in api["opaque"]
               if o["name"] + "_free" in frees and o["name"] != "smd_error"]
    lines = ["/* Generated by scripts/gen-api.py from the public headers (capi/api.json): the",
             " * handles, each an opaque type with a _free function. Do not edit. */"]
    lines += [f"SMD_OWNED_HANDLE({h}, {h}_free)" for h in handles]
    lines += [f"%ignore {h}_free;" for h in handles]
    return "\n".join(lines) + "\n"


def main():
    text, symbols, handles = render()
    outputs = ((API_JSON, text), (SYMBOLS, symbols), (SWIG_HANDLES, handles))
    if "--check" in sys.argv:
        stale = [p for p, t in outputs
                 if not p.exists() or p.read_text() != t]
        for p in stale:
            print(f"{p.relative_to(ROOT)} is stale: run scripts/gen-api.py")
        sys.exit(1 if stale else 0)
    for path, content in outputs:
        path.write_text(content)
    print(f"{len(json.loads(text)['functions'])} functions")


if __name__ == "__main__":
    main()
