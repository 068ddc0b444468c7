"""The exercise's answers are computed by the page: microgpt/verdict.js exerciseCases() equals Python's.

The page judges a Check against exerciseCases(model), computed in its own thread
from the trained model with microgpt/model.js; no file holds them. This holds the
JavaScript twin to export.microgpt.exercise_cases, case for case, within float64
tolerance (two maths libraries may round exp and pow differently in the last bit).
"""

from __future__ import annotations

import pytest

from tests.tolerance import FLOAT64_REL, assert_close_tree

pytestmark = pytest.mark.browser

CASES_JS = """async () => {
  const root = new URL("../", document.baseURI);
  const { exerciseCases, inputsOf } = await import(new URL("js/microgpt/verdict.js", root).href);
  const model = await (await fetch(new URL("wasm_assets/microgpt-trained.json", root))).json();
  const doc = exerciseCases(model);
  return { doc, inputs: inputsOf(doc) };
}"""


def test_the_page_computes_microgpts_answers(make_page, base_url):
    from export.microgpt import exercise_cases, load_trained
    from export.microgpt.site import CASES_FORMAT

    page, _ = make_page()
    page.goto(base_url + "microgpt/")
    got = page.evaluate(CASES_JS)
    want = exercise_cases(load_trained("wasm_assets/microgpt-trained.json"))
    assert want.pop("format") == CASES_FORMAT
    doc = got["doc"]
    assert [(c["name"], c["pos"]) for c in doc["cases"]] == [(c["name"], c["pos"]) for c in want["cases"]]
    assert {k: doc[k] for k in ("n_head", "head_dim", "tolerance", "names")} == {
        k: want[k] for k in ("n_head", "head_dim", "tolerance", "names")
    }
    assert_close_tree(doc, want, rel=FLOAT64_REL, abs_=1e-15)
    # The worker gets the inputs and nothing else.
    assert all(set(c) == {"name", "pos", "q", "keys", "values"} for c in got["inputs"]["cases"])
    assert set(got["inputs"]) == {"n_head", "head_dim", "attn_wo", "cases"}
