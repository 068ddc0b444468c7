"""Shared fixtures: the built site, local servers and one headless Chromium.

The site is built once per session (``mkdocs build --strict`` into a temporary
folder) and served by ``export.serve`` on 127.0.0.1 in background threads:
cross-origin isolated at ``/``, not isolated at ``/``, and isolated under the
sub-path ``/some/lesson/``. Browser tests (marked ``browser``) get a fresh page
that fails the test on any console error or uncaught exception and blocks, and
records, every request to another origin.

``MHA_WASM_ASSETS=/path`` builds the site from another artefact folder (the
hook reads it); by default the real ``wasm_assets/`` is used.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from export.artefacts import assets_dir as _artefact_folder
from tests.browser_util import CHROMIUM, CHROMIUM_ARGS, PageWatch

ROOT = Path(__file__).resolve().parents[1]

ASSETS = _artefact_folder()
SUB_PATH = "/some/lesson/"
# One build date for every site this session builds (each build's environment inherits it):
# sitemap.xml.gz, and sw.js, which lists its revision, carry the date, so two builds on either
# side of midnight would differ otherwise. `make test` sets it to the last commit's.
os.environ.setdefault("SOURCE_DATE_EPOCH", str(int(time.time())))


def _assets_or_skip(*names: str) -> list[Path]:
    paths = [ASSETS / n for n in names]
    missing = [str(p.relative_to(ASSETS.parent)) for p in paths if not p.is_file()]
    if missing:
        pytest.skip(f"artefacts not built yet ({', '.join(missing)}); run `make models`")
    return paths


# What trains, exports ONNX, starts a fresh process per case or walks every code point: seconds to
# minutes each on a 2-core machine, so `make check` (under two minutes) leaves them to `make test`.
# A file name marks its whole module, "file::test" one test (all its parameters); measured with
# `pytest -m "not slow and not browser" --durations=25`.
SLOW = {
    "test_cli_bad_input.py": "tiny training runs, and python -m export in processes of its own",
    "test_protocol_tiny_end_to_end.py": "the whole graph on a tiny protocol",
    "test_registry_and_checkpoints.py": "trains and exports tiny runs",
    "test_head_growth_stage.py": "trains the snapshot rerun twice",
    "test_toy_task_stage.py": "trains the toy models",
    "test_head_sweep.py": "trains tiny sweep runs",
    "test_teaching_graph.py": "exports and runs the teaching graphs",
    "test_committed_artefacts_agree.py": "runs the shipped models over the test windows",
    "test_heads_stage.py": "knock-out measurements",
    "test_microgpt_one_head.py": "trains the one-head twin",
    "test_microgpt_model.py::test_cli_is_deterministic": "trains microgpt twice",
    "test_microgpt_model.py::test_value_gradient_matches_finite_differences_on_model_forward": "scalar autograd",
    "test_microgpt_model.py::test_value_sampling_equals_float_sampling": "samples through the scalar autograd",
    "test_tokenizer_unicode_agreement.py::test_every_code_point_alone_and_between_letters_tokenizes_the_same": "every code point, in Node",
    "test_checker_without_browser.py::test_every_mistake_has_its_own_message": "a Pyodide job per mistake",
    "test_microgpt_page_build.py::test_the_shipped_heap_is_the_recipes_byte_for_byte": "makes the heap again in Node",
    "test_example_search.py::test_a_fresh_search_gives_the_stored_result": "runs the whole search",
    "test_microgpt_head_effect.py::test_recomputed_from_the_weights_equals_the_committed_file": "both microgpts over every name",
    "test_microgpt_level2.py::test_every_mistake_has_its_own_message": "a Python job per mistake",
    "test_run_records.py::test_the_source_seeds_records_alone_rebuild_the_headline": "rebuilds the evidence",
    "test_run_records.py::test_the_sweep_and_the_evidence_rebuild_from_the_records_byte_for_byte": "rebuilds them",
    "test_paired_claims.py::test_the_check_passes_once_the_findings_follow_the_doctored_runs": "builds the site",
    "test_paired_claims.py::test_the_check_fails_on_a_doctored_sweep": "builds the site per case",
}


def pytest_collection_modifyitems(config, items):
    """Marks by place: every test under tests/browser/ drives Chromium (``browser``); SLOW's are ``slow``."""
    browser_tests = ROOT / "tests" / "browser"
    for item in items:
        path = Path(item.fspath)
        if browser_tests in path.parents:
            item.add_marker(pytest.mark.browser)
        if path.name in SLOW or f"{path.name}::{getattr(item, 'originalname', item.name)}" in SLOW:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def assets_dir() -> Path:
    return ASSETS


@pytest.fixture(scope="session")
def load_asset():
    def load(name: str):
        (path,) = _assets_or_skip(name)
        return json.loads(path.read_text())

    return load


@pytest.fixture(scope="session")
def require_models():
    """Skip (with the reason) while the pipeline has not written the models."""
    _assets_or_skip(
        "vocab.json",
        "models/manifest.json",
        "models/mlp.onnx",
        "models/one_head.onnx",
        "models/four_heads.onnx",
        "evidence.json",
    )


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode:
        pytest.fail(f"mkdocs build --strict failed:\n{proc.stdout}\n{proc.stderr}")
    return out


@pytest.fixture(scope="session")
def servers(built_site):
    """Base URLs: 'isolated' and 'plain' at /, 'subpath' (isolated) at /some/lesson/."""
    from export.serve import serve_in_thread

    started = {
        "isolated": serve_in_thread(built_site, isolation=True),
        "plain": serve_in_thread(built_site, isolation=False),
        "subpath": serve_in_thread(built_site, isolation=True, prefix=SUB_PATH),
    }
    yield {name: url for name, (_, url) in started.items()}
    for server, _ in started.values():
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def base_url(servers) -> str:
    return servers["isolated"]


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium), "
            "or run `make test`, which installs it."
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def make_page(browser):
    """Factory for watched pages: make_page(**context_options) -> (page, watch)."""
    contexts = []
    watches = []

    def make(allow_console: tuple[str, ...] = (), init_script: str | None = None, **context_options):
        # The site's service worker would answer requests that page.route never
        # sees; tests that exercise it pass service_workers="allow".
        context_options.setdefault("service_workers", "block")
        context = browser.new_context(**context_options)
        contexts.append(context)
        if init_script:
            context.add_init_script(init_script)
        page = context.new_page()
        watch = PageWatch(page, allow_console=allow_console)
        watches.append(watch)
        return page, watch

    yield make
    try:
        for watch in watches:
            watch.check()
    finally:
        for context in contexts:
            context.close()


@pytest.fixture
def page(make_page):
    page, _ = make_page()
    return page
