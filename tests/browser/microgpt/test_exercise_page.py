"""The microgpt page in headless Chromium: heatmaps, the live model, and the
multi_head exercise run in real Pyodide (in a Web Worker) and judged by the page.

Every page fails its test on a console error, an uncaught exception or a
request to another origin (tests/browser_util.PageWatch). One page at phone
width in dark mode serves most checks, so Pyodide starts only a few times.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest

from tests.browser_util import PageWatch
from tests.site_paths import built_file
from tests.pyodide.test_checker_without_browser import MISTAKES, line_of, solution, starter

ROOT = Path(__file__).resolve().parents[3]


def variants() -> dict[str, str]:
    sources = {name: make() for name, (make, _, _) in MISTAKES.items()}
    sources["loop"] = solution().replace("out.extend(blended)", "while True:\n            pass")
    return sources


pytestmark = pytest.mark.browser

WAIT_EXERCISE_JS = """async () => {
  for (let i = 0; i < 800 && !window.mhaExercise; i++) await new Promise((r) => setTimeout(r, 25));
  if (!window.mhaExercise) throw new Error("window.mhaExercise never appeared");
  return await window.mhaExercise.ready;
}"""
WAIT_MODEL_JS = """async () => {
  for (let i = 0; i < 800 && !window.mhaMicrogpt; i++) await new Promise((r) => setTimeout(r, 25));
  return await window.mhaMicrogpt.ready;
}"""
CHECK_JS = "(source) => window.mhaExercise.check(source)"


def open_microgpt(page, base_url: str, wait_python: bool = True):
    page.set_default_timeout(60000)
    page.goto(base_url + "microgpt/")
    page.evaluate(WAIT_MODEL_JS)
    return page.evaluate(WAIT_EXERCISE_JS) if wait_python else None


def timed_check(page, source: str):
    started = time.monotonic()
    verdict = page.evaluate(CHECK_JS, source)
    return verdict, time.monotonic() - started


@pytest.fixture(scope="module")
def phone_page(browser, servers):
    """The page on the isolated server, 390 px wide, dark colour scheme; Python ready."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, color_scheme="dark")
    page = context.new_page()
    watch = PageWatch(page)
    info = open_microgpt(page, servers["isolated"])
    yield page, watch, info
    try:
        watch.check()
    finally:
        context.close()


def test_every_mistake_gets_its_message_in_pyodide(phone_page):
    """Every row of the mistake table, submitted in real Pyodide: only the right answer passes."""
    page, _, info = phone_page
    assert info["isolated"] is True and info["python"].startswith("3.")
    sources = variants()
    for name, (_, pattern, needle) in MISTAKES.items():
        verdict, _ = timed_check(page, sources[name])
        assert verdict["passed"] is (name == "correct"), (name, verdict)
        if name == "correct":
            assert (
                verdict["message"].startswith("Passed!") and "after attn_wo the 16 numbers match" in verdict["message"]
            )
            continue
        assert re.search(pattern, verdict["message"], re.S), (name, verdict["message"])
        if needle:
            assert re.search(rf"\b[Ll]ine {line_of(sources[name], needle)}\b", verdict["message"]), (
                name,
                verdict["message"],
            )


def test_runaway_code_is_interrupted_and_python_survives(phone_page):
    page, _, _ = phone_page
    verdict, _ = timed_check(page, variants()["loop"])
    assert verdict["timedOut"] and not verdict["passed"]
    assert "more than 5 seconds" in verdict["message"] and "still running" in verdict["message"]
    # How long it took is the benchmark's business (bench/pyodide_bench.py): each job waits for a fresh
    # worker, whose start depends on the machine. Here: the time limit stopped it, by an interrupt.
    stop = page.evaluate("() => window.mhaExercise.lastStop()")
    assert stop["how"] == "interrupt" and stop["why"] == "time", stop
    page.wait_for_function("() => window.mhaExercise.lastStop().readyAt !== null")
    verdict, _ = timed_check(page, solution())
    assert verdict["passed"], verdict
    # Run streams prints and reports errors with the learner's line numbers.
    result = page.evaluate("(s) => window.mhaExercise.run(s)", "print('hello from', 6 * 7)\nx = [][1]\n")
    assert result["ok"] is False and 'File "exercise.py", line 2, in <module>' in result["error"]
    assert "hello from 42" in page.inner_text(".mgpt-ex__output")


# What learner code may do to the sandbox: none of it may pass a wrong answer,
# and after each the official solution passes without a reload.
_BLANKET = """import sys
names = ["json", "math", "os", "re", "traceback", "linecache", "gc", "types", "sandbox", "diagnosis",
         "sys", "builtins"]
mods = [sys.modules[n] for n in names]
for m in mods:
    for attr in [a for a in vars(m) if not a.startswith("__")]:
        try:
            setattr(m, attr, lambda *a, **k: 0)
        except Exception:
            pass
"""
ATTACKS = {
    "switch_off_the_explainer": "import diagnosis\ndiagnosis.explain = lambda *a, **k: ''\n"
    "diagnosis._all_right = lambda *a: True\n",
    "replace_every_attribute": _BLANKET,
    "forge_a_message": "import js\njs.postMessage({'type': 'done', 'result': {'outputs': [], 'message': ''}})\n",
    "close_the_worker": "import js\njs.close()\n",
    "delete_the_model": "import os\nos.remove('microgpt-trained.json')\n",
    "overwrite_the_model": "open('microgpt-trained.json', 'w').write('{}')\n",
    "replace_sum": "import builtins\nbuiltins.sum = lambda *a: 0\n",
    "replace_exp": "import math\nmath.exp = lambda x: 1.0\n",
    "replace_json_load": "import json\njson.load = lambda f: {}\n",
    "swap_function_code": "import json\njson.loads.__code__ = (lambda *a, **k: 0).__code__\n",
    "sys_exit": "import sys\nsys.exit()\n",
    "break_the_library": "import os\nos.remove('/lib/python314.zip')\n",
}


def test_no_code_can_forge_or_break_the_verdict(phone_page):
    page, _, _ = phone_page
    wrong = variants()["scale_head_dim"]
    for name, attack in ATTACKS.items():
        for source in (attack + wrong, wrong + "\n" + attack):
            verdict, _ = timed_check(page, source)
            assert not verdict["passed"], (name, verdict)
        page.evaluate("(s) => window.mhaExercise.run(s)", attack)
        verdict, _ = timed_check(page, solution())
        assert verdict["passed"], (name, verdict)
    # The test hook goes through the same judge: it cannot pass a wrong answer either.
    verdict = page.evaluate("async (s) => { const v = await window.mhaExercise.check(s); return v; }", wrong)
    assert not verdict["passed"] and "divided by HEAD_DIM" in verdict["message"]


def test_each_stop_says_why(phone_page):
    page, _, _ = phone_page
    run = "(s) => window.mhaExercise.run(s)"
    result = page.evaluate(run, "import time\ntime.sleep(0.01)\nraise KeyboardInterrupt\n")
    # the learner's own KeyboardInterrupt is an error of theirs, not the time limit
    assert "KeyboardInterrupt" in result["error"] and not result.get("timedOut"), result
    assert "seconds" not in result["error"] and 'File "exercise.py", line 3' in result["error"]
    result = page.evaluate(run, "class Odd(BaseException):\n    pass\nraise Odd('no')\n")
    assert 'File "exercise.py", line 3' in result["error"] and "sandbox" not in result["error"], result
    result = page.evaluate(run, "print('before')\nimport sys\nsys.exit()\nprint('after')\n")
    assert "called exit() at line 3" in result["error"]
    output = page.inner_text(".mgpt-ex__output")
    assert "before" in output and "after" not in output
    # Output is cut at 20,000 characters, however it is printed, and the tab survives.
    for source in ("for i in range(10**6):\n    print(i)\n", "print('x' * 10**8)\n"):
        page.evaluate(run, source)
        shown = page.evaluate("() => document.querySelector('.mgpt-ex__output').textContent.length")
        assert shown <= 21000, shown
        assert "output cut here" in page.inner_text(".mgpt-ex__output")
    # Memory that grows without end: stopped, with a line saying why, and the next job works.
    # Which stop comes first depends on how fast the machine grows WebAssembly memory: the
    # MemoryError (Python restarted, "memory"), or the time limit, whose interrupt may land
    # while Python still answers (timedOut, restarted False: that worker is retired all the same).
    result = page.evaluate(run, "big = []\nwhile True:\n    big.append(bytearray(10**8))\n")
    said = (result.get("error", "") + result.get("notice", "")).lower()
    if result.get("timedOut"):
        assert result["stop"] == "time" and "more than 5 seconds" in said, result
    else:
        assert result["restarted"] and "memory" in said, result
    verdict, _ = timed_check(page, solution())
    assert verdict["passed"], verdict
    # After a pass the output box does not show an earlier Run's prints.
    assert "before" not in page.inner_text(".mgpt-ex__output")
    # Restart Python: a fresh interpreter, ready again.
    page.get_by_role("button", name="Restart Python").click()
    page.wait_for_function("() => document.querySelector('.mgpt-ex__status').dataset.phase === 'loading'")
    page.evaluate(WAIT_EXERCISE_JS)
    verdict, _ = timed_check(page, solution())
    assert verdict["passed"], verdict


def test_js_attention_equals_python_forward_attention(phone_page):
    from export.microgpt import forward_attention, load_trained, sample_names

    page, _, _ = phone_page
    model = load_trained("wasm_assets/microgpt-trained.json")
    fields = ("head_weights", "single_head_weights", "heads_out", "attn_out", "probs", "q", "keys", "values")
    for name in ("emma", "kristopher", "zoe", "abcdefghijklmno"):
        want = forward_attention(model["weights"], model["uchars"], name)
        got = page.evaluate("(n) => window.mhaMicrogpt.forward(n)", name)
        assert got["tokens"] == want["tokens"] and got["labels"] == want["labels"]
        for field in fields:
            a, b = _flat(got[field]), _flat(want[field])
            assert len(a) == len(b), (name, field)
            worst = max(abs(x - y) for x, y in zip(a, b))
            assert worst <= 1e-12, (name, field, worst)
    for n, temperature, seed in ((6, 0.5, 42), (5, 1.3, 7)):
        got = page.evaluate("(o) => window.mhaMicrogpt.sample(o)", {"n": n, "temperature": temperature, "seed": seed})
        assert got == sample_names(model["weights"], model["uchars"], n=n, temperature=temperature, seed=seed)


def _flat(value):
    if isinstance(value, list):
        return [x for item in value for x in _flat(item)]
    return [float(value)]


def test_heatmaps_names_and_phone_layout(phone_page):
    page, _, _ = phone_page
    watch = page.locator("[data-mha-widget='microgpt-watch']")
    maps = watch.locator(".mgpt-watch__maps")
    assert maps.get_attribute("data-name") == "emma"
    assert watch.locator("table.mgpt-heat").count() == 4
    assert watch.locator("table.mgpt-heat").first.locator("tbody tr").count() == 5  # start marker + 4 letters
    # The cells use the shared viridis map and hold the weights as text for screen readers.
    first_row = watch.locator("table.mgpt-heat").first.locator("tbody tr").first
    assert first_row.locator("td.mgpt-heat__cell").count() == 1
    assert first_row.locator("td.mgpt-heat__cell").inner_text().strip() == "1.00"
    name_box = watch.get_by_label("Name")
    name_box.fill("olivia")
    assert maps.get_attribute("data-name") == "olivia"
    assert watch.locator("table.mgpt-heat").first.locator("tbody tr").count() == 7
    watch.get_by_role("button", name="1 head × 16 numbers").click()
    assert watch.locator("table.mgpt-heat").count() == 1
    assert maps.get_attribute("data-view") == "one"
    watch.get_by_role("button", name="4 heads × 4 numbers").click()
    assert watch.locator("table.mgpt-heat").count() == 4
    message = watch.locator(".mgpt-field__message")
    for bad in ("emma2", "abcdefghijklmnop", "", "zoë"):
        name_box.fill(bad)
        assert message.inner_text().strip(), bad
        assert name_box.get_attribute("aria-invalid") == "true"
        assert maps.get_attribute("data-name") == "olivia", bad  # the last good name stays
    name_box.fill("emma2")
    assert "a–z" in message.inner_text() and "2" in message.inner_text()
    name_box.fill(" Zoe ")  # capitals and spaces are forgiven: the model reads "zoe"
    assert message.inner_text().strip() == "" and maps.get_attribute("data-name") == "zoe"
    name_box.fill("olivia")
    name_box.fill("abcdefghijklmnop")
    assert "at most 15" in message.inner_text()
    name_box.fill("abcdefghijklmno")
    assert message.inner_text().strip() == "" and maps.get_attribute("data-name") == "abcdefghijklmno"
    # Explore: bars after a prefix, and sampled names.
    explore = page.locator("[data-mha-widget='microgpt-explore']")
    explore.locator("[data-chart='heads'] .mgpt-bars__col").first.wait_for()  # built once Python is ready
    assert explore.locator("[data-chart='heads'] .mgpt-bars__col").count() == 27  # and 27 for the probe
    explore.get_by_role("button", name="em", exact=True).click()
    assert explore.locator("[data-chart='heads']").get_attribute("data-prefix") == "em"
    assert explore.locator(".mgpt-samples li").count() == 10
    # Phone width: nothing pushes the page sideways; dark mode is on.
    overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1, overflow
    assert page.evaluate("() => document.body.getAttribute('data-md-color-scheme')") == "slate"
    background = page.evaluate("() => getComputedStyle(document.querySelector('.cm-editor')).backgroundColor")
    assert _luminance(background) < 0.35, background


def _luminance(css_colour: str) -> float:
    r, g, b = (int(v) for v in re.findall(r"\d+", css_colour)[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


def test_runaway_code_restarts_python_without_isolation(make_page, servers):
    page, _ = make_page()
    info = open_microgpt(page, servers["plain"])
    assert info["isolated"] is False
    verdict, _ = timed_check(page, variants()["loop"])
    assert verdict["timedOut"] and "restarted" in verdict["message"]
    page.evaluate(WAIT_EXERCISE_JS)
    assert page.evaluate("() => window.mhaExercise.lastStop()")["how"] == "restart"
    verdict, _ = timed_check(page, solution())
    assert verdict["passed"], verdict


def editor_text(page) -> str:
    """The whole text in the editor (CodeMirror only draws the lines in view)."""
    page.wait_for_selector(".cm-editor")
    return page.evaluate("() => window.mhaExercise.getCode()")


def _replace_line(page, contains: str, text: str) -> None:
    """Edit the editor line holding `contains` the way a learner would: go there, select it, type over it.

    CodeMirror only draws the lines in view, so the cursor travels with the arrow keys; lines never
    wrap, and Home and End go to the start and end of the whole line, so the indent is typed again."""
    code = page.evaluate("() => window.mhaExercise.getCode()")
    number = line_of(code, contains)
    line = code.splitlines()[number - 1]
    page.locator(".cm-content").click()
    page.keyboard.press("Control+Home")
    for _ in range(2 * number):
        if page.evaluate("() => window.mhaExercise.cursorLine()") == number:
            break
        page.keyboard.press("ArrowDown")
    assert page.evaluate("() => window.mhaExercise.cursorLine()") == number
    page.keyboard.press("End")
    page.keyboard.press("Home")
    page.keyboard.press("Shift+End")
    page.keyboard.insert_text(line[: len(line) - len(line.lstrip())] + text)


def test_solve_in_editor_reload_and_clear(make_page, servers):
    """Under a sub-path: type the answer, Check, reload (progress kept), clear."""
    page, watch = make_page()
    open_microgpt(page, servers["subpath"])
    assert all("/some/lesson/" in u for u in watch.requests if "/vendor/pyodide/" in u)
    exercise = page.locator("[data-mha-widget='microgpt-exercise']")
    assert exercise.get_by_label("Python code of the multi_head exercise").count() == 1
    _replace_line(page, "k_h = keys", "k_h = [k[start:start + HEAD_DIM] for k in keys]")
    _replace_line(page, "v_h = values", "v_h = [v[start:start + HEAD_DIM] for v in values]")
    _replace_line(
        page, "# BLANK 2", "blended = [sum(weight * v[j] for weight, v in zip(w, v_h)) for j in range(HEAD_DIM)]"
    )
    _replace_line(page, "# in out, so out ends with", "out.extend(blended)")
    exercise.get_by_role("button", name="Run").click()
    page.wait_for_function("() => document.querySelector('.mgpt-ex__output').textContent.includes('after attn_wo')")
    assert "out has 16 items" in page.inner_text(".mgpt-ex__output")
    exercise.get_by_role("button", name="Check").click()
    page.wait_for_selector(".mgpt-ex__verdict[data-passed='true']")
    assert "Passed!" in page.inner_text(".mgpt-ex__verdict")
    source = page.locator("[data-mha-widget='microgpt-source']")
    count = source.locator(".mgpt-src__count")
    learned, total = int(count.get_attribute("data-learned")), int(count.get_attribute("data-total"))
    assert f"{learned} / {total} lines learned" in count.inner_text()
    assert source.locator(".mgpt-src__line--mha").count() >= 10
    # The editor saves its text a moment after the last change: wait until the saved copy has it.
    page.wait_for_function("""() => (localStorage.getItem('mha-microgpt-progress') || '')
        .includes('out.extend(blended)')""")

    page.reload()
    page.evaluate(WAIT_MODEL_JS)
    page.wait_for_selector(".cm-editor")
    content = editor_text(page)
    assert "k[start:start + HEAD_DIM] for k in keys" in content and "out.extend(blended)" in content
    assert "solved this exercise earlier" in page.inner_text(".mgpt-ex__verdict")
    assert int(count.get_attribute("data-learned")) == learned
    assert "Exercise: solved" in page.inner_text(".mgpt-progress__summary")

    page.get_by_role("button", name="Clear my progress").click()
    assert "k_h = keys" in editor_text(page)
    assert int(count.get_attribute("data-learned")) < learned
    assert page.evaluate("() => localStorage.getItem('mha-microgpt-progress')") is None
    page.reload()
    page.wait_for_selector(".cm-editor")
    assert "k_h = keys" in editor_text(page)
    assert "Exercise: not solved yet" in page.inner_text(".mgpt-progress__summary")


def test_show_solution_after_three_failed_checks(phone_page):
    page, _, _ = phone_page
    exercise = page.locator("[data-mha-widget='microgpt-exercise']")
    page.get_by_role("button", name="Clear my progress").click()
    button = exercise.get_by_role("button", name="Show solution")
    assert not button.is_visible()
    assert "k_h = keys" in editor_text(page)  # the starter: Check fails
    for n in (1, 2, 3):
        exercise.get_by_role("button", name="Check").click()
        page.wait_for_function(
            "(n) => (JSON.parse(localStorage.getItem('mha-microgpt-progress') || '{}').failedChecks || 0) >= n", arg=n
        )
        assert button.is_visible() is (n == 3)
    assert "Nothing is added to out yet" in page.inner_text(".mgpt-ex__verdict")
    button.click()
    assert "k[start:start + HEAD_DIM] for k in keys" in editor_text(page)
    exercise.get_by_role("button", name="Reset").click()
    assert editor_text(page).count("k_h = keys") == 1
    assert starter().splitlines()[0] in editor_text(page)


def test_tab_leaves_the_editor_and_types_nothing(phone_page):
    page, _, _ = phone_page
    before = page.evaluate("() => window.mhaExercise.getCode()")
    page.locator(".cm-content").focus()
    page.keyboard.press("Tab")
    inside = page.evaluate("() => Boolean(document.activeElement.closest('.cm-editor'))")
    assert not inside
    assert page.evaluate("() => window.mhaExercise.getCode()") == before
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("() => Boolean(document.activeElement.closest('.cm-editor'))")
    assert page.evaluate("() => window.mhaExercise.getCode()") == before


def test_explore_seed_messages(phone_page):
    page, _, _ = phone_page
    explore = page.locator("[data-mha-widget='microgpt-explore']")
    seed = explore.get_by_label("Seed")
    note = explore.locator(".mgpt-explore__note")
    seed.fill("7")
    explore.get_by_role("button", name="Sample 10 names").click()
    assert "seed 7" in note.inner_text() and note.get_attribute("data-kind") == "info"
    colour = page.evaluate("(n) => getComputedStyle(n).color", note.element_handle())
    red, green, _ = (int(v) for v in re.findall(r"\d+", colour)[:3])
    assert not (red > 180 and green < 160), colour  # a confirmation is not painted as an error
    settings = explore.locator(".mgpt-samples").get_attribute("data-settings")
    seed.fill("")
    explore.get_by_role("button", name="Sample 10 names").click()
    assert "Type a seed" in note.inner_text() and note.get_attribute("data-kind") == "error"
    assert explore.locator(".mgpt-samples").get_attribute("data-settings") == settings  # nothing resampled


def test_unlocked_view_is_the_one_page_file(phone_page):
    from export.microgpt import SOURCE, multi_head_line_range

    page, _, _ = phone_page
    source = page.locator("[data-mha-widget='microgpt-source']")
    lines = SOURCE.read_text().splitlines()
    count = source.locator(".mgpt-src__count")
    assert int(count.get_attribute("data-total")) == len(lines) <= 250
    first, last = multi_head_line_range()
    marked = [
        int(n) for n in source.locator(".mgpt-src__line--mha").evaluate_all("(ls) => ls.map((l) => l.dataset.line)")
    ]
    assert marked == list(range(first, last + 1))
    # Solved earlier on this page, so the exercise's lines show, as microgpt.py has them.
    blanks = source.locator(".mgpt-src__line--blank .mgpt-src__text").all_inner_texts()
    assert [b.split("#")[0].strip() for b in blanks] == [
        "k_h = [k[start:start + head_dim] for k in keys]",
        "v_h = [v[start:start + head_dim] for v in values]",
        "blended = [sum(weight * v[j] for weight, v in zip(w, v_h)) for j in range(head_dim)]",
        "out.extend(blended)",
    ]


def _damaged_site(built_site: Path, tmp_path: Path, change) -> Path:
    """A copy of the built site (hard links) with one file changed by ``change(site)``."""
    copy = tmp_path / "site"
    shutil.copytree(built_site, copy, copy_function=os.link)
    change(copy)
    return copy


def _serve(site: Path):
    from export.serve import serve_in_thread

    return serve_in_thread(site, isolation=True)


def test_missing_runtime_file_is_named_within_seconds(make_page, built_site, tmp_path):
    site = _damaged_site(built_site, tmp_path, lambda s: built_file(s, "vendor/pyodide/pyodide.asm.wasm").unlink())
    server, url = _serve(site)
    try:
        page, _ = make_page(allow_console=(r"404", r"Failed to load resource"))
        page.goto(url + "microgpt/")
        started = time.monotonic()
        page.wait_for_function(
            "() => document.querySelector('.mgpt-ex__status')?.dataset.phase === 'error'", timeout=15000
        )
        assert time.monotonic() - started < 10
        text = page.inner_text(".mgpt-ex__status")
        assert "pyodide.asm.wasm" in text and "404" in text, text
        # The rest works (Watch may still be building: the worker names the file before Watch is drawn).
        page.locator("[data-mha-widget='microgpt-watch'] table.mgpt-heat").first.wait_for()
        assert page.locator("[data-mha-widget='microgpt-watch'] table.mgpt-heat").count() == 4
    finally:
        server.shutdown()
        server.server_close()


def test_damaged_model_gives_one_line_in_words(make_page, built_site, tmp_path):
    site = _damaged_site(
        built_site, tmp_path, lambda s: _replace(s / "wasm_assets/microgpt-trained.json", b"{not json")
    )
    server, url = _serve(site)
    try:
        page, _ = make_page(allow_console=(r"not valid JSON",))
        page.goto(url + "microgpt/")
        page.wait_for_function(
            "() => document.querySelector('.mgpt-ex__status')?.dataset.phase === 'error'", timeout=60000
        )
        text = page.inner_text(".mgpt-ex__status")
        assert "microgpt-trained.json" in text and "not valid JSON" in text, text
        assert "Traceback" not in text and "\n" not in text.strip()
        # (The exercise's worker starts from the page's head, so it may fail before the Watch widget has.)
        page.wait_for_function(
            """() => document.querySelector("[data-mha-widget='microgpt-watch']")
            .textContent.includes('not valid JSON')""",
            timeout=60000,
        )
        watch = page.inner_text("[data-mha-widget='microgpt-watch']")
        assert "not valid JSON" in watch and "Traceback" not in watch
    finally:
        server.shutdown()
        server.server_close()


def _replace(path: Path, data: bytes) -> None:
    path.unlink()  # a hard link: replace, never write through
    path.write_bytes(data)


def test_leaving_the_page_disposes_the_exercise(make_page, servers):
    page, _ = make_page()
    open_microgpt(page, servers["isolated"], wait_python=False)
    page.wait_for_function("() => Boolean(window.mhaExercise && window.mhaMicrogpt)")
    page.locator("a[href$='credits/']").first.click()  # Material's instant navigation: no reload
    page.wait_for_function("() => !window.mhaExercise && !window.mhaMicrogpt", timeout=15000)
    assert page.evaluate("() => document.querySelectorAll('.cm-editor').length") == 0


AXE = Path(os.environ.get("AXE_CORE_JS") or ROOT / "node_modules/axe-core/axe.min.js")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_microgpt_widgets_have_no_serious_axe_violations(make_page, servers, scheme):
    if not AXE.is_file():
        pytest.skip("axe-core is not installed (node_modules/axe-core/axe.min.js)")
    page, _ = make_page(viewport={"width": 390, "height": 844}, color_scheme=scheme)
    open_microgpt(page, servers["isolated"])
    page.locator("[data-mha-widget='microgpt-source'] .mgpt-src").wait_for()
    page.add_script_tag(content=AXE.read_text())
    found = []
    # axe judges the colours of what is drawn: scroll the listing and the editor through.
    for top in range(0, 6000, 600):
        page.evaluate(
            "(t) => { for (const b of document.querySelectorAll('.mgpt-src, .cm-scroller')) b.scrollTop = t; }", top
        )
        found += page.evaluate("""async () => {
          const r = await axe.run('.mgpt-widget', { resultTypes: ['violations'] });
          return r.violations.filter((v) => ['serious', 'critical'].includes(v.impact))
            .map((v) => ({ id: v.id, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
        }""")
    assert found == [], found
