"""One runtime, any number of exercises: a throwaway third exercise, one file served to the page, checked in Pyodide.

The file is served at pyodide/exercises/third.py by the test alone (page.route); the
page's runner (microgpt/runner.js) is given it as its exercise, beside the shared
calls.py, exactly as the build page gives build_attention.py.
"""

from __future__ import annotations

import pytest

from tests.pyodide.test_build_exercise import THIRD

pytestmark = pytest.mark.browser

RUN_THIRD_JS = """async ([base, good, bad]) => {
  const { PythonRunner, workerFiles } = await import(base + "js/microgpt/runner.js");
  const runner = new PythonRunner({}, { ...workerFiles(), checkerURL: base + "pyodide/calls.py", exerciseURL: base + "pyodide/exercises/third.py" });
  const inputs = { function: "double", calls: [[2.0], [5.0]], tokens: [], n_heads: 1 };
  const expected = JSON.stringify({ outputs: [4.0, 10.0] });
  const right = (c) => !c.failed && JSON.stringify(c.outputs) === JSON.stringify([4, 10]);
  const results = [];
  for (const source of [good, bad]) {
    const r = await runner.check(source, inputs, (c) => (right(c) ? false : { expected }));
    results.push({ outputs: r.outputs, passed: right(r), message: r.message });
  }
  runner.dispose();
  return results;
}"""


def test_a_throwaway_third_exercise_runs_from_its_one_file(make_page, base_url):
    page, watch = make_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(90000)
    page.route(
        "**/pyodide/exercises/third.py",
        lambda route: route.fulfill(status=200, body=THIRD, content_type="text/x-python"),
    )
    page.goto(base_url + "credits/")
    good, bad = page.evaluate(
        RUN_THIRD_JS, [base_url, "def double(x):\n    return 2 * x\n", "def double(x):\n    return x + 2\n"]
    )
    assert good["passed"] and good["message"] == "", good
    assert not bad["passed"] and bad["outputs"] == [4, 7], bad
    idea, where, code = bad["message"].split("\x1e")
    assert "the check wants [4, 10]" in idea and code == "return 2 * x"  # (JSON from the page: 4.0 is 4)
    watch.check()
