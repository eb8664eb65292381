"""``inspect_passage``, the one entry both front ends call: what the result carries so a view needs no model, and
a reference model loaded beside the chosen one rather than from its name."""

from __future__ import annotations

import shutil

import pytest

from core.data.examples import GETTYSBURG
from core.engine.bundled import tiny_random_model
from core.engine.handle import resolve_model
from core.engine.models import wrap_model
from core.engine.scoring import score_texts
from core.methods.base import MethodConfigError
from core.methods.reference import ReferenceModel, reference_source
from core.passage.inspection import reference_points
from core.passage.reading import placement_summary, reference_scale
from core.passage.run import inspect_passage
from core.passage.stored import inspection_from_run
from core.store.results import ResultStore


@pytest.fixture(scope="module")
def other_lm(tiny_lm):
    model = tiny_random_model(tiny_lm.tokenizer, seed=7)
    return wrap_model(model, tiny_lm.tokenizer, spec="tiny-random-7", start_token_id=tiny_lm.start_token_id)


def test_the_result_carries_the_examples_scale_and_its_stored_run_keeps_it(tiny_lm, tiny_calibration, tmp_path):
    """The built-in examples are scored with the passage, so the page's reading and a shared link's (no model at
    hand) show the same scale; the stored run reads them back."""
    path = tmp_path / "results.sqlite"
    shutil.copy(tiny_calibration, path)
    store = ResultStore(path)
    model = resolve_model("tiny-random", loader=lambda _: tiny_lm)
    result = inspect_passage(model, [("Passage", GETTYSBURG.text)], store=store, extraction=False)
    assert result.references == tuple(reference_points(tiny_lm))
    assert {r.kind for r in result.references} == {"famous", "fresh"}
    assert result.references_note == ""
    again = inspection_from_run(store, store.get_run(result.run_id))
    assert again.references == result.references
    assert placement_summary(again, 0) == placement_summary(result, 0)
    scale = reference_scale(again, 0)
    assert "this passage is the famous example" in scale  # never set beside itself
    assert "freshly written example" in scale


def test_reference_points_are_scored_once_per_model_source(tiny_lm, other_lm, monkeypatch):
    import core.passage.inspection as inspection

    calls = []
    real = inspection.analyse_passages

    def counted(lm, *args, **kwargs):
        calls.append(lm)
        return real(lm, *args, **kwargs)

    monkeypatch.setattr(inspection, "analyse_passages", counted)
    first = reference_points(other_lm)
    assert reference_points(other_lm) == first
    assert calls in ([other_lm], [])  # scored here once (or already earlier in this process)
    assert [p.perplexity for p in reference_points(tiny_lm)] != [p.perplexity for p in first]  # its own numbers


def test_a_reference_method_scores_against_the_model_loaded_beside_the_chosen_one(tiny_lm, other_lm):
    models = {"tiny-random": tiny_lm, "tiny-random-7": other_lm}
    model = resolve_model("tiny-random", loader=models.__getitem__)
    method = ReferenceModel(reference="tiny-random-7")
    result = inspect_passage(model, [("Passage", GETTYSBURG.text)], store=ResultStore(), methods=[method], judge=False)
    (passage,) = result.passages
    (reference,) = score_texts(other_lm, [GETTYSBURG.text], kgram_max=0)
    assert passage.analysis.scores[method.key] == pytest.approx(reference.loss - passage.analysis.records.loss)


def test_a_reference_model_comes_from_the_handle_never_from_its_name_alone(tiny_lm, other_lm):
    model = resolve_model("tiny-random", loader={"tiny-random": tiny_lm, "tiny-random-7": other_lm}.__getitem__)
    assert reference_source(model, [ReferenceModel(reference="tiny-random-7")]) is other_lm
    assert reference_source(model, []) is None
    with pytest.raises(MethodConfigError, match="must differ from the target"):
        reference_source(model, [ReferenceModel(reference=" tiny-random ")])
    with pytest.raises(MethodConfigError, match="one reference model"):
        reference_source(model, [ReferenceModel(reference="a"), ReferenceModel(reference="b")])
    with pytest.raises(MethodConfigError, match="was not loaded"):
        from core.methods.auxiliary import compute_auxiliary

        records = score_texts(tiny_lm, [GETTYSBURG.text], kgram_max=0)
        compute_auxiliary(tiny_lm, [GETTYSBURG.text], [ReferenceModel(reference="tiny-random-7")], records)
