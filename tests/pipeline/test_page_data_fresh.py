"""page_data.json (``python -m export pagedata``) is up to date with the files it was computed from."""

from __future__ import annotations

import pytest

from export.artefacts import Artefacts
from export.lesson import page_data
from tests.tolerance import assert_close_tree


def test_page_data_inputs_are_unchanged_since_it_was_written():
    art = Artefacts()
    if not art.page_data.is_file():
        pytest.fail(f"{art.page_data} is missing: run `python -m export pagedata`")
    stale = page_data.stale_inputs(art)
    assert not stale, (
        f"page_data.json is stale: {', '.join(stale)} changed since it was written; "
        "run `python -m export pagedata` and commit wasm_assets/page_data.json"
    )


@pytest.mark.slow
def test_page_data_recomputed_now_equals_the_committed_file(load_asset):
    committed = load_asset("page_data.json")
    fresh = page_data.build(Artefacts())
    assert fresh.keys() == committed.keys()
    assert fresh["inputs"] == committed["inputs"]
    for key in ("toy", "results", "mask", "heads"):
        assert fresh[key] == committed[key], key  # discrete, or arithmetic on the evidence: exact
    coat_f, coat_c = fresh["coat"], committed["coat"]
    assert {k: v for k, v in coat_f.items() if k != "weights"} == {k: v for k, v in coat_c.items() if k != "weights"}
    assert_close_tree(coat_f["weights"], coat_c["weights"])  # ONNX floats: within the stated tolerance
