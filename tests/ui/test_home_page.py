"""AppTest of the app shell: home page content, page cards, and the shared model picker."""

from __future__ import annotations

from pathlib import Path

from ui import navigation
from ui.common import MODEL_KEY
from ui.home import PAGES
from ui.navigation import page_scripts

REPO = Path(__file__).resolve().parents[2]


def test_home_explains_the_question_and_shows_the_loaded_model(home):
    assert home.title[0].value == "LeakLens"
    text = "\n".join(m.value for m in home.markdown)
    assert "Has this language model seen this text before?" in text
    assert "`tiny-random`" in text
    assert "Loaded on **CPU**" in text
    assert "context 2,048 tokens" in text
    assert home.session_state[MODEL_KEY] == "tiny-random"
    assert home.sidebar.selectbox(key="model_picker").value == "tiny-random"


def test_every_installed_page_has_a_card_with_a_link_and_a_purpose(home):
    links = {link.proto.label for link in home.get("page_link")}
    captions = {c.value for c in home.caption}
    installed = set(page_scripts())
    assert "pages/1_Inspect_a_passage.py" in installed
    for card in PAGES:
        assert card.purpose in captions
        assert (card.title in links) == (card.path in installed)


def test_every_page_keeps_the_address_of_its_file_name(monkeypatch):
    """A fresh server serves pages/ by file name until app.py has run once: a page given another address would
    open under "Page not found" for the first visitor of a shared link (the Benchmark order page, renamed so that
    no product file looks like a test file, is now /Benchmark_order)."""
    made: dict[str, dict] = {}
    monkeypatch.setattr(navigation.st, "Page", lambda page, **options: made.setdefault(str(page), options))
    navigation.app_pages(lambda: None)
    assert "pages/8_Benchmark_order.py" in made
    assert all("url_path" not in options for page, options in made.items() if page.startswith("pages/"))


def test_unknown_model_shows_an_error_not_a_traceback(home, tmp_path):
    picker = home.sidebar.selectbox(key="model_picker")
    picker.set_value("Other (hub id or local folder)…").run()
    missing = tmp_path / "no-such-model"
    home.sidebar.text_input(key="model_picker_custom").input(str(missing)).run()
    assert not home.exception, home.exception
    assert home.session_state[MODEL_KEY] == str(missing)
    assert home.error
    assert str(missing) in home.error[0].value


def test_the_sidebar_says_which_weights_the_choice_names(home, tmp_path, tiny_lm):
    """Resolved when chosen, not when a test runs: the weights' identity (what stored scores are keyed by)."""
    captions = [c.value for c in home.sidebar.caption]
    assert "Weights: bundled weights (random, seed 0)" in captions
    tiny_lm.model.save_pretrained(tmp_path)
    tiny_lm.tokenizer.save_pretrained(tmp_path)
    home.sidebar.selectbox(key="model_picker").set_value("Other (hub id or local folder)…").run()
    home.sidebar.text_input(key="model_picker_custom").input(str(tmp_path)).run()
    assert not home.exception, home.exception
    line = next(c.value for c in home.sidebar.caption if c.value.startswith("Weights: "))
    assert line.startswith("Weights: local folder, contents sha256 ")


def test_model_choice_is_shared_with_the_inspect_page(home):
    home.sidebar.selectbox(key="model_picker").set_value("smollm2-135m").run()
    assert "`smollm2-135m`" in "\n".join(m.value for m in home.markdown)
    home.switch_page("pages/1_Inspect_a_passage.py").run()
    assert not home.exception, home.exception
    assert home.title[0].value == "Inspect a passage"
    assert home.session_state[MODEL_KEY] == "smollm2-135m"
    assert home.sidebar.selectbox(key="model_picker").value == "smollm2-135m"


def _literal_calls(script: Path, name: str) -> list[str]:
    """The string arguments of every ``name("...")`` / ``st.name("...")`` call in a page script."""
    import ast

    found = []
    for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if called == name:
                found.append(node.args[0].value)
    return found


def test_each_page_title_equals_its_sidebar_name_and_tab_title():
    for card in PAGES:
        script = REPO / card.path
        if not script.exists():
            continue
        if _literal_calls(script, "result_first_page"):  # sets the tab title and the page title from one name
            assert _literal_calls(script, "result_first_page") == [card.title], card.path
            continue
        assert _literal_calls(script, "title") == [card.title], card.path
        assert _literal_calls(script, "page_setup") == [card.title], card.path
    assert all("memoriz" not in card.title.lower() and "memoriz" not in card.purpose.lower() for card in PAGES)
