"""Imports run one way (docs/architecture.md): a module never imports a layer above its own."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Each package (or module) and the packages it must never import, at any depth of the file.
FORBIDDEN = {
    "memory_core": ("api", "portal", "config"),
    "api": ("portal", "config"),
    "portal": ("api", "config"),
    "memory_core.models": (
        "memory_core.services", "memory_core.selectors", "memory_core.admission",
        "memory_core.retrieval", "memory_core.deletion", "memory_core.evaluation",
    ),
    "memory_core.text": ("memory_core.models", "memory_core.services", "memory_core.selectors"),
    "memory_core.admission": ("memory_core.services", "memory_core.selectors"),
    "memory_core.selectors": ("memory_core.services",),
}  # fmt: skip
# Operator commands may reach the deployment's own parts in config (the embedded server, the
# WSGI application), as manage.py does; nothing else below config imports it.
COMMANDS_MAY_IMPORT = "config"


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, top level or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def files_of(package: str) -> list[Path]:
    base = ROOT.joinpath(*package.split("."))
    if base.with_suffix(".py").is_file():
        return [base.with_suffix(".py")]
    return [path for path in base.rglob("*.py") if "migrations" not in path.parts]


def _is_command(path: Path) -> bool:
    return path.parent.name == "commands" and path.parent.parent.name == "management"


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_module_imports_a_layer_above_its_own(package):
    files = files_of(package)
    assert files, package
    crossings = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in files
        for name in sorted(imported_modules(path))
        if any(name == above or name.startswith(f"{above}.") for above in FORBIDDEN[package])
        and not (_is_command(path) and name.split(".")[0] == COMMANDS_MAY_IMPORT)
    ]
    assert crossings == []
