"""Lesson pages 1-5 as a reader first sees them, read one after the other in one tab."""

from __future__ import annotations

PAGES = [
    "lesson/1-why-more-heads/",
    "lesson/2-multihead-operation/",
    "lesson/3-training-examples/",
    "lesson/4-model-training-generation/",
    "lesson/5-results/",
]


def read_pages(browser, base_url: str, paths, ready: str, read: str) -> dict:
    """path -> what the JavaScript function `read` returns on that page at 1280 px, every door closed,
    once the function `ready` holds and the fonts have loaded."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
    page = context.new_page()
    page.set_default_timeout(60000)
    out = {}
    try:
        for path in paths:
            page.goto(base_url + path)
            page.wait_for_function(ready)
            page.evaluate("() => document.fonts.ready.then(() => true)")
            out[path] = page.evaluate(read)
    finally:
        context.close()
    return out
