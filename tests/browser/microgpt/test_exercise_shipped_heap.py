"""The Python heap the site ships (a fast first Run), in real Pyodide: restored when it is this build's, never otherwise.

The build makes the exercise's heap in Node (site_src/hooks/python_heap.py); every
worker of a fresh browser restores it (``mhaExercise.ready`` resolves with
``start`` "shipped") after checking it against this build's SHA-256. A damaged
heap is never restored: that worker starts Python normally and makes the
browser's own heap (test_exercise_snapshot.py), and the shipped one is not
offered again. A heap that does not come within the worker's wait (a slow line)
means a normal start. The verdicts are right in every case.
"""

from __future__ import annotations

import pytest

from tests.browser.microgpt.test_exercise_snapshot import (
    RECORD_JS,
    RUN_JS,
    SHIPPED,
    SHIPPED_FAILED,
    assert_verdicts,
    browser_profile,
    reopen,
    shipped_digest,
    started,
    wait_stored,
)

pytestmark = pytest.mark.browser

HEAP_ROUTE = "**/vendor/pyodide-heap/**"


@pytest.fixture
def fresh(browser):
    """A fresh browser profile, the watches of its pages (checked at the end)."""
    with browser_profile(browser) as made:
        yield made


@pytest.fixture
def unserved(browser):
    """A fresh profile without a service worker, so that every heap request reaches the page's routes."""
    with browser_profile(browser, service_workers="block") as made:
        yield made


@pytest.mark.parametrize("server", ["isolated", "plain"])
def test_a_fresh_browser_restores_the_shipped_heap(fresh, servers, server):
    context, watches = fresh
    page = reopen(context, servers[server], watches)
    assert started(page) == "shipped"
    assert_verdicts(page)
    assert started(page) == "shipped"  # the spares too
    printed = []
    for _ in range(2):  # each restored worker reseeds random from the browser
        assert page.evaluate(RUN_JS, "import random\nprint(random.random())\n")["ok"]
        printed.append(page.inner_text(".mgpt-ex__output").strip())
    assert printed[0] != printed[1], printed
    assert page.evaluate(RECORD_JS) is None  # no heap of its own was made
    page.close()
    again = reopen(context, servers[server], watches)  # a repeat visit: the same heap, from the service worker
    assert started(again) == "shipped"
    assert_verdicts(again)


def test_a_damaged_shipped_heap_is_never_restored(unserved, servers, built_site):
    context, watches = unserved

    from tests.site_paths import built_file

    # Its first megabyte only (a download cut short): small enough to arrive within the worker's wait.
    start = built_file(built_site, SHIPPED).read_bytes()[: 1 << 20]

    def damaged(route):
        route.fulfill(status=200, body=start, headers={"Content-Type": "application/octet-stream"})

    page = reopen(context, servers["isolated"], watches, routes=[(HEAP_ROUTE, damaged)])
    assert started(page) == "normal"
    digest = shipped_digest(built_site)
    assert page.evaluate(f"() => localStorage.getItem({SHIPPED_FAILED!r})") == digest
    assert_verdicts(page)
    wait_stored(page)  # the normal start made this browser's own heap ...
    assert started(page) == "snapshot"  # ... which the next workers restore
    assert_verdicts(page)


def test_a_heap_that_does_not_come_means_a_normal_start(unserved, servers):
    context, watches = unserved
    held = []

    def hold(route):  # never answered: a line too slow for 15 MB
        held.append(route)

    try:
        page = reopen(context, servers["plain"], watches, routes=[(HEAP_ROUTE, hold)])
        assert started(page) == "normal"
        assert held, "the worker never asked for the shipped heap"
        assert_verdicts(page)
        wait_stored(page)  # a heap of this browser's own, for the next workers
    finally:
        for route in held:
            try:
                route.abort()
            except Exception:  # the request may be gone with its worker
                pass
