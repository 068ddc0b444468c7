"""The learner's multi_head_attention drives the trained model (lesson/build/): top 5 and a greedy continuation.

Each step of the continuation is one job of the learner's function (its own
5-second stop), all in one fresh Python, and the rest of the model runs in the
tail graph (models/four_heads.tail.onnx); the model's own continuation comes
from the teaching graph. A correct function must
reproduce the model's top 5 and its continuation; a function without √d must not.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.browser.build.test_build_page import CHECK_JS, open_page
from tests.pyodide.test_build_exercise import MISTAKES, solution

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[3]
DRIVE_JS = "(source) => window.mhaBuild.drive(source)"


def prompts() -> list[str]:
    """Short; with a rare word (the vocabulary's least frequent word, its last alphabetic entry); the longest allowed."""
    itos = json.loads((ROOT / "wasm_assets" / "vocab.json").read_text())["itos"]
    rare = next(t for t in reversed(itos) if t.isalpha())
    return [
        "lily",
        f"the little girl saw a {rare}",
        "once upon a time there was a little girl named lily . she liked to",
    ]


def unlock_all(page):
    for name in ["project", "split_heads", "scores", "causal_softmax", "blend", "multi_head_attention"]:
        assert page.evaluate(CHECK_JS, [name, solution()])["passed"], name


def test_the_learners_attention_reproduces_the_models_top_5_and_continuation(make_page, base_url):
    page, watch = make_page(viewport={"width": 1280, "height": 900})
    open_page(page, base_url)
    unlock_all(page)
    for text in prompts():
        assert page.evaluate("(t) => window.mhaBuild.setPrompt(t)", text) is True, text
        out = page.evaluate(DRIVE_JS, solution())
        assert [t["id"] for t in out["top"]["mine"]] == [t["id"] for t in out["top"]["model"]], (text, out["top"])
        assert out["mine"] == out["model"] and out["same"], (text, out)
        assert len(out["model"]) > 0
    watch.check()


def test_dropping_the_root_changes_the_continuation_and_restoring_it_agrees_again(make_page, base_url):
    page, watch = make_page(viewport={"width": 390, "height": 844}, color_scheme="dark")
    open_page(page, base_url)
    unlock_all(page)
    _, make, _, _ = MISTAKES["mha_unscaled"]
    out = page.evaluate(DRIVE_JS, make())
    assert not out["same"] and out["mine"] != out["model"], out
    assert "write something other than its own attention does" in page.locator(".mha-build__driver").inner_text()
    out = page.evaluate(DRIVE_JS, solution())
    assert out["same"], out
    # Without the mask every row but the last changes: the page asks why nothing changed.
    _, make, _, _ = MISTAKES["mha_future_not_masked"]
    out = page.evaluate(DRIVE_JS, make())
    assert out["question"] and out["same"], out
    assert page.locator(".mha-build__why summary").is_visible()
    watch.check()


def test_a_word_that_runs_too_long_is_stopped_and_the_next_check_gets_a_fresh_python(make_page, base_url):
    """The continuation's words are jobs of one Python, each with its own 5-second stop."""
    page, watch = make_page(viewport={"width": 1280, "height": 900})
    open_page(page, base_url)
    assert page.evaluate("(t) => window.mhaBuild.setPrompt(t)", "lily") is True  # BOS lily: 2 rows
    unlock_all(page)
    # Right on 2 and 3 rows (the Checks, the first two words), a loop without end from the third word on.
    looping = solution() + (
        "\n_right = multi_head_attention\n\n\ndef multi_head_attention(E, weights, n_heads):\n"
        "    while len(E) > 3:\n        pass\n    return _right(E, weights, n_heads)\n"
    )
    said = page.evaluate("(s) => window.mhaBuild.drive(s).then(() => '', (err) => err.message)", looping)
    assert said.startswith("Stopped: your code ran for more than 5 seconds"), said
    assert "could not drive the model: Stopped" in page.locator(".mha-build__driver").inner_text()
    assert page.evaluate(CHECK_JS, ["multi_head_attention", solution()])["passed"]
    assert page.evaluate(DRIVE_JS, solution())["same"]
    watch.check()
