"""Fixtures for the tests that run in every engine (Chromium, Firefox, WebKit).

``engine`` is one browser per engine for the whole session (pytest runs every test
of one engine before it starts the next, so one browser runs at a time); ``site()``
serves the built site on a fresh origin (tests/engines/watched_server.py); ``tab()``
opens a tab whose errors fail the test at its end.
"""

from __future__ import annotations

import pytest

from tests.engines import drivers
from tests.engines.watched_server import WatchedServer


@pytest.fixture(scope="session", params=drivers.ENGINES)
def engine(request):
    name = request.param
    try:
        # Chromium shares the session's Playwright browser (tests/conftest.py): one sync_playwright per process
        started = (
            drivers.ChromiumEngine(request.getfixturevalue("browser")) if name == "chromium" else drivers.start(name)
        )
    except drivers.EngineMissing as exc:
        pytest.fail(
            f"{name}: {exc} is missing: install Debian's {drivers.PACKAGES[name]} "
            "(apt-get install), or run `make test`, which installs it."
        )
    yield started
    started.quit()


@pytest.fixture
def site(built_site):
    """site(isolation=True, prefix='/') -> a WatchedServer on a new origin, closed after the test."""
    servers = []

    def make(**options):
        server = WatchedServer(built_site, **options)
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.close()


@pytest.fixture
def tab(engine):
    """tab(width=1280, height=900) -> an open tab; at the end of the test any error it saw fails the test."""
    opened = []

    def make(width: int = 1280, height: int = 900):
        t = engine.open(width, height)
        opened.append(t)
        return t

    yield make
    try:
        for t in opened:
            left = t.errors()
            assert not left, f"{engine.name} {engine.version}: errors in the page: {left}"
    finally:
        for t in opened:
            t.close()
