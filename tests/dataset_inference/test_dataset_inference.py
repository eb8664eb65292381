"""Dataset inference proven on ground truth: a model we fine-tune on half of a set of passages.

The passages are LeakLens's own calibration set (written for the project, never published before it; its
first 72 passages, ``ORIGINAL_SET``),
so the untrained tiny model has seen none of them. Fine-tuned on half, dataset inference must find that
half (p < 0.01); on the untrained model, or on two halves neither model trained on, it must rarely
cry wolf (at most 10% of 20 random splits at alpha = 0.05). Scores are computed once and re-split.
"""

from __future__ import annotations

import json
from html import escape

import numpy as np
import pytest

from core.cli import main
from core.config import SHARED_DATA_DIR
from core.data.text_sets import TextSet, load_text_set
from core.dataset_inference.run import KIND, inference_from_run, run_dataset_inference
from core.dataset_inference.statistic import dataset_inference
from core.engine.bundled import bundled_tokenizer, tiny_random_model
from core.engine.handle import resolve_model
from core.engine.models import wrap_model
from core.methods import parse_methods
from core.passage.calibration import FRESH_PASSAGES_PATH
from core.results.report import stored_runs_report
from core.store.results import ResultStore
from core.viz.reports.dataset_inference import inference_report
from tests.helpers.fine_tune import tuned_tiny_model

METHODS = ["loss", "zlib", "min_k:k=20", "min_k_pp:k=20", "slope"]
N_SEEDS = 20


def _halves(passages: TextSet) -> tuple[TextSet, TextSet]:
    def part(start: int, name: str) -> TextSet:
        return TextSet(name, passages.texts[start::2], passages.ids[start::2], passages.source, passages.text_col, [])

    return part(0, "trained half"), part(1, "unseen half")


ORIGINAL_SET = 72
"""The calibration set's first 72 passages (English prose, 54–282 tokens): the set these figures were measured
on. The later passages add one-sentence, code and non-English text the one-batch fine-tune below was not sized
for (its logits would need about 20 GB)."""


@pytest.fixture(scope="module")
def passages() -> TextSet:
    full = load_text_set(str(FRESH_PASSAGES_PATH))
    n = ORIGINAL_SET
    return TextSet(full.name, full.texts[:n], full.ids[:n], full.source, full.text_col, [])


@pytest.fixture(scope="module")
def models(passages):
    """(untrained, fine-tuned on the first half) tiny random Llamas with the bundled tokenizer."""
    tokenizer = bundled_tokenizer()
    start = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    base = tiny_random_model(tokenizer, seed=0)
    tuned, _ = tuned_tiny_model(_halves(passages)[0].texts, start_id=start, steps=12, lr=3e-2)
    return (
        wrap_model(base, tokenizer, spec="tiny-random", start_token_id=start),
        wrap_model(tuned, tokenizer, spec="tiny-random", start_token_id=start),
    )


def _run(lm, suspect, validation, tmp_path, name):
    # each model in a store of its own: both go by the spec "tiny-random", so they must not share scores
    return run_dataset_inference(
        suspect,
        validation,
        resolve_model("tiny-random", loader=lambda spec: lm),
        parse_methods(METHODS),
        store=ResultStore(tmp_path / f"{name}.sqlite"),
    )


def _false_positive_rate(scores, rows: np.ndarray) -> float:
    features = np.column_stack([scores.scores(k) for k in scores.method_keys])[rows]
    rejections = 0
    for seed in range(N_SEEDS):
        suspect = np.zeros(rows.size, bool)
        suspect[np.random.default_rng(seed).permutation(rows.size)[: rows.size // 2]] = True
        rejections += dataset_inference(features, suspect, scores.method_keys, n_splits=5, seed=seed).p_value < 0.05
    return rejections / N_SEEDS


@pytest.mark.slow
def test_the_trained_half_is_found_and_untrained_halves_are_not(models, passages, tmp_path):
    base, tuned = models
    trained, unseen = _halves(passages)
    found = _run(tuned, trained, unseen, tmp_path, "tuned")
    assert found.result.p_value < 0.01, found.result.to_dict()
    assert found.finding.level == "strong"
    assert "trained on trained half" in found.finding.headline
    assert found.scores.blind_baseline.ci[0] <= 0.5  # same distribution: wording alone does not separate them
    # The untrained model: no trace of either half.
    untrained = _run(base, trained, unseen, tmp_path, "base")
    assert untrained.result.p_value > 0.05
    assert untrained.finding.level in ("none", "inconclusive")
    # False positives over random splits, scores computed once: all passages on the untrained model, and the
    # unseen half alone on the fine-tuned model.
    assert _false_positive_rate(untrained.scores, np.arange(len(passages))) <= 0.10
    unseen_rows = np.flatnonzero(np.array(found.scores.labels) == 0)
    assert _false_positive_rate(found.scores, unseen_rows) <= 0.10


@pytest.mark.slow
def test_a_stored_run_reopens_without_the_model(models, passages, tmp_path):
    _, tuned = models
    trained, unseen = _halves(passages)
    store = ResultStore(tmp_path / "store.sqlite")
    first = run_dataset_inference(
        trained, unseen, resolve_model("tiny-random", loader=lambda spec: tuned), parse_methods(METHODS), store=store
    )
    (run,) = store.list_runs(KIND)
    again = inference_from_run(store, run)
    assert again.result.to_dict() == first.result.to_dict()
    assert again.finding == first.finding
    # and exported from the store alone, opening with the verdict
    html = stored_runs_report(store, [run])
    assert html.index(escape(first.finding.headline)) < html.index("<section")
    assert inference_report(first).count("<script") == 1 + 3  # Plotly once, then the three charts


@pytest.mark.slow
def test_a_date_split_set_is_confounded_not_strong(tiny_lm, tmp_path, capsys):
    """WikiMIA's members and non-members differ in wording: the tool must say so rather than claim use."""
    data = str(SHARED_DATA_DIR / "wikimia_length128.parquet")
    out = tmp_path / "di.json"
    code = main(
        [
            "dataset-inference",
            "--suspect",
            data,
            "--suspect-where",
            "label=1",
            "--validation",
            data,
            "--validation-where",
            "label=0",
            "--model",
            "tiny-random",
            "--limit",
            "60",
            "--splits",
            "5",
            "--methods",
            "loss",
            "zlib",
            "--out",
            str(out),
            "--store",
            str(tmp_path / "s.sqlite"),
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    verdict = printed.index("finding (confounded): Not a fair test: wording alone separates")
    assert verdict < printed.index("p-value")  # the verdict before the numbers
    payload = json.loads(out.read_text())
    assert payload["finding"]["level"] == "confounded"
    assert payload["blind_baseline"]["ci"][0] > 0.5
    assert (payload["n_suspect"], payload["n_validation"]) == (60, 60)
    assert {"p_value", "weights", "provenance"} <= payload.keys()
