"""The modules of export/ import one another without a cycle, lazy imports inside functions included.

A lazy import hides a cycle from Python (nothing fails at import time) but not
from whoever reads the code: data flows one way, stories -> ... -> evidence ->
site, and each module may use only what comes before it. So this test reads
every ``import`` statement of every module (at any depth, not only the top),
and the stage graph's ``module:function`` references too (export/stages.py
imports each stage's module only when the stage runs), and fails on a cycle,
naming it.
"""

from __future__ import annotations

import ast
from pathlib import Path

from export import stages

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "export"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def resolve(importer: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    is_package = MODULES[importer].name == "__init__.py"
    base = importer.split(".")[: len(importer.split(".")) - node.level + (1 if is_package else 0)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(name: str) -> set[str]:
    """Every module of export/ that ``name`` imports, anywhere in its body."""
    found = set()
    for node in ast.walk(ast.parse(MODULES[name].read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = resolve(name, node)
            # `from . import atomic` imports the module export.atomic; `from .x import y` imports export.x
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        found |= {t for t in targets if t in MODULES and t != name}
    return found


def graph() -> dict[str, set[str]]:
    edges = {name: imports_of(name) for name in MODULES}
    for stage in stages.GRAPH:
        for ref in (stage.run, stage.command):
            if ref:
                edges["export.stages"].add(ref.partition(":")[0])
    return edges


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_import_graph_of_export_has_no_cycle():
    cycle = find_cycle(graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_reader_sees_lazy_imports_and_stage_references():
    """The test itself: an import inside a function counts, and so does a stage's module."""
    edges = graph()
    assert "export.corpus" in edges["export.stages"]  # Context.get_corpus imports it inside a method
    assert "export.heads" in edges["export.stages"]  # only named as "export.heads:stage"
    assert "export.onnx_weights" in edges["export.teaching_graph"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_nothing_imports_the_command_line_entry_point():
    """The stages, options and commands live in their modules; __main__ only wires the parser to them."""
    importers = [name for name, targets in graph().items() if "export.__main__" in targets]
    assert importers == []
