"""AppTest of the Audit page: the plan before Run (what runs, how long, why not the rest), a builtin reference set
adding loss delta to a code benchmark, and a run ending in the verdict and the evidence table, the same finding
as the command's for the same benchmark."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from streamlit.testing.v1 import AppTest

from core.audit.run import KIND
from core.cli import main
from core.data.problems import builtin_problems
from core.store.results import ResultStore

REPO = Path(__file__).resolve().parents[2]
PAGE = str(REPO / "pages" / "0_Audit_a_model.py")


def _page(monkeypatch) -> AppTest:
    monkeypatch.setenv("LEAKLENS_DEFAULT_MODEL", "tiny-random")
    app = AppTest.from_file(PAGE, default_timeout=600)
    app.run()
    assert not app.exception, app.exception
    return app


def test_the_plan_is_shown_before_run_with_times_and_why_not_the_rest(monkeypatch):
    app = _page(monkeypatch)
    assert app.selectbox(key="audit_example").value == "General-knowledge questions (demo)"
    plan = next(m.value for m in app.markdown if m.value.startswith("**The plan:"))
    assert plan.startswith("**The plan: 4 tests, about ")
    table = app.dataframe[0].value
    assert list(table["test"]) == ["Benchmark order", "Multiple-choice memorisation", "Option order", "Extraction"]
    assert all(t.startswith("about ") for t in table["expected time"])
    captions = [c.value for c in app.caption]
    assert (
        "Not run · Loss delta: needs solutions and a reference set (this benchmark's answers only pick an option)"
        in (captions)
    )
    assert "Not run · Dataset inference: needs a validation set of held-out texts from the same source" in captions
    assert "Not run · Overlap: needs a training-data index to search" in captions
    assert not app.button(key="audit_run").disabled


def test_a_builtin_reference_set_adds_loss_delta_to_a_code_benchmark(monkeypatch, tmp_path):
    code = tmp_path / "code.jsonl"
    rows = sorted(builtin_problems().problems, key=lambda p: len(p.prompt))[:8]
    code.write_text(
        "".join(
            json.dumps({"task_id": p.task_id, "prompt": p.prompt, "canonical_solution": p.solution}) + "\n"
            for p in rows
        )
    )
    app = _page(monkeypatch)
    app.radio(key="audit_source").set_value("Local path").run()
    app.text_input(key="audit_path").input(str(code)).run()
    assert "Not run · Loss delta: needs a reference set of fresh problems of the same kind" in [
        c.value for c in app.caption
    ]
    app.selectbox(key="audit_reference").set_value("builtin").run()
    assert not app.exception, app.exception
    assert "Loss delta" in list(app.dataframe[0].value["test"])
    assert not any(c.value.startswith("Not run · Loss delta") for c in app.caption)


def test_a_run_ends_in_the_command_s_verdict_and_the_evidence_table(monkeypatch, tmp_path, tiny_calibration):
    store = tmp_path / "store.sqlite"
    shutil.copyfile(tiny_calibration, store)
    monkeypatch.setenv("LEAKLENS_STORE", str(store))
    out = tmp_path / "audit.json"
    assert main(["audit", "--model", "tiny-random", "--benchmark", "demo:mcq", "--out", str(out)]) == 0
    command = json.loads(out.read_text())
    app = _page(monkeypatch)
    app.button(key="audit_run").click().run()
    assert not app.exception, app.exception
    assert not app.error, [e.value for e in app.error]
    banners = [m.value for m in app.markdown if "leaklens-finding" in m.value]
    assert banners and command["finding"]["headline"].split(":")[0] in banners[0]
    tables = [h.proto.body for h in app.get("html") if "ll-evidence" in h.proto.body]
    assert len(tables) == 1 and tables[0].count("<tr>") == 5  # the header and the four tests
    (audit,) = ResultStore(store).list_runs(KIND)
    assert audit.run_id == command["run_id"]  # the page asked the same question and read the command's audit
