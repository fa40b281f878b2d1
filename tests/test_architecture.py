"""The import contracts of the layout (README, "Architecture"), checked over the source's AST.

- The engine imports only the standard library (and itself).
- Apps import one way: audit ← apitokens ← wallet ← games ← settlement; an app imports none to its right.
- backoffice (presentation infrastructure) imports none of the apps, nor the site or benchmarks;
  core (the shared kernel: errors, model updates, money) and dbutils (database helpers of no app)
  import none of our packages.
- Domain modules (models, services, selectors, locks, tasks, …) import no presentation: not the
  admin, api, forms, views, templatetags or exports of any app, nor backoffice.
- No app imports the site package or the benchmarks.
- No module outside migrations is over 600 lines.
"""

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# monitoring reads every app (the metrics' selectors, their signals) and none imports it.
APP_ORDER = ["audit", "apitokens", "wallet", "games", "settlement", "approvals", "alerts", "webhooks", "monitoring"]
KERNEL = {"core", "dbutils"}  # below every app; each imports none of our packages
OURS = {*APP_ORDER, "backoffice", *KERNEL, "baccarat_site", "benchmarks"}
PRESENTATION_PARTS = {"admin", "api", "forms", "views", "templatetags", "exports", "dashboard"}
DOMAIN_MODULES = {"models", "services", "selectors", "locks", "tasks", "writes", "aggregates", "receivers",
                  "signals", "choices", "validators", "fields", "chain", "context", "errors", "actions", "checks",
                  "rtp", "signing"}
MAX_LINES = 600


def source_files(*packages):
    for package in packages:
        yield from sorted((ROOT / package).rglob("*.py"))


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path) -> set:
    """Every module a file imports, absolute (relative imports resolved), at any depth of the file."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module
            found.add(prefix)
            found.update(f"{prefix}.{alias.name}" for alias in node.names)
    return found


def top(module: str) -> str:
    return module.split(".")[0]


def is_presentation(module: str) -> bool:
    return top(module) == "backoffice" or any(part in PRESENTATION_PARTS for part in module.split("."))


def is_domain(module: str) -> bool:
    parts = module.split(".")
    return top(module) in APP_ORDER and len(parts) == 2 and parts[1] in DOMAIN_MODULES


def test_the_engine_imports_only_the_standard_library():
    engine_files = list(source_files("games/engine"))
    assert engine_files
    for path in engine_files:
        for module in imported_modules(path):
            assert top(module) in sys.stdlib_module_names or module.startswith("games.engine"), (
                f"{module_name(path)} imports {module}")


@pytest.mark.parametrize("app", APP_ORDER)
def test_an_app_imports_only_the_apps_below_it(app):
    later = set(APP_ORDER[APP_ORDER.index(app) + 1:]) | {"baccarat_site", "benchmarks"}
    for path in source_files(app):
        wrong = sorted(module for module in imported_modules(path) if top(module) in later)
        assert not wrong, f"{module_name(path)} imports {wrong}"


def test_backoffice_imports_none_of_the_apps():
    for path in source_files("backoffice"):
        wrong = sorted(module for module in imported_modules(path) if top(module) in OURS - {"backoffice", *KERNEL})
        assert not wrong, f"{module_name(path)} imports {wrong}"


@pytest.mark.parametrize("package", sorted(KERNEL))
def test_the_kernel_imports_none_of_our_packages(package):
    paths = list(source_files(package))
    assert paths
    for path in paths:
        wrong = sorted(module for module in imported_modules(path) if top(module) in OURS - {package})
        assert not wrong, f"{module_name(path)} imports {wrong}"


def test_domain_modules_import_no_presentation():
    checked = 0
    for app in APP_ORDER:
        for path in source_files(app):
            name = module_name(path)
            if not is_domain(name):
                continue
            checked += 1
            wrong = sorted(module for module in imported_modules(path)
                           if top(module) in OURS and is_presentation(module))
            assert not wrong, f"{name} imports {wrong}"
    assert checked >= 20  # the rule is looked at where it matters


def test_no_module_outside_migrations_is_over_600_lines():
    too_long = []
    for path in source_files(*OURS, "tests"):
        if "migrations" in path.parts:
            continue
        lines = len(path.read_text().splitlines())
        if lines > MAX_LINES:
            too_long.append(f"{path.relative_to(ROOT)}: {lines}")
    assert not too_long


def test_the_checks_see_a_violation():
    """The import reader finds what the contracts look for, relative imports included."""
    engine_rules = ROOT / "games" / "engine" / "rules.py"
    assert "games.engine.cards" in imported_modules(engine_rules)
    assert is_presentation("games.admin.round") and is_presentation("backoffice.api.views")
    assert is_domain("settlement.services") and not is_domain("settlement.admin")
