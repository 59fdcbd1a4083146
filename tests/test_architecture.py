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


def imported_modules(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


@pytest.mark.parametrize("package", PURE_PACKAGES)
def test_pure_core_source_imports_no_web_layer(package):
    files = sorted((ROOT / package).rglob("*.py"))
    assert files, f"{package} has no modules"
    offences = []
    for path in files:
        for line, module in imported_modules(path):
            top = module.split(".")[0]
            if top in WEB_LAYER or (top == "twin" and not module.startswith(ALLOWED_TWIN_MODULES)):
                offences.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert not offences, "the pure core imports the web layer:\n" + "\n".join(offences)


def test_pure_core_loads_without_web_layer():
    """Importing the core in a fresh interpreter pulls in none of the web layer, even indirectly."""
    probe = (
        "import sys, importlib.util\n"
        "import twin.simcore.model, twin.simcore.generate, twin.simcore.hops, twin.simcore.simulate, twin.ingest, twin.traces\n"
        f"web = {WEB_LAYER!r}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in web))\n"
    )
    # `twin/__init__` exposes the Celery app, so load the core packages without it.
    loader = (
        "import sys, types, pathlib\n"
        f"package = types.ModuleType('twin'); package.__path__ = [{str(ROOT / 'twin')!r}]\n"
        "sys.modules['twin'] = package\n"
    )
    result = subprocess.run([sys.executable, "-c", loader + probe], capture_output=True, text=True, cwd=ROOT, check=True)
    assert result.stdout.strip() == "[]", result.stdout


def test_architecture_check_catches_an_offence(tmp_path):
    """The check itself works: a module importing django is reported."""
    bad = tmp_path / "bad.py"
    bad.write_text("import numpy\nfrom django.db import models\n")
    assert (2, "django.db") in imported_modules(bad)
