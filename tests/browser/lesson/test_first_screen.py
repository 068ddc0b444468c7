"""The home page's first screen: the four-head model on the running sentence, drawn without a download, then live.

Drawn at build time from ``page_data.json``'s ``running`` part (site_src/hooks/page_macros/running.py);
the button makes it live (site_src/js/home/first_screen.js) with the compare page's runtime.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.browser.test_accessibility_every_page import _audit

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("require_models")]

HEAVY = re.compile(r"\.onnx$|/vendor/ort/")
FIG = "#fig-first-screen"


def _itos(assets_dir):
    return json.loads((assets_dir / "vocab.json").read_text())["itos"]


def test_first_screen_is_drawn_with_no_download_and_says_the_live_size(make_page, base_url, load_asset, built_site):
    running = load_asset("page_data.json")["running"]
    page, watch = make_page(viewport={"width": 390, "height": 844})
    page.goto(base_url)
    fig = page.locator(FIG)
    fig.locator(".mha-first__live:enabled").wait_for()
    page.wait_for_load_state("networkidle")
    assert not [u for u in watch.requests if HEAVY.search(u)], "the first screen downloaded a model or the runtime"
    # Above the fold on a phone: the figure's table and its button are inside the first screen.
    for part in (".mha-first__table", ".mha-first__live"):
        box = fig.locator(part).bounding_box()
        assert box and box["y"] + box["height"] <= 844 and box["x"] >= 0 and box["x"] + box["width"] <= 390, (part, box)
    assert fig.locator(".mha-first__word").inner_text() == running["guess"]
    assert fig.locator("tbody tr").count() == len(running["weights"])
    # The size the button announces is what live mode fetches: the model, vocabulary, manifest and
    # onnxruntime's WebAssembly build, as this build holds them.
    manifest = json.loads((built_site / "wasm_assets/models/manifest.json").read_text())
    model = next(m for m in manifest["models"] if m["name"] == running["model"])
    ort = [
        p
        for p in (built_site / "vendor/ort").rglob("*")
        if p.name in ("ort.wasm.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm")
    ]
    assert len(ort) == 3
    size = (
        model["bytes"]
        + (built_site / "wasm_assets/vocab.json").stat().st_size
        + (built_site / "wasm_assets/models/manifest.json").stat().st_size
        + sum(p.stat().st_size for p in ort)
    )
    assert f"downloads {size / 1e6:.1f} MB" in fig.locator(".mha-first__live").inner_text()


def test_live_by_keyboard_a_head_switched_off_changes_the_guess(make_page, base_url, load_asset, assets_dir):
    from export.lesson.running_sentence import read

    running = load_asset("page_data.json")["running"]
    itos = _itos(assets_dir)
    changed = [w for w in running["without"] if w["changed"]]
    assert changed, "the running sentence was chosen so that one head's knock-out changes the guess"
    page, watch = make_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(90000)
    page.goto(base_url)
    button = page.locator(f"{FIG} .mha-first__live:enabled")
    button.focus()
    page.keyboard.press("Enter")
    page.wait_for_function(f"() => document.querySelector('{FIG}').dataset.state === 'live'")
    guess = page.locator(f"{FIG} .mha-first__guess")
    assert guess.get_attribute("data-guess") == str(itos.index(running["guess"]))
    # The sentence box has the focus; Tab reaches the head switches, Space switches one off.
    head = changed[0]["head"]
    box = page.locator(f"{FIG} input[type=checkbox][data-head='{head}']")
    box.focus()
    page.keyboard.press("Space")
    want = str(itos.index(changed[0]["guess"]))
    page.wait_for_function(
        f"() => document.querySelector('{FIG} .mha-first__guess').dataset.guess === '{want}'"
        f" && document.querySelector('{FIG}').dataset.state === 'live'"
    )
    assert guess.get_attribute("data-full") == str(itos.index(running["guess"]))
    assert f"without head {head}" in guess.inner_text()
    assert page.locator(f"{FIG} tbody tr.mha-first__off").count() == 1

    # A sentence of the learner's own, with that head still off: the guess is onnxruntime's for Python.
    sentence = "tom had a big red ball and"
    text = page.locator(f"{FIG} input[type=text]")
    text.fill(sentence)
    expected = read(
        (assets_dir / "models/four_heads.onnx").read_bytes(),
        itos,
        json.loads((assets_dir / "vocab.json").read_text())["T"],
        sentence,
        len(running["weights"]),
    )
    want_off = str(itos.index(expected["without"][head - 1]["guess"]))
    page.wait_for_function(
        f"() => document.querySelector('{FIG} .mha-first__guess').dataset.guess === '{want_off}'"
        f" && document.querySelector('{FIG} .mha-first__guess').dataset.full === "
        f"'{itos.index(expected['guess'])}'"
    )
    assert page.locator(f"{FIG} thead th").count() == len(expected["tokens"])
    assert not _audit(page), "the live first screen has accessibility violations"

    # Odd input: nothing typed reads BOS alone; more words than the context keeps the last T slots.
    T = json.loads((assets_dir / "vocab.json").read_text())["T"]
    text.fill("")
    page.wait_for_function(f"() => document.querySelector('{FIG} thead').querySelectorAll('th').length === 1")
    assert "With no sentence" in guess.inner_text()
    text.fill(" ".join(["the little dog ran"] * 30))
    page.wait_for_function(f"() => document.querySelector('{FIG} thead').querySelectorAll('th').length === {T}")
    watch.check()


def test_a_missing_model_is_said_once_in_words_and_the_figure_stays(make_page, base_url):
    from tests.site_paths import route_pattern

    page, _ = make_page(allow_console=(r"Failed to load resource",))
    page.route(
        route_pattern("wasm_assets/models/four_heads.onnx"), lambda route: route.fulfill(status=404, body="gone")
    )
    page.goto(base_url)
    page.locator(f"{FIG} .mha-first__live:enabled").click()
    alert = page.locator(f"{FIG} [role=alert]")
    alert.wait_for(timeout=15000)
    assert alert.count() == 1
    text = alert.inner_text()
    assert "four_heads.onnx" in text and "Reload" in text, text
    assert not re.search(r"Traceback|undefined|\[object |Aborted\(", text), text
    assert page.locator(f"{FIG} .mha-first__table").is_visible()  # the drawn figure is still there
    assert page.locator(f"{FIG}").get_attribute("data-state") == "failed"


REVIEW_SENTENCE = "the little dog ran to the park with his ball and he was"
ONE_OFF = re.compile(
    r"^Next-word guess \(without head (\d)\): (\S+) \(\d+\.\d%\)\. "
    r"(?:With all heads it was (\S+) \(\d+\.\d%\)\.|With all heads: the same word, at \d+\.\d%\.)$"
)


def _go_live(page, base_url):
    page.set_default_timeout(90000)
    page.goto(base_url)
    page.locator(f"{FIG} .mha-first__live:enabled").click()
    page.wait_for_function(f"() => document.querySelector('{FIG}').dataset.state === 'live'")


def _settled(page, words: int, off: int | None = None) -> None:
    """Wait until the table has `words` columns (with start) and the guess is for the heads now ticked."""
    label = f"without head {off}" if off else "all heads"
    page.wait_for_function(f"""() => {{
      const fig = document.querySelector('{FIG}');
      return fig.dataset.state === 'live' && fig.querySelectorAll('thead th').length === {words}
        && fig.querySelector('.mha-first__guess').textContent.includes('({label})');
    }}""")


def test_live_guess_reads_as_a_sentence_whether_or_not_a_head_changes_it(make_page, base_url, assets_dir):
    # A head whose loss leaves the guess as it is once read "The same as with all headsnull (7.1%)."
    page, watch = make_page(viewport={"width": 390, "height": 844})
    _go_live(page, base_url)
    page.locator(f"{FIG} input[type=text]").fill(REVIEW_SENTENCE)
    words = len(REVIEW_SENTENCE.split()) + 1
    _settled(page, words)
    itos = _itos(assets_dir)
    guess = page.locator(f"{FIG} .mha-first__guess")
    seen = set()
    for head in range(1, 5):
        box = page.locator(f"{FIG} input[type=checkbox][data-head='{head}']")
        box.uncheck()
        _settled(page, words, off=head)
        text = " ".join(guess.inner_text().split())
        match = ONE_OFF.match(text)
        assert match and int(match.group(1)) == head, text
        same = guess.get_attribute("data-guess") == guess.get_attribute("data-full")
        seen.add(same)
        assert match.group(2) == itos[int(guess.get_attribute("data-guess"))], text
        if not same:
            assert match.group(3) == itos[int(guess.get_attribute("data-full"))], text
        box.check()
        _settled(page, words)
    assert True in seen, "no head of this sentence leaves the guess as it is: choose another sentence"
    watch.check()


@pytest.mark.parametrize("width", [1280, 390])
def test_live_table_labels_sit_on_their_rows_and_the_receiver_stays_in_view(make_page, base_url, width):
    page, watch = make_page(viewport={"width": width, "height": 900})
    _go_live(page, base_url)
    page.locator(f"{FIG} input[type=text]").fill(REVIEW_SENTENCE)
    words = len(REVIEW_SENTENCE.split()) + 1
    _settled(page, words)
    page.locator(f"{FIG} input[type=checkbox][data-head='4']").uncheck()
    _settled(page, words, off=4)
    # Each row's label is level with that row's percentages (the line a reader follows across).
    rows = page.evaluate(f"""() => [...document.querySelectorAll('{FIG} tbody tr')].map((tr) => {{
      const mid = (r) => (r.top + r.bottom) / 2;
      const label = tr.querySelector('th .mha-first__swatch').getBoundingClientRect();
      const pcts = [...tr.querySelectorAll('.mha-first__pct')].map((p) => mid(p.getBoundingClientRect()));
      return [tr.querySelector('th').textContent, mid(label), Math.min(...pcts), Math.max(...pcts)];
    }})""")
    for name, label, lo, hi in rows:
        assert lo - 3 <= label <= hi + 3, f"{name}: label at {label:.0f} px, its percentages at {lo:.0f}-{hi:.0f} px"
    # The receiver (the last word, what the figure is about) is in view without scrolling the table.
    boxes = page.evaluate(f"""() => {{
      const r = (e) => {{ const b = e.getBoundingClientRect(); return [b.left, b.right]; }};
      const fig = document.querySelector('{FIG}');
      return {{ receiver: r(fig.querySelector('thead th.mha-first__receiver')),
                scroll: r(fig.querySelector('.mha-first__scroll')),
                label: r(fig.querySelector('tbody th')),
                page: [document.documentElement.scrollWidth, window.innerWidth] }};
    }}""")
    (left, right), (s_left, s_right) = boxes["receiver"], boxes["scroll"]
    assert s_left - 1 <= left and right <= s_right + 1, f"the receiver's column is scrolled off: {boxes}"
    assert left >= boxes["label"][1] - 1, f"the receiver's column is under the row labels: {boxes}"
    assert boxes["page"][0] <= boxes["page"][1], f"the page scrolls sideways: {boxes}"
    assert not _audit(page), "the live first screen has accessibility violations"
    watch.check()
