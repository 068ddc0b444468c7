"""The heap a browser makes itself (fast later Runs), in real Pyodide: used when it fits, a normal start when it does not.

A browser where the site's shipped heap could not be used (test_exercise_shipped_heap.py;
here: marked so before the page loads) starts its first worker the normal way, which hands the page a
copy of its heap (site_src/js/microgpt/exercise/worker.js); the page keeps it in
Cache Storage with its SHA-256 in localStorage (site_src/js/microgpt/snapshot.js),
and every later worker restores it. Each test checks which way a worker started
(``mhaExercise.ready`` resolves with ``start``: "snapshot" or "normal") and that
the verdicts are right either way: the solution passes, the starter and a wrong
answer fail. Tests wait for conditions only; timing is bench/site_visits.py's job.
"""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from tests.browser.microgpt.test_exercise_page import CHECK_JS, WAIT_EXERCISE_JS, open_microgpt
from tests.pyodide.test_checker_without_browser import MISTAKES, solution, starter

pytestmark = pytest.mark.browser

RECORD = "mha-pyodide-snapshot"
CACHE = "pyodide-snapshot"
RECORD_JS = f"() => JSON.parse(localStorage.getItem('{RECORD}') || 'null')"
# (wait_for_function does not await a promise, so the condition is synchronous: the page
# writes the record only once the entry is in Cache Storage.)
STORED_JS = f"""(otherThan) => {{
  const record = JSON.parse(localStorage.getItem('{RECORD}') || 'null');
  return record && record.digest && record.digest !== otherThan ? record : null;
}}"""
ENTRIES_JS = f"async () => (await caches.has('{CACHE}')) ? (await (await caches.open('{CACHE}')).keys()).length : 0"
RUN_JS = "(source) => window.mhaExercise.run(source)"


def record(page):
    return page.evaluate(RECORD_JS)


def wait_stored(page, other_than: str | None = None) -> dict:
    """Wait until a snapshot is stored (a record with a digest, other than `other_than`); return the record."""
    stored = page.wait_for_function(STORED_JS, arg=other_than, polling=100).json_value()
    assert page.evaluate(ENTRIES_JS) == 1, stored  # the one entry it points at
    return stored


def started(page) -> str:
    """How the worker that takes the next job started."""
    return page.evaluate(WAIT_EXERCISE_JS)["start"]


def assert_verdicts(page) -> None:
    verdict = page.evaluate(CHECK_JS, solution())
    assert verdict["passed"] and verdict["message"].startswith("Passed!"), verdict
    verdict = page.evaluate(CHECK_JS, starter())
    assert not verdict["passed"] and "Nothing is added to out yet" in verdict["message"], verdict
    verdict = page.evaluate(CHECK_JS, MISTAKES["scale_head_dim"][0]())
    assert not verdict["passed"], verdict


def reopen(context, base_url: str, watches: list, routes: tuple = ()):
    """A new tab in the same browser profile: a repeat visit. `routes`: (pattern, handler) pairs that
    answer the page's and its workers' requests before the page watch does (the last route added runs first)."""
    from tests.browser_util import PageWatch

    page = context.new_page()
    watches.append(PageWatch(page, allow_console=(r"could not be used",)))
    for pattern, handler in routes:
        page.route(pattern, handler)
    open_microgpt(page, base_url)
    return page


SHIPPED_FAILED = "mha-pyodide-heap-failed"  # site_src/js/microgpt/snapshot.js
SHIPPED = "vendor/pyodide-heap/heap.bin"


def shipped_digest(site) -> str:
    from site_src.hooks.asset_versions import read_versions

    return read_versions(site)["digests"][SHIPPED]


@contextmanager
def browser_profile(browser, init_script: str = "", **options):
    """A fresh browser profile and the watches of its pages, which are checked when it closes."""
    context = browser.new_context(**options)
    if init_script:
        context.add_init_script(init_script)
    watches: list = []
    try:
        yield context, watches
        for watch in watches:
            watch.check()
    finally:
        context.close()


@pytest.fixture
def profile(browser, built_site):
    """A fresh browser profile in which the shipped heap failed before, and the watches of its pages."""
    with browser_profile(browser, f"localStorage.setItem({SHIPPED_FAILED!r}, {shipped_digest(built_site)!r})") as made:
        yield made


@pytest.mark.parametrize("server", ["isolated", "plain"])
def test_later_workers_and_visits_restore_the_snapshot(profile, servers, server):
    context, watches = profile
    page = reopen(context, servers[server], watches)
    assert started(page) == "normal"  # a fresh profile holds no snapshot
    stored = wait_stored(page)
    assert stored["size"] > 1_000_000, stored
    assert_verdicts(page)
    assert started(page) == "snapshot"  # the spares booted after the first job
    # Each restored worker reseeds random: two Runs print different numbers.
    printed = []
    for _ in range(2):
        assert page.evaluate(RUN_JS, "import random\nprint(random.random())\n")["ok"]
        printed.append(page.inner_text(".mgpt-ex__output").strip())
    assert printed[0] != printed[1], printed
    page.close()
    again = reopen(context, servers[server], watches)  # a repeat visit starts from the snapshot at once
    assert started(again) == "snapshot"
    assert_verdicts(again)
    assert record(again)["digest"] == stored["digest"]  # nothing made again


def test_a_missing_snapshot_means_a_normal_start(profile, servers):
    context, watches = profile
    page = reopen(context, servers["isolated"], watches)
    first = wait_stored(page)
    page.evaluate(f"() => caches.delete('{CACHE}')")
    page.close()
    again = reopen(context, servers["isolated"], watches)
    assert started(again) == "normal"
    assert_verdicts(again)
    remade = wait_stored(again, other_than=first["digest"])  # the normal start made a new one
    assert remade["key"] == first["key"], (first, remade)
    assert started(again) == "snapshot"
    assert_verdicts(again)


def test_a_damaged_or_replaced_snapshot_is_never_restored(profile, servers):
    context, watches = profile
    page = reopen(context, servers["isolated"], watches)
    first = wait_stored(page)
    # What code that reached JavaScript in a worker could do: rewrite the entry (here: one byte changed).
    page.evaluate(f"""async () => {{
      const cache = await caches.open('{CACHE}');
      const [request] = await cache.keys();
      const bytes = new Uint8Array(await (await cache.match(request)).arrayBuffer());
      bytes[bytes.length >> 1] ^= 0xff;
      await cache.put(request, new Response(bytes));
    }}""")
    page.close()
    again = reopen(context, servers["isolated"], watches)
    assert started(again) == "normal"
    assert_verdicts(again)
    wait_stored(again, other_than=first["digest"])  # the damaged one was replaced by a new one
    assert started(again) == "snapshot"


def test_a_snapshot_of_another_build_is_never_restored(profile, servers):
    context, watches = profile
    page = reopen(context, servers["isolated"], watches)
    first = wait_stored(page)
    page.evaluate(f"""() => localStorage.setItem('{RECORD}',
      JSON.stringify({{ ...JSON.parse(localStorage.getItem('{RECORD}')), key: '0'.repeat(64) }}))""")
    page.close()
    again = reopen(context, servers["isolated"], watches)
    assert started(again) == "normal"
    assert_verdicts(again)
    assert wait_stored(again, other_than=first["digest"])["key"] == first["key"]  # (each heap has its own digest)


def test_a_snapshot_that_cannot_be_restored_falls_back_once(profile, servers):
    """Bytes whose digest matches the record but which Pyodide rejects: a normal start, and no retry."""
    context, watches = profile
    page = reopen(context, servers["isolated"], watches)
    first = wait_stored(page)
    page.evaluate(f"""async () => {{
      const {{ packHeap }} = await import(new URL('js/microgpt/exercise/heap_pages.js', document.baseURI.replace(/microgpt\\/.*$/, '')).href);
      const packed = packHeap(new Uint8Array(1 << 20).fill(1));
      const digest = Array.from(new Uint8Array(await crypto.subtle.digest('SHA-256', packed)),
        (b) => b.toString(16).padStart(2, '0')).join('');
      const cache = await caches.open('{CACHE}');
      const [request] = await cache.keys();
      await cache.put(request, new Response(packed));
      localStorage.setItem('{RECORD}', JSON.stringify({{ key: {first["key"]!r}, digest, size: packed.byteLength }}));
    }}""")
    page.close()
    again = reopen(context, servers["isolated"], watches)
    assert started(again) == "normal after a failed restore"
    again.wait_for_function(f"() => ({RECORD_JS})()?.failed === true", polling=100)
    assert_verdicts(again)
    assert started(again) == "normal"  # not tried again, and no new snapshot made for this build
    assert record(again) == {"key": first["key"], "failed": True}
