"""The scoring engine against independent slow computations (one forward pass per token)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from core.engine.scoring import TruncationWarning, encode_texts, score_texts
from core.errors import InputTextError

TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "Colourless green ideas sleep furiously, said the linguist, and nobody laughed.",
    "Short one.",
    "A somewhat longer passage about rivers, bridges and the people who cross them every single morning.",
]


def _next_token_logprobs(lm, context: list[int]) -> torch.Tensor:
    """log p(· | context) from a forward pass over exactly ``context`` (no batching, no padding)."""
    with torch.inference_mode():
        logits = lm.model(input_ids=torch.tensor([context]), use_cache=False).logits[0, -1].double()
    return torch.log_softmax(logits, dim=-1)


def _ids(lm, text: str) -> list[int]:
    return list(lm.tokenizer(text, add_special_tokens=False)["input_ids"])


def test_logprob_of_each_token_comes_from_the_previous_position(tiny_lm):
    text = TEXTS[1]
    records = score_texts(tiny_lm, [text], kgram_max=0)[0]
    ids = _ids(tiny_lm, text)
    assert records.token_ids.tolist() == ids
    for i, token in enumerate(ids):
        # Independent path: feed exactly the tokens before x_i and read the last position.
        dist = _next_token_logprobs(tiny_lm, [tiny_lm.start_token_id] + ids[:i])
        assert records.logprobs[i] == pytest.approx(float(dist[token]), abs=1e-4)
        p = dist.exp()
        mu = float((p * dist).sum())
        sigma = float(np.sqrt(max(0.0, float((p * dist**2).sum()) - mu**2)))
        assert records.mean_logprob[i] == pytest.approx(mu, abs=1e-4)
        assert records.std_logprob[i] == pytest.approx(sigma, abs=1e-4)
        assert records.entropy[i] == pytest.approx(-mu, abs=1e-4)
        assert records.rank[i] == int((dist > dist[token]).sum()) + 1


def test_batched_equals_one_at_a_time(tiny_lm):
    batched = score_texts(tiny_lm, TEXTS, kgram_max=6, token_budget=4096)
    # A tiny budget forces several batches with different padding.
    small_batches = score_texts(tiny_lm, TEXTS, kgram_max=6, token_budget=40)
    for text, together, split in zip(TEXTS, batched, small_batches):
        alone = score_texts(tiny_lm, [text], kgram_max=6)[0]
        assert together.text == text
        for other in (together, split):
            assert other.token_ids.tolist() == alone.token_ids.tolist()
            for field in ("logprobs", "mean_logprob", "std_logprob", "entropy", "kgram_logprobs"):
                np.testing.assert_allclose(getattr(other, field), getattr(alone, field), atol=1e-4)
            assert other.rank.tolist() == alone.rank.tolist()


def test_kgram_windows_equal_direct_context_limited_passes(tiny_lm):
    text = TEXTS[0]
    records = score_texts(tiny_lm, [text], kgram_max=6)[0]
    ids = _ids(tiny_lm, text)
    assert records.kgram_logprobs.shape == (6, len(ids))
    assert not np.isnan(records.kgram_logprobs).any()
    for k in range(1, 7):
        for i, token in enumerate(ids):
            context = [tiny_lm.start_token_id] + ids[max(0, i - (k - 1)) : i]
            expected = float(_next_token_logprobs(tiny_lm, context)[token])
            assert records.kgram(k)[i] == pytest.approx(expected, abs=1e-4), (k, i)
    # With the full context available, the largest k for the first tokens equals the plain log-prob.
    assert records.kgram(6)[:6] == pytest.approx(records.logprobs[:6], abs=1e-4)


def test_offsets_map_tokens_back_to_the_text(tiny_lm):
    text = "Prices rose 3.5% in Zürich — naïve café owners said “enough”."
    records = score_texts(tiny_lm, [text], kgram_max=0)[0]
    assert "".join(records.tokens) == text
    assert records.offsets[0, 0] == 0
    assert records.offsets[-1, 1] == len(text)
    table = records.table()
    assert len(table) == records.n_tokens
    assert table[3]["token"] == records.tokens[3]
    assert table[3]["prob"] == pytest.approx(np.exp(records.logprobs[3]))


def test_prefix_conditions_without_being_scored(tiny_lm):
    prefix, text = "An unrelated opening sentence.", TEXTS[2]
    records = score_texts(tiny_lm, [text], prefix=prefix, kgram_max=2)[0]
    ids, prefix_ids = _ids(tiny_lm, text), _ids(tiny_lm, prefix)
    assert records.token_ids.tolist() == ids
    for i, token in enumerate(ids):
        dist = _next_token_logprobs(tiny_lm, [tiny_lm.start_token_id] + prefix_ids + ids[:i])
        assert records.logprobs[i] == pytest.approx(float(dist[token]), abs=1e-4)
    # k-gram contexts never reach into the prefix.
    first_alone = float(_next_token_logprobs(tiny_lm, [tiny_lm.start_token_id])[ids[0]])
    assert records.kgram(2)[0] == pytest.approx(first_alone, abs=1e-4)


def test_loss_and_perplexity_follow_the_logprobs(tiny_lm):
    records = score_texts(tiny_lm, [TEXTS[0]], kgram_max=0)[0]
    assert records.loss == pytest.approx(-records.logprobs.mean())
    assert records.perplexity == pytest.approx(np.exp(-records.logprobs.mean()))


def test_over_long_text_is_truncated_with_a_warning(tiny_lm):
    text = " ".join(["word"] * 50)
    n = len(_ids(tiny_lm, text))
    with pytest.warns(TruncationWarning, match=rf"{n} tokens.*last {n - 10} tokens were dropped"):
        records = score_texts(tiny_lm, [text], max_tokens=10, kgram_max=0)[0]
    assert records.n_tokens == 10
    assert records.n_dropped == n - 10


def test_text_longer_than_the_model_context_is_cut_to_fit(tiny_lm):
    too_long = "lorem ipsum " * tiny_lm.max_context
    with pytest.warns(TruncationWarning):
        encoded = encode_texts(tiny_lm, [too_long])[0]
    assert len(encoded.context) + len(encoded.ids) == tiny_lm.max_context
    assert encoded.n_dropped > 0


@pytest.mark.parametrize("bad", ["", "   \n\t"])
def test_empty_text_names_the_row(tiny_lm, bad):
    with pytest.raises(InputTextError, match="Passage 2 of 2 is empty"):
        score_texts(tiny_lm, ["fine text", bad])


def test_non_text_row_is_rejected(tiny_lm):
    with pytest.raises(InputTextError, match="The passage is not text"):
        score_texts(tiny_lm, [None])  # type: ignore[list-item]


def test_progress_reports_every_batch(tiny_lm):
    calls: list[tuple[int, int]] = []
    score_texts(tiny_lm, TEXTS, kgram_max=0, token_budget=40, progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (len(TEXTS), len(TEXTS))
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert len(calls) > 1


def test_bad_arguments_are_rejected(tiny_lm):
    with pytest.raises(ValueError, match="kgram_max"):
        score_texts(tiny_lm, ["x y"], kgram_max=7)
    with pytest.raises(ValueError, match="token_budget"):
        score_texts(tiny_lm, ["x y"], token_budget=0)


def test_no_warning_for_text_that_fits(tiny_lm):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        score_texts(tiny_lm, [TEXTS[0]], kgram_max=0)


def test_single_passage_errors_name_the_passage_not_a_row(tiny_lm):
    """One passage has no row number: its errors never say "Row 0"; max_tokens 0 is about max_tokens."""
    with pytest.raises(InputTextError) as info:
        score_texts(tiny_lm, ["   "])
    assert str(info.value).startswith("The passage is empty")
    assert "Row" not in str(info.value)
    with pytest.raises(InputTextError, match=r"max_tokens \(--max-tokens\) must be at least 1, got 0") as info:
        score_texts(tiny_lm, ["fine text"], max_tokens=0)
    assert "prefix" not in str(info.value)


def test_lone_surrogates_are_named_with_their_byte(tiny_lm):
    """Bytes that are not UTF-8 (kept by Python as lone surrogates) are reported, never a tokenizer TypeError."""
    escaped = b"caf\xe9 au lait".decode("utf-8", "surrogateescape")
    with pytest.raises(InputTextError, match=r"The passage is not UTF-8 text \(byte 3 is invalid\): 0xe9\."):
        score_texts(tiny_lm, [escaped])
    with pytest.raises(InputTextError, match=r"Passage 2 of 2 holds a lone surrogate U\+D800 at character 2"):
        score_texts(tiny_lm, ["fine", "ab\ud800cd"])


class CharCounter:
    """The real tokenizer, recording how many characters each call hands it (a spy, not a stand-in)."""

    def __init__(self, tokenizer):
        self._tokenizer = tokenizer
        self.chars: list[int] = []

    def __call__(self, text, **kwargs):
        self.chars.append(len(text))
        return self._tokenizer(text, **kwargs)

    def __getattr__(self, name):
        return getattr(self._tokenizer, name)


def test_long_passage_is_tokenized_only_as_far_as_it_is_scored(tiny_lm):
    """Past COUNT_ALL_CHARS only a bounded prefix is tokenized; the scored tokens and scores are exactly
    those of tokenizing the whole text."""
    import dataclasses

    from core.engine.scoring import COUNT_ALL_CHARS
    from core.methods import default_methods, score_all

    words = [f"w{i % 997} lorem{i % 13}, ipsum" for i in range(COUNT_ALL_CHARS // 10)]
    long_text = " ".join(words)
    assert len(long_text) > COUNT_ALL_CHARS
    spy = CharCounter(tiny_lm.tokenizer)
    lm = dataclasses.replace(tiny_lm, tokenizer=spy)
    with pytest.warns(TruncationWarning, match="has about"):
        (bounded,) = score_texts(lm, [long_text], max_tokens=300)
    assert max(spy.chars) < 20_000  # a prefix, not the whole passage
    full_ids = tiny_lm.tokenizer(long_text, add_special_tokens=False, return_offsets_mapping=True)
    assert bounded.token_ids.tolist() == full_ids["input_ids"][:300]
    assert [tuple(o) for o in bounded.offsets.tolist()] == [tuple(o) for o in full_ids["offset_mapping"][:300]]
    true_dropped = len(full_ids["input_ids"]) - 300
    assert not bounded.n_dropped_exact
    assert abs(bounded.n_dropped - true_dropped) < 0.2 * true_dropped
    # The same passage under the threshold is tokenized whole: same records and scores, exact count.
    short_text = long_text[: COUNT_ALL_CHARS - 1]
    with pytest.warns(TruncationWarning):
        (whole,) = score_texts(tiny_lm, [short_text], max_tokens=300)
    assert whole.n_dropped_exact
    assert whole.token_ids.tolist() == bounded.token_ids.tolist()
    np.testing.assert_array_equal(whole.logprobs, bounded.logprobs)
    methods = default_methods()
    assert score_all(methods, whole) == score_all(methods, bounded)


def test_huge_passage_never_reaches_the_tokenizer_whole(tiny_lm):
    import dataclasses

    huge = "All work and no play makes Jack a dull boy. " * 230_000  # about 10 MB
    spy = CharCounter(tiny_lm.tokenizer)
    lm = dataclasses.replace(tiny_lm, tokenizer=spy)
    with pytest.warns(TruncationWarning):
        (records,) = score_texts(lm, [huge], kgram_max=0)
    assert records.n_tokens == tiny_lm.max_context - 1
    assert sum(spy.chars) < 50_000
    assert records.n_dropped > 2_000_000
