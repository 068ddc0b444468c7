"""A Python worker starts from the settings in its name, before the page has sent it anything, so it boots while the page still loads.

runner.js gives each exercise worker its settings (the files' addresses, the
snapshot offer) as JSON in the worker's name, so the worker starts the moment its
script runs: a message would wait for the page's thread, which is busy building
the page while the first worker starts. Only the interrupt buffer and a compiled
module come by message ("init"), and the worker waits for it only where it needs
them. Here a worker made by hand, with no message at all, gets as far as
restoring Python's heap; "init" then makes it ready. Without settings it says so
in words.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

START_BY_NAME_JS = """async () => {
  const at = (path) => new URL('../' + path, document.baseURI).href;   // (the page is microgpt/)
  const { workerFiles } = await import(at('js/microgpt/runner.js'));
  const { snapshotOffer } = await import(at('js/microgpt/snapshot.js'));
  const settings = { ...workerFiles(), count: true, handoff: false, prefetch: false, offer: snapshotOffer(), module: false };
  const worker = new Worker(at('js/microgpt/exercise/worker.js'), { type: 'module', name: JSON.stringify(settings) });
  window.__byName = { worker, seen: [] };
  worker.onmessage = (event) => window.__byName.seen.push({ type: event.data.type, text: event.data.text || event.data.message || '' });
}"""
SEEN_JS = "() => window.__byName.seen"


def _seen(page, predicate_js: str):
    page.wait_for_function(f"() => window.__byName.seen.some({predicate_js})", timeout=120000)
    return page.evaluate(SEEN_JS)


def test_the_worker_restores_python_before_any_message_and_is_ready_after_init(make_page, base_url):
    page, _ = make_page()
    page.goto(base_url + "microgpt/")
    page.evaluate(START_BY_NAME_JS)
    # No message sent: the shipped heap is read, checked and being restored.
    seen = _seen(page, "(m) => /Starting Python from its saved start-up/.test(m.text)")
    assert not any(m["type"] in ("ready", "error") for m in seen), seen
    page.evaluate("() => window.__byName.worker.postMessage({ type: 'init', interruptBuffer: null, module: null })")
    seen = _seen(page, "(m) => m.type === 'ready' || m.type === 'error'")
    assert [m["type"] for m in seen if m["type"] in ("ready", "error")] == ["ready"], seen
    page.evaluate("() => window.__byName.worker.terminate()")


def test_a_worker_without_settings_says_so(make_page, base_url):
    page, _ = make_page()
    page.goto(base_url + "microgpt/")
    got = page.evaluate("""() => new Promise((resolve) => {
      const worker = new Worker(new URL('../js/microgpt/exercise/worker.js', document.baseURI), { type: 'module' });
      worker.onmessage = (event) => { if (event.data.type === 'error') { worker.terminate(); resolve(event.data.message); } };
    })""")
    assert got == "the Python worker was started without its settings (runner.js gives them in its name)"
