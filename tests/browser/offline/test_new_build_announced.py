"""A new build deployed under open tabs: announced, never mixed with the old one.

Build B is build A with a changed ``one_head.onnx`` (and its manifest entry),
versioned and given its service worker by the same hooks the build runs. The
deploy replaces the served folder's whole content, so A's files are gone, as on
GitHub Pages. Then:

* a tab of build A (its service worker controls it) asks for the compare page:
  it must say "a new version of this lesson is live", never "damaged", and
  show the update notice; accepting it brings build B, whose model runs;
* a new tab says the same until the update is accepted, then runs build B;
* without a service worker, a compare page of build A whose model download
  lands after the deploy says the same (page.route holds that download).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from export.serve import serve_in_thread
from site_src.hooks import asset_versions
from site_src.hooks.service_worker import build_service_worker
from tests.browser_util import WAIT_READY_JS, wait_until
from tests.site_paths import route_pattern

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("require_models")]

STALE = "new version of this lesson is live"
CONSOLE = (r"Failed to load resource", r"404")


def _second_build(built_site: Path, out: Path) -> Path:
    """Build A with a different one_head.onnx: same weights, another doc string."""
    import onnx

    shutil.copytree(built_site, out)
    model_path = out / "wasm_assets/models/one_head.onnx"
    model = onnx.load(str(model_path))
    model.doc_string = (model.doc_string or "") + " (build B)"
    model_path.write_bytes(model.SerializeToString())
    manifest_path = out / "wasm_assets/models/manifest.json"
    manifest = json.loads(manifest_path.read_text())
    data = model_path.read_bytes()
    for entry in manifest["models"]:
        if entry["name"] == "one_head":
            entry["bytes"], entry["sha256"] = len(data), hashlib.sha256(data).hexdigest()
    manifest_path.write_text(json.dumps(manifest, indent=1))
    asset_versions.post_build({"site_dir": str(out)})
    build_service_worker(out)
    return out


def _deploy(build: Path, served: Path) -> None:
    """Replace everything served, as a static host's deploy does."""
    for child in served.iterdir():
        shutil.rmtree(child) if child.is_dir() else child.unlink()
    shutil.copytree(build, served, dirs_exist_ok=True)


@pytest.fixture
def two_builds(built_site, tmp_path):
    served = tmp_path / "served"
    shutil.copytree(built_site, served)
    b = _second_build(built_site, tmp_path / "build_b")
    assert asset_versions.read_versions(b)["build"] != asset_versions.read_versions(built_site)["build"]
    server, url = serve_in_thread(served, isolation=True)
    yield url, served, b
    server.shutdown()
    server.server_close()


def _compare_alert_text(page) -> str:
    page.wait_for_function(
        f"""() => [...document.querySelectorAll('.mha-compare')]
      .some((el) => el.innerText.includes({json.dumps(STALE)}))""",
        timeout=30000,
    )
    return page.inner_text(".mha-compare")


def test_tabs_of_the_old_build_say_a_new_version_is_live(make_page, two_builds):
    url, served, build_b = two_builds
    old, _ = make_page(service_workers="allow", allow_console=CONSOLE)
    old.set_default_timeout(60000)
    old.goto(url)
    old.wait_for_function("() => navigator.serviceWorker.controller !== null")
    wait_until(old, "async () => (await navigator.serviceWorker.ready).active.state === 'activated'")
    _deploy(build_b, served)

    # The old tab, still on build A's service worker, opens the compare page.
    old.locator("nav.md-nav--primary a.md-nav__link", has_text="Compare").first.click()
    old.wait_for_url("**/compare/")
    text = _compare_alert_text(old)
    assert "damaged" not in text and "reload" in text.lower(), text
    old.locator(".mha-update").wait_for()

    # A new tab in the same browser: the old worker still answers it.
    new = old.context.new_page()
    new.set_default_timeout(60000)
    new.goto(url + "compare/?backend=wasm")
    text = _compare_alert_text(new)
    assert "damaged" not in text, text
    notice = new.locator(".mha-update")
    notice.wait_for()
    with new.expect_navigation():
        notice.get_by_role("button", name="Reload to update").click()
    state = new.evaluate(WAIT_READY_JS)
    assert state["ok"] and "one_head" in state["backends"], state
    assert STALE not in new.inner_text(".mha-compare")

    # The old tab's notice reloads it into build B as well.
    with old.expect_navigation():
        old.locator(".mha-update").get_by_role("button", name="Reload to update").click()
    state = old.evaluate(WAIT_READY_JS)
    assert state["ok"] and "one_head" in state["backends"], state


def test_a_page_without_service_worker_whose_model_lands_after_a_deploy(make_page, two_builds):
    url, served, build_b = two_builds
    page, _ = make_page(allow_console=CONSOLE)
    page.set_default_timeout(60000)
    held = []
    pattern = route_pattern("wasm_assets/models/one_head.onnx")
    page.route(pattern, lambda route: held.append(route))
    page.goto(url + "compare/?backend=wasm")
    while not held:  # the page asked for build A's model
        page.wait_for_timeout(50)
    _deploy(build_b, served)
    page.unroute(pattern)
    held[0].continue_()  # now the server holds build B's model, under build A's address
    text = _compare_alert_text(page)
    assert "damaged" not in text, text
    notice = page.locator(".mha-update")
    notice.wait_for()
    with page.expect_navigation():
        notice.get_by_role("button", name="Reload to update").click()
    state = page.evaluate(WAIT_READY_JS)
    assert state["ok"] and "one_head" in state["backends"], state
