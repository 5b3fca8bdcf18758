"""Fixtures every test shares: Streamlit's component scan done once; for the browser tests, one app server for all
the test modules a test process runs and one Chromium per test module."""

from __future__ import annotations

import pytest

import browser_support as bs


@pytest.fixture(autouse=True, scope="session")
def scan_for_components_once():
    """A new AppTest scans every installed package's metadata for Streamlit components (0.15 s here, and the
    suite makes hundreds of AppTests). The installed packages do not change while the tests run: scan once.
    (The app's own component, the progress store, is defined in its source, not found by the scan.)"""
    from streamlit.components.v2 import manifest_scanner

    found = manifest_scanner.scan_component_manifests()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(manifest_scanner, "scan_component_manifests", lambda max_workers=None: list(found))
        yield


@pytest.fixture(scope="session")
def app_server():
    """The app, served on 127.0.0.1 (its base URL), started when a test first asks for it and stopped when the test
    process ends: each server's first run imports torch and loads the models its pages show (10 to 30 s), once per
    process instead of once per module. A server keeps nothing of a browser session after it: a test that is about
    a fresh server starts its own (``browser_support.streamlit_server``)."""
    with bs.streamlit_server(timeout=60) as base_url:
        yield base_url


@pytest.fixture(scope="module")
def server(app_server):
    """The app's base URL for this module's tests (the process's one server, ``app_server``)."""
    return app_server


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium for this module's tests (they skip before this is made when there is none)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = bs.launch_chromium(p)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def shared_pages(browser):
    """Pages of this module's server that several tests read without changing (``slide_support.SharedPages``)."""
    from slide_support import SharedPages

    pages = SharedPages(browser)
    try:
        yield pages
    finally:
        pages.close()
