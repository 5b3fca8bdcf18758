"""Start here in a real browser: each card's title (the link to its page) stands out above the card's text.

Skips when Playwright or Chromium is missing (see tests/test_browser.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

try:
    from tests import browser_support as bs
except ImportError:  # pragma: no cover - depends on how pytest set up sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import browser_support as bs

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
if bs.find_chromium() is None:
    pytest.skip("no Chromium found: set CHROMIUM_PATH or install chromium", allow_module_level=True)

TIMEOUT_MS = 90_000
CARD_FONTS_JS = """() => [...document.querySelectorAll('[class*="st-key-path_card_"]')].map(card => {
  const size = el => el ? parseFloat(getComputedStyle(el).fontSize) : null;
  const title = card.querySelector('[data-testid="stPageLink"] p');
  const text = [...card.querySelectorAll('[data-testid="stMarkdownContainer"] p')]
      .find(p => !p.closest('[data-testid="stPageLink"]') && !p.closest('[data-testid="stCaptionContainer"]'));
  return {title: title && title.innerText, titlePx: size(title), textPx: size(text),
          weight: title ? parseInt(getComputedStyle(title).fontWeight) : null};
})"""


def test_every_card_title_is_larger_and_bolder_than_its_text():
    """The titles ("1. Overview") were smaller than the sentence under them."""
    with bs.streamlit_server(timeout=90) as base_url, sync_api.sync_playwright() as p:
        browser = bs.launch_chromium(p)
        try:
            tab = browser.new_page(viewport={"width": 1280, "height": 800})
            tab.goto(f"{base_url}/start-here", wait_until="domcontentloaded")
            bs.wait_for_app_idle(tab, timeout=TIMEOUT_MS)
            cards = tab.evaluate(CARD_FONTS_JS)
        finally:
            browser.close()
    assert len(cards) >= 10, cards
    assert cards[0]["title"].startswith("1. ")
    for card in cards:
        assert card["titlePx"] > card["textPx"] and card["weight"] >= 600, card
