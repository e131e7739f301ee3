"""The house rules, checked on the source tree: pipeline/ runs without Airflow, no import
cycles, files stay readable, the stage names live in the stage table only, and nothing cites a
document the repository does not hold."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from pipeline.stages import STAGES

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"pipeline": ROOT / "pipeline", "rosetta_airflow": ROOT / "plugins" / "rosetta_airflow"}


def _modules() -> dict[str, Path]:
    found = {}
    for package, folder in PACKAGES.items():
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            name = ".".join((package, *parts[:-1])) if parts[-1] == "__init__" else ".".join((package, *parts))
            found[name] = path
    return found


def _imports(path: Path, module: str) -> set[str]:
    """Every module a file imports, at the top or inside a function (absolute names)."""
    names: set[str] = set()
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def test_pipeline_never_imports_airflow_or_the_plugins():
    offenders = {}
    for module, path in _modules().items():
        if not module.startswith("pipeline"):
            continue
        bad = {n for n in _imports(path, module) if n.split(".")[0] in ("airflow", "rosetta_airflow")}
        if bad:
            offenders[module] = sorted(bad)
    assert offenders == {}


def test_pipeline_runs_without_airflow_installed():
    """Importing every pipeline module with airflow made unimportable still works."""
    modules = sorted(m for m in _modules() if m.startswith("pipeline"))
    code = ("import sys\nsys.modules['airflow'] = None\nsys.modules['rosetta_airflow'] = None\n"
            f"import importlib\nfor m in {modules!r}:\n    importlib.import_module(m)\nprint('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]


def test_no_import_cycles():
    modules = _modules()
    graph = {m: {n for n in _imports(p, m) if n in modules and n != m} for m, p in modules.items()}
    # a module that imports a package also runs its __init__, but that adds no edge back.
    visiting: list[str] = []
    done: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        if node in done:
            return
        if node in visiting:
            cycles.append(visiting[visiting.index(node):] + [node])
            return
        visiting.append(node)
        for target in sorted(graph[node]):
            visit(target)
        visiting.pop()
        done.add(node)

    for node in sorted(graph):
        visit(node)
    assert cycles == []


def test_no_pipeline_file_is_longer_than_450_lines():
    long = {str(p.relative_to(ROOT)): n for p in (ROOT / "pipeline").rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 450}
    assert long == {}


def test_stage_names_are_listed_in_the_stage_table_only():
    """No file but the table holds three or more stage names as a list of string literals."""
    names = {s.name for s in STAGES}
    table = ROOT / "pipeline" / "stages" / "__init__.py"
    listed = re.compile(r"""(["'])(%s)\1""" % "|".join(sorted(names)))
    offenders = {}
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()
    for name in files:
        path = ROOT / name
        if path == table or path.suffix not in (".py", ".sh", ".yaml", ".yml", ".cfg") or not path.exists():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if len({m.group(2) for m in listed.finditer(line)}) >= 3:
                offenders[f"{name}:{number}"] = line.strip()
    assert offenders == {}


def test_nothing_cites_a_design_document_outside_the_repository():
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()
    citing = [name for name in files if (ROOT / name).is_file() and name != "tests/test_house.py"
              and "DESIGN.md" in (ROOT / name).read_text(encoding="utf-8", errors="replace")]
    assert citing == []
