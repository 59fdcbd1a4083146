"""The pure core (simulation and parsers) must not depend on the web layer."""
import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PURE_PACKAGES = ("twin/simcore", "twin/ingest", "twin/traces", "twin/operations", "twin/replay", "twin/whatif")
WEB_LAYER = ("django", "celery", "channels", "channels_redis", "daphne", "rest_framework", "drf_spectacular", "redis")
ALLOWED_TWIN_MODULES = ("twin.simcore", "twin.ingest", "twin.traces", "twin.operations", "twin.replay", "twin.whatif")


DYNAMIC = "<a name computed at run time>"


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, root: Path = ROOT) -> list[tuple[int, str]]:
    """Every module the file imports, with its line: absolute and relative imports (resolved
    against the file's package), and `importlib.import_module` or `__import__` calls (DYNAMIC
    when the name is not a literal, which no check could vouch for)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package.split(".")[: len(package.split(".")) - (node.level - 1)])
            if node.module:
                found.append((node.lineno, f"{base}.{node.module}"))
            else:  # `from .. import runs`: each name may be a module
                found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Call) and dynamic_import_call(node.func):
            argument = node.args[0] if node.args else None
            literal = isinstance(argument, ast.Constant) and isinstance(argument.value, str)
            found.append((node.lineno, argument.value if literal else DYNAMIC))
    return found


def dynamic_import_call(function: ast.expr) -> bool:
    return (isinstance(function, ast.Name) and function.id in {"__import__", "import_module"}) or (
        isinstance(function, ast.Attribute) and function.attr == "import_module"
    )


def offences_in(path: Path, root: Path = ROOT) -> list[str]:
    offences = []
    for line, module in imported_modules(path, root):
        top = module.split(".")[0]
        if module == DYNAMIC or top in WEB_LAYER or (top == "twin" and not module.startswith(ALLOWED_TWIN_MODULES)):
            offences.append(f"{path.relative_to(root)}:{line} imports {module}")
    return offences


@pytest.mark.parametrize("package", PURE_PACKAGES)
def test_pure_core_source_imports_no_web_layer(package):
    files = sorted((ROOT / package).rglob("*.py"))
    assert files, f"{package} has no modules"
    offences = [offence for path in files for offence in offences_in(path)]
    assert not offences, "the pure core imports the web layer:\n" + "\n".join(offences)


def test_every_pure_module_loads_without_web_layer():
    """Importing every module of the core in a fresh interpreter pulls in none of the web layer,
    even indirectly (a module the source check cannot see through, e.g. a plugin registry)."""
    modules = sorted(module_name(path, ROOT) for package in PURE_PACKAGES for path in (ROOT / package).rglob("*.py"))
    probe = (
        "import sys, importlib\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        f"web = {WEB_LAYER!r}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in web))\n"
    )
    # `twin/__init__` exposes the Celery app, so load the core packages without it.
    loader = (
        "import sys, types, pathlib\n"
        f"package = types.ModuleType('twin'); package.__path__ = [{str(ROOT / 'twin')!r}]\n"
        "sys.modules['twin'] = package\n"
    )
    result = subprocess.run([sys.executable, "-c", loader + probe], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]", result.stdout


def test_architecture_check_catches_an_offence(tmp_path):
    """The check itself works: absolute, relative and dynamic imports of the web layer are reported."""
    package = tmp_path / "twin" / "operations"
    package.mkdir(parents=True)
    bad = package / "bad.py"
    bad.write_text(
        "import numpy\nfrom django.db import models\nfrom ..runs import realtime\nfrom .. import fabrics\n"
        "from . import placement\nimport importlib\nimportlib.import_module('twin.runs.tasks')\n"
        "__import__(name)\n"
    )
    assert offences_in(bad, tmp_path) == [
        "twin/operations/bad.py:2 imports django.db",
        "twin/operations/bad.py:3 imports twin.runs",
        "twin/operations/bad.py:4 imports twin.fabrics",
        "twin/operations/bad.py:7 imports twin.runs.tasks",
        f"twin/operations/bad.py:8 imports {DYNAMIC}",
    ]
