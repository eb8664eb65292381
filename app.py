"""LeakLens entry point: the Home page and navigation to every page in ``pages/``."""

from __future__ import annotations

import streamlit as st

from ui.common import model_picker, page_setup
from ui.home import render_home
from ui.navigation import app_pages


def home() -> None:
    page_setup("LeakLens")
    model_picker()
    render_home()


st.navigation(app_pages(home)).run()
