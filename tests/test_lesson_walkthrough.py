"""walkthrough.json (page 4) belongs to the shipped checkpoint and matches a fresh computation."""
from __future__ import annotations

import json
import math

import pytest


@pytest.fixture(scope="module")
def walk(assets_dir):
    path = assets_dir / "walkthrough.json"
    ckpt = assets_dir / "checkpoints/four_heads-seed11.pt"
    if not (path.is_file() and ckpt.is_file()):
        pytest.skip("walkthrough.json or the checkpoint is missing: run `python -m export walkthrough`")
    return json.loads(path.read_text()), ckpt


def test_walkthrough_is_from_the_shipped_checkpoint(walk):
    from export.lesson.walkthrough import sha256

    data, ckpt = walk
    assert data["checkpoint_sha256"] == sha256(ckpt), (
        "wasm_assets/walkthrough.json is stale (the checkpoint changed): run `python -m export walkthrough`")


def test_walkthrough_equals_a_fresh_computation(walk, assets_dir):
    from export.lesson.walkthrough import batch_walkthrough

    data, ckpt = walk
    fresh = json.loads(json.dumps(batch_walkthrough(ckpt, assets_dir / "vocab.json", assets_dir / "evidence.json")))
    assert fresh["shapes"] == data["shapes"]
    assert math.isclose(fresh["loss"], data["loss"], rel_tol=1e-6)
    for a, b in zip(fresh["rows"], data["rows"]):
        assert a["A"] == b["A"] and a["mask"] == b["mask"] and a["top"] == b["top"]
    assert fresh.get("generation") == data.get("generation")


def test_walkthrough_is_internally_consistent(walk):
    data, _ = walk
    T, h = data["config"]["T"], data["heads"]
    assert data["shapes"]["A"] == [2, h, T, T] and data["shapes"]["logits"] == [2, data["config"]["C"]]
    assert data["final_query_path_max_diff"] < 1e-4 and data["final_query_attention_max_diff"] < 1e-5
    for row in data["rows"]:
        assert all(abs(s - 1) < 1e-3 for s in row["A_final_sum"])
        assert math.isclose(row["loss"], -math.log(row["target_probability"]), rel_tol=1e-5)
        # blocked cells have zero weight; the final receiver reads exactly the real slots shown
        for head in row["A"]:
            for i, line in enumerate(head):
                for j, w in enumerate(line):
                    if row["mask"][i][j]:
                        assert w == 0
    assert math.isclose(data["loss"], sum(r["loss"] for r in data["rows"]) / len(data["rows"]), rel_tol=1e-5)
