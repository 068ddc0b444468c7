"""The pipeline's stages form a declared graph: inputs before outputs, evidence assembled last."""

from __future__ import annotations

import ast
from pathlib import Path

from export import stages
from export.__main__ import build_parser

ROOT = Path(__file__).resolve().parents[2]


def test_every_input_is_written_by_an_earlier_stage():
    stages.check_order()


def test_each_stage_has_one_output_and_reruns_alone_as_a_command():
    outputs = [s.output for s in stages.GRAPH]
    assert len(outputs) == len(set(outputs))
    commands = build_parser()._subparsers._group_actions[0].choices
    for stage in stages.GRAPH:
        assert stage.name in commands, f"stage {stage.name} has no `python -m export {stage.name}`"


def test_evidence_is_assembled_after_every_measuring_stage():
    names = [s.name for s in stages.GRAPH]
    readers = {s.name for s in stages.GRAPH if "evidence.json" in s.inputs}
    assert names.index("evidence") == max(i for i, n in enumerate(names) if n not in readers)
    assert all(names.index(r) > names.index("evidence") for r in readers)


def test_only_the_evidence_module_writes_evidence_json():
    """No stage rewrites the evidence after the fact (the heads stage once did, through a refresh)."""
    for path in sorted((ROOT / "export").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if path.name == "evidence.py":
            continue
        calls = {
            node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.Call)
        }
        assert not calls & {"refresh", "assemble"} or path.name == "stages.py", path
    assert not hasattr(__import__("export.evidence").evidence, "refresh")
