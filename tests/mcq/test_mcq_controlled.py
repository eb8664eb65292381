"""Controlled memorisation: a tiny model trained on a few questions must complete their options,
not those of unseen questions, and must lose that ability when the options are shuffled."""

from __future__ import annotations

import pytest

from core.config import SHARED_DATA_DIR
from core.data.questions import PromptLayout, load_mcq
from core.engine.bundled import bundled_tokenizer
from core.engine.models import wrap_model
from tests.helpers.fine_tune import tuned_tiny_model
from tests.helpers.mcq import run_benchmark

DATA = SHARED_DATA_DIR
N_TRAINED = 4


@pytest.fixture(scope="module")
def memorised():
    """The tiny random Llama fine-tuned with AdamW on the full prompt text of the first questions."""
    tokenizer = bundled_tokenizer()
    questions = load_mcq(str(DATA / "mmlu_sample.jsonl"), limit=40).questions
    # Short questions keep training to a few seconds on CPU.
    short = [q for q in questions if len(q.question) < 160][: 2 * N_TRAINED]
    trained, unseen = short[:N_TRAINED], short[N_TRAINED:]
    start = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    layout = PromptLayout()
    texts = [layout.render(q)[0] for q in trained]
    model, final_loss = tuned_tiny_model(texts, start_id=start, steps=150, lr=1e-2)
    lm = wrap_model(model.eval(), tokenizer, spec="tiny-memorised", start_token_id=start)
    return lm, trained, unseen, final_loss


@pytest.mark.slow
def test_memorised_questions_score_near_four_and_unseen_near_zero(memorised):
    lm, trained, unseen, final_loss = memorised
    assert final_loss < 0.05
    report = run_benchmark(lm, trained + unseen, shuffle_seed=3, permutation=True)
    trained_ids = [q.index for q in trained]
    unseen_ids = [q.index for q in unseen]
    for kind in ("next_token", "completion"):
        assert report.original.summary(kind, trained_ids).mean >= 3.5, kind
        assert report.original.summary(kind, unseen_ids).mean <= 0.5, kind
        # Shuffling moves every option after a different one, so the memorised continuations break.
        shuffled_trained = report.shuffled.summary(kind, trained_ids).mean
        assert shuffled_trained < report.original.summary(kind, trained_ids).mean - 1.0, kind
        assert report.mitigation.drop(kind) > 0.5
    # The memorised order is the most likely of all 24 for the trained questions.
    ranks = {q.index: q.rank for q in report.permutation.questions}
    assert all(ranks[i] == 1 for i in trained_ids)
    # Half the questions memorised word for word: a strong verdict, said "out of 4".
    from core.mcq.finding import mcq_finding

    finding = mcq_finding(report)
    assert finding.level == "strong"
    assert "of 4 options" in finding.headline


def test_memorised_completions_read_off_the_rendering_equal_the_per_probe_path(memorised):
    """Memorised options are followed through the rendering's own pass to their end: still the same results."""
    from core.mcq.completion import MCQConfig, run_mcq_sets
    from tests.helpers.mcq import run_mcq

    lm, trained, unseen, _ = memorised
    questions = trained + unseen
    fast = run_mcq_sets(lm, [questions], MCQConfig())[0]
    slow = run_mcq(lm, questions, MCQConfig(), per_probe=True)
    assert [r.probes for r in fast.results] == [r.probes for r in slow.results]
    assert fast.summary("completion", [q.index for q in trained]).mean >= 3.5
