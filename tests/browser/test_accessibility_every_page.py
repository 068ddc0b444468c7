"""axe-core on every page of the built site, light and dark: no serious or critical violation.

axe-core is the npm package pinned in package-lock.json (devDependencies); its
script is injected into each page after the page's widgets have mounted. The
palette is chosen the way a learner's system chooses it (``color_scheme`` of
the browser context), and the test checks that Material applied it.

Two pages are marked xfail (not strict) while their own engineers finish
their widgets: the compare page (``aria-prohibited-attr`` on the three
continuation boxes, site_src/js/compare/) and the microgpt page (CodeMirror's
gutter contrast and the editor's and code listing's scroll regions,
site_src/js/microgpt/). Remove the marks once those land.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser_util import wait_ready

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "node_modules/axe-core/axe.min.js"
PAGES = [
    "",
    "lesson/1-why-more-heads/",
    "lesson/2-multihead-operation/",
    "lesson/3-training-examples/",
    "lesson/4-model-training-generation/",
    "lesson/build/",
    "lesson/5-results/",
    "lesson/how-measured/",
    "compare/",
    "microgpt/",
    "credits/",
]


def _params():
    for scheme in ("light", "dark"):
        for path in PAGES:
            yield pytest.param(path, scheme, id=f"{path or 'home'}-{scheme}")


def _audit(page) -> list[str]:
    if not AXE.is_file():
        pytest.fail(f"{AXE.relative_to(ROOT)} is missing: run `npm ci` (axe-core is pinned in package-lock.json)")
    page.add_script_tag(content=AXE.read_text())
    found = page.evaluate("""async () => {
      const result = await axe.run(document, { resultTypes: ["violations"] });
      return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
        .map((v) => `${v.id} (${v.impact}, ${v.nodes.length}): ` +
             v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(" | "));
    }""")
    return found


@pytest.mark.parametrize("path,scheme", list(_params()))
def test_no_serious_accessibility_violations(make_page, base_url, path, scheme):
    page, watch = make_page(color_scheme=scheme, viewport={"width": 1280, "height": 900})
    page.set_default_timeout(60000)
    page.goto(base_url + path)
    if path == "compare/":
        wait_ready(page)
    page.wait_for_load_state("networkidle")
    # Widgets replace their "loading" placeholders when they have mounted.
    page.wait_for_function("() => !document.querySelector('[data-mha-widget] .mha-noscript')")
    if path == "lesson/build/":  # the editor and the prompt's rows come once the exercise has loaded
        page.wait_for_function("() => window.mhaBuild")
        page.evaluate("() => window.mhaBuild.ready.then(() => true)")
    if path == "microgpt/":  # Explore is built once the exercise's Python is ready (python_first.js)
        page.locator("[data-mha-widget='microgpt-explore'] .mgpt-compare").wait_for()
    expected = "slate" if scheme == "dark" else "default"
    assert page.evaluate("document.body.getAttribute('data-md-color-scheme')") == expected
    violations = _audit(page)
    assert not violations, f"{path or 'home'} ({scheme}):\n" + "\n".join(violations)
    watch.check()


def test_material_dialog_and_progress_bar_have_names(built_site):
    """Fixed in the theme's partials (site_src/overrides/partials/), not hidden from the audit."""
    text = (built_site / "index.html").read_text()
    assert 'class="md-search" data-md-component="search" role="dialog" aria-label="' in text
    assert 'role="progressbar" aria-label="' in text


def test_quiz_by_keyboard_shows_a_focus_ring(make_page, base_url):
    page, watch = make_page(color_scheme="dark")
    page.goto(base_url + "lesson/5-results/")
    quiz = page.locator(".mha-quiz").first
    quiz.locator("form").wait_for()
    quiz.locator("input[type=radio]").first.focus()
    outline = page.evaluate("""() => {
      const label = document.activeElement.closest('label');
      const s = getComputedStyle(label);
      return [s.outlineStyle, s.outlineWidth];
    }""")
    assert outline[0] != "none" and outline[1] != "0px", outline
    watch.check()
