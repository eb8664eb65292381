"""LeakLens entry point: the Home page and navigation to every page in ``pages/``."""

from __future__ import annotations

import streamlit as st

from ui.startup import import_heavy_libraries

try:
    import_heavy_libraries()  # before the pages' own imports: one session at a time (see ui/startup.py)
except Exception as exc:  # a broken install: say so on the page instead of leaving it blank
    st.error(
        f"LeakLens could not load its libraries: {type(exc).__name__}: {exc}. Reinstall with `make setup`, then "
        "reload this page."
    )
    st.stop()

from ui.common import model_picker, page_setup  # noqa: E402
from ui.home import render_home  # noqa: E402
from ui.navigation import app_pages  # noqa: E402


def home() -> None:
    page_setup("LeakLens")
    model_picker()
    render_home()


st.navigation(app_pages(home)).run()
