"""Fixtures the browser tests share: one app server and one Chromium per test module."""

from __future__ import annotations

import pytest

import browser_support as bs


@pytest.fixture(scope="module")
def server():
    """The app, served on 127.0.0.1 for this module's tests (its base URL)."""
    with bs.streamlit_server(timeout=60) as base_url:
        yield base_url


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
