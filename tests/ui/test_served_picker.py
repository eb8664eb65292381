"""AppTest of the sidebar's served-model choice: Check connection reaches a real server or says why not."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers.vllm_server import KEY_VAR, SERVED_NAME, free_port
from ui.common import MODEL_KEY
from ui.served_picker import SERVED_LABEL

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture()
def home(monkeypatch) -> AppTest:
    monkeypatch.setenv("LEAKLENS_DEFAULT_MODEL", "tiny-random")
    app = AppTest.from_file(str(REPO / "app.py"), default_timeout=240)
    app.run()
    assert not app.exception, app.exception
    return app


def test_an_unreachable_server_is_one_error_and_the_model_stays(home):
    home.sidebar.selectbox(key="model_picker").set_value(SERVED_LABEL).run()
    assert home.session_state[MODEL_KEY] == "tiny-random"
    home.sidebar.text_input(key="model_picker_url").input(f"http://127.0.0.1:{free_port()}/v1").run()
    home.sidebar.button(key="model_picker_check").click().run()
    assert not home.exception, home.exception
    (error,) = home.sidebar.error
    assert error.value.startswith("Cannot reach the server at http://127.0.0.1:")
    assert home.session_state[MODEL_KEY] == "tiny-random"


def test_check_connection_makes_the_served_model_the_active_one(home, vllm_endpoint):
    home.sidebar.selectbox(key="model_picker").set_value(SERVED_LABEL).run()
    home.sidebar.text_input(key="model_picker_url").input(vllm_endpoint).run()
    home.sidebar.text_input(key="model_picker_key_var").input(KEY_VAR).run()
    home.sidebar.button(key="model_picker_check").click().run()
    assert not home.exception, home.exception
    assert not home.sidebar.error
    assert home.session_state[MODEL_KEY] == f"served:{SERVED_NAME}@{vllm_endpoint}"
    captions = "\n".join(c.value for c in home.sidebar.caption)
    assert f"Connected to vLLM 0.32.0: **{SERVED_NAME}**" in captions
    status = "\n".join(m.value for m in home.markdown)
    assert f"Served at {vllm_endpoint}" in status
    assert "cannot be verified" in status
