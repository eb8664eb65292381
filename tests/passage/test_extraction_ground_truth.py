"""The extraction test on ground truth: a tiny model fine-tuned on half of a slice of the fresh passages.

Forty English-prose passages of 30–90 tokens from the calibration set (written for LeakLens, so the
untrained model has seen none of them): the first of each pair is trained on until the model has learnt it,
the other never shown. The extraction detector, run as a membership column (``mia --methods extraction``),
must continue the trained half verbatim far more often, with AUROC at least 0.9. Measured (60 steps at lr 0.02,
final loss 0.12): AUROC 1.0, every trained passage continued 10 tokens or more exactly, no unseen one; 45 steps
were too few (half the trained passages).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.data.labelled import load_labelled_dataset
from core.engine.bundled import bundled_tokenizer
from core.engine.handle import resolve_model
from core.engine.models import LoadedModel, wrap_model
from core.membership.benchmark import run_membership_benchmark
from core.methods import parse_methods
from core.passage.calibration import load_fresh_passages
from core.store.results import ResultStore
from tests.helpers.fine_tune import tuned_tiny_model

PROSE = ("narrative", "news", "technical", "instructions")


@pytest.fixture(scope="module")
def tuned_on_half() -> tuple[LoadedModel, list[str], list[str]]:
    """(the tiny model fine-tuned on the first of each pair, the trained passages, the unseen ones)."""
    tokenizer = bundled_tokenizer()
    start = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    texts = [
        p.text
        for p in load_fresh_passages()
        if p.form in PROSE and 30 <= len(tokenizer(p.text, add_special_tokens=False)["input_ids"]) <= 90
    ][:40]
    trained, unseen = texts[0::2], texts[1::2]
    model, _ = tuned_tiny_model(trained, start_id=start, steps=60, lr=2e-2)
    return wrap_model(model, tokenizer, spec="tiny-random", start_token_id=start), trained, unseen


@pytest.mark.slow
def test_a_fine_tuned_model_continues_what_it_trained_on_and_extraction_separates_it(tuned_on_half, tmp_path):
    lm, trained, unseen = tuned_on_half
    path = tmp_path / "split.jsonl"
    rows = [{"text": t, "label": 1} for t in trained] + [{"text": t, "label": 0} for t in unseen]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = run_membership_benchmark(
        load_labelled_dataset(str(path)),
        resolve_model("tiny-random", loader=lambda spec: lm),
        parse_methods(["loss", "extraction"]),
        store=ResultStore(tmp_path / "r.sqlite"),
    )
    leading = np.array(result.scores("extraction"))
    labels = np.array(result.labels)
    verbatim_trained = float(np.mean(leading[labels == 1] >= 10))
    verbatim_unseen = float(np.mean(leading[labels == 0] >= 10))
    print(
        "extraction AUROC", result.metrics["extraction"].auroc, "verbatim ≥10 tokens", verbatim_trained, verbatim_unseen
    )
    assert result.metrics["extraction"].auroc >= 0.9
    assert verbatim_trained >= 0.8
    assert verbatim_unseen <= 0.05
