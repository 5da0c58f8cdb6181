"""Every public name of the smd package has a docstring and an entry in the package's type stubs
(.pyi files, shipped with py.typed)."""
import ast
import importlib
import inspect
from pathlib import Path

import pytest

import smd

# The public modules. smd.smdc is the SWIG layer (C names, internal to the package) and is left out.
MODULES = ["smd", "smd.analysis", "smd.analysis.utils", "smd.collection_keys", "smd.core", "smd.core.collection", "smd.core.modes", "smd.core.reduction_config",
           "smd.core.save_config", "smd.core.tensor", "smd.exceptions", "smd.hook",
           "smd.modes", "smd.reduction_config", "smd.rules", "smd.rules.action", "smd.rules.generic",
           "smd.rules.rule", "smd.rules.rule_invoker", "smd.save_config", "smd.tensor", "smd.trials",
           "smd.trials.trial"]
PACKAGE = Path(smd.__file__).parent


def _stub_path(modname):
    rel = Path(*modname.split(".")[1:])
    pkg = PACKAGE / rel / "__init__.pyi"
    return pkg if pkg.exists() else PACKAGE / rel.with_suffix(".pyi") if modname != "smd" else PACKAGE / "__init__.pyi"


def _stub_names(modname):
    """{top-level name: set of member names} declared in the module's stub."""
    tree = ast.parse(_stub_path(modname).read_text())
    names = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            members = set()
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    members.add(sub.name)
                elif isinstance(sub, ast.AnnAssign) and isinstance(sub.target, ast.Name):
                    members.add(sub.target.id)
                elif isinstance(sub, ast.Assign):
                    members.update(t.id for t in sub.targets if isinstance(t, ast.Name))
            names[node.name] = members
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names[node.name] = set()
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = set()
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    names[t.id] = set()
        elif isinstance(node, ast.ImportFrom) and node.names[0].name == "*":
            names.update(_stub_names(node.module))
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                if a.asname and a.asname == a.name:  # explicit re-export: `import X as X`
                    names[a.name] = set()
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    names[a.asname] = set()
    return names


def _public_names(mod):
    assert hasattr(mod, "__all__"), f"{mod.__name__} has no __all__"
    if hasattr(mod, "__all__"):
        return list(mod.__all__)
    out = []
    for name, obj in vars(mod).items():
        if name.startswith("_"):
            continue
        if inspect.ismodule(obj):
            if obj.__name__.startswith(mod.__name__ + "."):
                out.append(name)  # a submodule
            continue
        defined_here = getattr(obj, "__module__", mod.__name__) == mod.__name__
        if defined_here or mod.__name__ in ("smd", "smd.core.modes") or not callable(obj):
            if not callable(obj) and getattr(type(obj), "__module__", "") == "typing":
                continue
            out.append(name)
    return out


def _public_members(cls):
    for name, obj in vars(cls).items():
        if name.startswith("_") or name in ("rule_name",):
            continue
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        if inspect.isfunction(obj) or isinstance(obj, property):
            yield name, obj


@pytest.mark.parametrize("modname", MODULES)
def test_every_public_name_has_a_docstring_and_a_stub(modname):
    mod = importlib.import_module(modname)
    assert mod.__doc__ and mod.__doc__.strip(), f"{modname} has no module docstring"
    stub = _stub_names(modname)
    missing_doc, missing_stub = [], []
    for name in _public_names(mod):
        obj = getattr(mod, name)
        if name not in stub:
            missing_stub.append(name)
        if inspect.ismodule(obj):
            continue
        if inspect.isclass(obj) or inspect.isfunction(obj):
            if not (obj.__doc__ and obj.__doc__.strip()):
                missing_doc.append(name)
        if inspect.isclass(obj) and getattr(obj, "__module__", "") == modname:
            for member, mobj in _public_members(obj):
                doc = mobj.__doc__
                if not (doc and doc.strip()):
                    missing_doc.append(f"{name}.{member}")
                if name in stub and member not in stub[name]:
                    missing_stub.append(f"{name}.{member}")
    assert not missing_doc, f"{modname}: no docstring: {missing_doc}"
    assert not missing_stub, f"{modname}: not in {_stub_path(modname).name}: {missing_stub}"


def test_the_package_is_typed():
    assert (PACKAGE / "py.typed").exists()


def test_the_generic_stub_lists_every_builtin_rule():
    from smd.rules import builtin_rule_names
    stub = _stub_names("smd.rules.generic")
    assert set(builtin_rule_names()) <= set(stub)
