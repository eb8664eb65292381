"""The shared out-of-date check: what counts as a change, and how a result names its inputs."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from ui.dataset_picker import DatasetChoice
from ui.freshness import STALE_HEADLINE, brief, changes, computed_for, setting, stale_message, typed_text


def test_brief_is_one_short_markup_free_line():
    assert brief(None) == "none"
    assert brief(True) == "on"
    assert brief(False) == "off"
    assert brief(0.75) == "0.75"
    assert brief(100) == "100"
    assert brief("") == "empty"
    assert brief(["loss", "zlib"]) == "loss, zlib"
    assert brief([]) == "none"
    assert brief({"model-a": "base-a"}) == "model-a → base-a"
    assert brief("a `code` span\nand a newline") == "a 'code' span and a newline"
    long_path = "/very/long/folder/" + "x" * 80 + "/other-model"
    shown = brief(long_path)
    assert len(shown) <= 60
    assert shown.startswith("/very/long")
    assert shown.endswith("other-model")


def test_dataset_choices_are_named_by_source_or_upload_and_compared_by_content():
    assert brief(DatasetChoice("demo:mcq")) == "demo:mcq"
    assert brief(DatasetChoice("cais/mmlu", "test", "all")) == "cais/mmlu (split test, config all)"
    assert brief(DatasetChoice("mine.csv", data=b"a")) == "upload mine.csv"
    same_name = [setting("data", DatasetChoice("mine.csv", data=b"a"))]
    assert changes(same_name, [setting("data", DatasetChoice("mine.csv", data=b"b"))]) == [
        ("data", "upload mine.csv", "upload mine.csv")
    ]  # new bytes under an old name still count


def test_typed_text_is_compared_in_full_and_shown_by_its_first_words():
    text = "one two three four five six seven eight nine ten"
    shown = typed_text("passage", text)
    assert shown.brief == "one two three four five six seven eight… (10 words)"
    assert typed_text("passage", "  ").brief == "empty"
    assert typed_text("p", "word").brief == "word (1 word)"
    edited = typed_text("passage", text + " eleven")
    assert changes([shown], [edited]) == [("passage", shown.brief, edited.brief)]


def test_changes_list_what_differs_in_order_including_added_and_removed_inputs():
    then = [setting("model", "a"), setting("sample size", 40), setting("seed", 0)]
    now = [setting("model", "a"), setting("sample size", 100), setting("extra", "x")]
    assert changes(then, then) == []
    assert changes(then, now) == [("sample size", "40", "100"), ("seed", "0", "none"), ("extra", "none", "x")]


def test_stale_message_names_the_changes_and_the_button():
    one = stale_message([("sample size", "40", "100")], "Run benchmark")
    assert one.splitlines() == [
        f"**{STALE_HEADLINE}** The sample size changed since they were computed; press "
        "**Run benchmark** to update them.",
        "- sample size: `40` → now `100`",
    ]
    two = stale_message([("passage", "a", "b"), ("model", "x", "y")], "Analyse")
    assert two.startswith(f"**{STALE_HEADLINE}** The passage and the model changed since they were computed")
    many = stale_message([(str(i), "a", "b") for i in range(4)], "Run")
    assert "** Several inputs changed since" in many
    assert many.count("\n- ") == 4


def test_computed_for_lists_every_input():
    assert computed_for([setting("model", "tiny-random"), setting("benchmark", DatasetChoice("demo:mcq"))]) == (
        "Computed for model `tiny-random` · benchmark `demo:mcq`"
    )


def _page() -> None:
    import streamlit as st

    from ui.freshness import keep_result, setting, show_result

    inputs = [setting("size", st.number_input("Size", value=1, key="size"))]
    if st.button("Go", key="go"):
        keep_result("result", f"result for {inputs[0].value}", inputs)
    show_result("result", inputs, st.markdown, action="Go")


def test_show_result_marks_a_result_whose_inputs_changed_until_the_button_is_pressed():
    app = AppTest.from_function(_page)
    app.run()
    assert not app.markdown  # nothing kept yet: nothing drawn
    app.button(key="go").click().run()
    assert [m.value for m in app.markdown] == ["result for 1"]
    assert not app.warning
    assert app.caption[0].value == "Computed for size `1`"
    app.number_input(key="size").set_value(2).run()
    assert app.warning[0].value.startswith(
        f"**{STALE_HEADLINE}** The size changed since they were computed; press **Go**"
    )
    assert [m.value for m in app.markdown] == ["result for 1"]  # still there, marked
    app.button(key="go").click().run()
    assert [m.value for m in app.markdown] == ["result for 2"]
    assert not app.warning
    assert app.session_state["result_inputs"][0].value == 2


def test_a_local_file_is_named_by_its_file_name_not_its_path():
    assert brief(DatasetChoice("/data/private/folder/books.parquet")) == "books.parquet"
