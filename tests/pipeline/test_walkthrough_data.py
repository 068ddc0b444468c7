"""walkthrough.json (page 4) belongs to the shipped checkpoint and matches a fresh computation."""

from __future__ import annotations

import json
import math

import pytest

from tests.tolerance import assert_close_tree, assert_same_ranking


@pytest.fixture(scope="module")
def walk(assets_dir):
    path = assets_dir / "walkthrough.json"
    ckpt = assets_dir / "checkpoints/four_heads-seed11.pt"
    if not (path.is_file() and ckpt.is_file()):
        pytest.skip("walkthrough.json or the checkpoint is missing: run `python -m export walkthrough`")
    return json.loads(path.read_text()), ckpt


def test_walkthrough_is_from_the_shipped_checkpoint(walk):
    from export.digest import file_sha256 as sha256

    data, ckpt = walk
    assert data["checkpoint_sha256"] == sha256(ckpt), (
        "wasm_assets/walkthrough.json is stale (the checkpoint changed): run `python -m export walkthrough`"
    )


def test_walkthrough_equals_a_fresh_computation(walk, assets_dir):
    """Discrete parts (shapes, masks, ids, tokens) exactly; floats within float32 tolerance.

    The rows' matrices are stored rounded to ``ROUND`` decimals, so a fresh value
    that differs by a few float32 ulps may round to the neighbouring last digit:
    those paths get one unit of the last kept decimal as their tolerance.
    """
    from export.lesson.walkthrough import ROUND, batch_walkthrough

    data, ckpt = walk
    fresh = json.loads(json.dumps(batch_walkthrough(ckpt, assets_dir / "vocab.json", assets_dir / "evidence.json")))
    unrounded = {"loss", "target_probability", "top"}
    measured = {"final_query_path_max_diff", "final_query_attention_max_diff"}  # float error itself: bounded below

    def rounded_tolerance(path: str) -> float | None:
        parts = path.replace("[", ".").split(".")
        return None if unrounded & set(parts) else 10.0**-ROUND * 1.001

    for key in data.keys() - measured - {"rows", "generation"}:
        assert_close_tree(fresh[key], data[key], path=key)
    assert len(fresh["rows"]) == len(data["rows"])
    for a, b in zip(fresh["rows"], data["rows"]):
        assert_same_ranking(a["top"], b["top"])
        assert_close_tree(
            {k: v for k, v in a.items() if k != "top"},
            {k: v for k, v in b.items() if k != "top"},
            abs_for=rounded_tolerance,
            path="row",
        )
    gen_fresh, gen_data = fresh.get("generation"), data.get("generation")
    assert (gen_fresh is None) == (gen_data is None)
    if gen_data:
        assert_same_ranking(gen_fresh["top"], gen_data["top"])
        assert_close_tree(
            {k: v for k, v in gen_fresh.items() if k != "top"},
            {k: v for k, v in gen_data.items() if k != "top"},
            path="generation",
        )
    for key in measured:
        assert fresh[key] < 1e-4 and data[key] < 1e-4, key


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
