"""The app's page list: a Home page plus every script in ``pages/``, found at each run.

Using ``st.navigation`` lets the home entry read "Home" instead of the entry script's file name, while
every page keeps the URL that Streamlit derives from its file name (``pages/3_Loss_delta.py`` ->
``/Loss_delta``), so links and tests stay stable as pages are added. No page sets another address: before
``app.py`` has run once, a fresh server serves ``pages/`` the legacy way, by file name, and a first visitor
who opens another address gets "Page not found" over the page.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import streamlit as st

from ui.home import PAGES

ROOT = Path(__file__).resolve().parents[1]
PAGES_DIR = ROOT / "pages"


def page_scripts() -> list[str]:
    """Paths (relative to the repository root) of the page scripts, in file-name order."""
    if not PAGES_DIR.is_dir():
        return []
    return [f"pages/{p.name}" for p in sorted(PAGES_DIR.glob("*.py")) if not p.name.startswith(("_", "."))]


def app_pages(home: Callable[[], None]) -> list[st.Page]:
    cards = {card.path: card for card in PAGES}
    pages = [st.Page(home, title="Home", icon=":material/home:", default=True, url_path="home")]
    for script in page_scripts():
        card = cards.get(script)
        if card is None:
            pages.append(st.Page(script))
        else:
            pages.append(st.Page(script, title=card.title, icon=card.icon))
    return pages
