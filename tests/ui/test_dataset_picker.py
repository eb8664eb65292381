"""The shared dataset picker: which example starts selected, what each kind of input returns."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from core.data.demo import demo_datasets
from core.data.labelled import KNOWN_DATASETS
from core.data.tables import load_rows
from ui.dataset_picker import (
    DatasetChoice,
    ReadyExample,
    default_example,
    demo_examples,
    file_examples,
    known_examples,
    unique_examples,
)


def test_every_task_offers_its_shipped_demo_and_it_loads():
    for task in ("membership", "mcq", "overlap-train", "overlap-test"):
        examples, demos = demo_examples(task), demo_datasets(task)
        assert examples and len(examples) == len(demos)
        for example, demo in zip(examples, demos):
            assert (example.label, example.source) == (demo.title, demo.source)
            assert len(load_rows(example.source)) > 0


def test_membership_examples_list_the_demo_once_beside_the_known_datasets():
    examples = unique_examples(demo_examples("membership"), known_examples(KNOWN_DATASETS))
    sources = [e.source for e in examples]
    assert sources.count("demo:famous-vs-fresh") == 1
    assert len(sources) == len(set(sources))
    hub = next(e for e in examples if e.source == "swj0419/WikiMIA")
    assert hub.split == "WikiMIA_length128"
    assert hub.description


def test_a_local_sample_stays_the_default_and_the_demo_is_the_fallback(tmp_path):
    sample = tmp_path / "sample.jsonl"
    sample.write_text("{}\n")
    demo = ReadyExample("Demo", "demo:mcq")
    hub = ReadyExample("Hub", "owner/name", "train")
    assert default_example([demo, ReadyExample("Local", str(sample)), hub]) == 1
    assert default_example([hub, demo]) == 1  # a fresh clone: the demo, which runs offline
    assert default_example([ReadyExample("HumanEval", "humaneval"), hub]) == 0
    assert default_example([]) == 0
    # A page's README tour example wins over a local sample file, so the page asks what the README runs.
    assert default_example([ReadyExample("Local", str(sample)), demo, hub], preferred="demo:mcq") == 1
    assert default_example([ReadyExample("Local", str(sample)), hub], preferred="demo:mcq") == 0
    missing = file_examples({"Here": sample, "Gone": tmp_path / "gone.jsonl"})
    assert [e.label for e in missing] == ["Here"]


def test_choice_kinds():
    assert DatasetChoice("demo:mcq").is_hub is False
    assert DatasetChoice("owner/name", "train").is_hub is True
    assert DatasetChoice(str(Path(__file__))).is_hub is False
    upload = DatasetChoice("x.jsonl", data=b"{}")
    assert upload.is_upload
    assert not upload.is_hub
    assert DatasetChoice(" a.jsonl, ,b/c ").sources == ["a.jsonl", "b/c"]


def _picker_page():
    import streamlit as st

    from ui.dataset_picker import ReadyExample, dataset_picker

    examples = [
        ReadyExample("Hub one", "owner/x", "train", "cfg", "from the hub"),
        ReadyExample("Demo", "demo:mcq", description="shipped with LeakLens"),
    ]
    st.session_state["choice"] = dataset_picker("Data", examples, key="t", several=True)


def test_the_widget_returns_what_was_picked():
    app = AppTest.from_function(_picker_page)
    app.run()
    assert not app.exception, app.exception
    assert app.radio(key="t_source").options == ["Ready example", "Upload a file", "Local path", "Hub dataset id"]
    assert app.selectbox(key="t_example").value == "Demo"  # the demo, not the first entry
    assert app.session_state["choice"] == DatasetChoice("demo:mcq")
    assert any(c.value == "shipped with LeakLens" for c in app.caption)
    app.selectbox(key="t_example").set_value("Hub one").run()
    assert app.session_state["choice"] == DatasetChoice("owner/x", "train", "cfg")

    app.radio(key="t_source").set_value("Local path").run()
    assert app.session_state["choice"] is None  # nothing typed yet
    app.text_input(key="t_path").input("a.jsonl, b.jsonl").run()
    assert app.session_state["choice"].sources == ["a.jsonl", "b.jsonl"]

    app.radio(key="t_source").set_value("Hub dataset id").run()
    assert app.session_state["choice"] is None
    app.text_input(key="t_hub_id").input(" owner/data ")
    app.text_input(key="t_hub_split").input("test")
    app.run()
    assert app.session_state["choice"] == DatasetChoice("owner/data", "test", None)

    app.radio(key="t_source").set_value("Upload a file").run()
    assert app.session_state["choice"] is None
    app.get("file_uploader")[0].upload("mine.jsonl", b'{"text": "x"}\n', "application/jsonl")
    app.run()
    assert app.session_state["choice"] == DatasetChoice("mine.jsonl", data=b'{"text": "x"}\n')


def test_no_examples_means_no_ready_example_kind():
    def page():
        import streamlit as st

        from ui.dataset_picker import dataset_picker

        st.session_state["choice"] = dataset_picker("Data", [], key="t")

    app = AppTest.from_function(page)
    app.run()
    assert app.radio(key="t_source").options == ["Upload a file", "Local path", "Hub dataset id"]
    assert app.session_state["choice"] is None
