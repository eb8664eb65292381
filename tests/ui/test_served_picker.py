"""AppTest of the sidebar's served-model choice: Check connection reaches a real server or says why not."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.helpers.vllm_server import KEY_VAR, SERVED_NAME, free_port
from ui.common import MODEL_KEY, SERVED_KEY
from ui.served_picker import SERVED_LABEL

REPO = Path(__file__).resolve().parents[2]


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


def test_inspect_scores_a_passage_on_the_served_model_without_min_k_plus_plus(monkeypatch, vllm_endpoint, tmp_path):
    from core.data.examples import GETTYSBURG
    from core.engine.served import Endpoint, connect
    from core.passage.calibration import FRESH_PASSAGES_ENV, FRESH_PASSAGES_PATH

    monkeypatch.setenv("LEAKLENS_STORE", str(tmp_path / "results.sqlite"))
    # Twelve of the fresh passages (a set of one's own, as $LEAKLENS_FRESH_PASSAGES allows): scoring all 606
    # through a CPU server would take this test several minutes without telling it anything more.
    few = tmp_path / "fresh.jsonl"
    few.write_text("".join(FRESH_PASSAGES_PATH.read_text(encoding="utf-8").splitlines(keepends=True)[:12]))
    monkeypatch.setenv(FRESH_PASSAGES_ENV, str(few))
    served = connect(Endpoint(vllm_endpoint, api_key_env=KEY_VAR))
    app = AppTest.from_file(str(REPO / "pages" / "1_Inspect_a_passage.py"), default_timeout=600)
    app.session_state[MODEL_KEY] = served.spec  # as the sidebar's Check connection leaves them
    app.session_state[SERVED_KEY] = served
    app.run()
    app.text_area(key="inspect_text_a").set_value(GETTYSBURG.text)
    app.button(key="inspect_analyse").click().run()
    assert not app.exception, app.exception
    assert not app.error, [e.value for e in app.error]
    labels = [m.label for m in app.metric]
    assert "Log-likelihood (−loss)" in labels
    assert "Min-K%++" not in labels
    captions = [c.value for c in app.caption]
    assert any(c.startswith("Min-K%++ needs the full next-token distribution") for c in captions)
    panels = [h.proto.body for h in app.get("html") if "The model wrote" in h.proto.body]
    assert len(panels) == 1  # the server continued the passage's first half


def test_the_mcq_page_probes_the_served_model_and_stores_the_run(monkeypatch, vllm_endpoint, tmp_path):
    from core.engine.served import Endpoint, connect
    from core.store.results import ResultStore

    store = tmp_path / "results.sqlite"
    monkeypatch.setenv("LEAKLENS_STORE", str(store))
    served = connect(Endpoint(vllm_endpoint, api_key_env=KEY_VAR))
    app = AppTest.from_file(str(REPO / "pages" / "4_MCQ_memorisation.py"), default_timeout=600)
    app.session_state[MODEL_KEY] = served.spec  # as the sidebar's Check connection leaves them
    app.session_state[SERVED_KEY] = served
    app.run()
    app.selectbox(key="mcq_example").set_value("General-knowledge questions (demo)")
    app.number_input(key="mcq_limit").set_value(3)
    app.button(key="mcq_run").click().run()
    assert not app.exception, app.exception
    assert not app.error, [e.value for e in app.error]
    assert {m.label: m.value for m in app.metric}["Questions"] == "3"
    (run,) = ResultStore(store).list_runs("mcq")
    assert run.finished
    assert run.model == served.spec
