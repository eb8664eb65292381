"""Each passage detector against values worked out by hand on small synthetic records."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest

from core.engine.scoring import TokenRecords, TruncationWarning, score_texts
from core.methods import MethodConfigError, default_methods, parse_method, parse_methods, score_all
from core.methods.loss import Loss
from core.methods.min_k import MinK
from core.methods.min_k_plus_plus import MinKPlusPlus
from core.methods.slope import ProbabilitySlope, linear_fit, slope_series
from core.methods.zlib_ratio import ZlibRatio

LOGPROBS = np.array([-4.0, -1.0, -3.0, -0.5, -2.0])
MU = np.array([-2.0, -2.0, -1.0, -1.5, -3.0])
SIGMA = np.array([1.0, 2.0, 0.5, 1.0, 0.0])
# Context-limited log-probs, rows k = 1, 2 (k = 2 equals the full log-prob for the first token).
KGRAM = np.array([[-5.0, -3.0, -3.0, -2.5, -2.0], [-4.0, -2.0, -3.5, -1.5, -2.0]])


def make_records(text: str = "hello there world again ok", logprobs=LOGPROBS, kgram=KGRAM) -> TokenRecords:
    n = len(logprobs)
    return TokenRecords(
        text=text,
        token_ids=np.arange(n),
        offsets=np.array([[i, i + 1] for i in range(n)]),
        logprobs=np.asarray(logprobs, dtype=float),
        mean_logprob=MU[:n],
        std_logprob=SIGMA[:n],
        entropy=-MU[:n],
        rank=np.ones(n, dtype=np.int64),
        kgram_logprobs=kgram,
    )


def test_loss_is_the_mean_logprob():
    assert Loss().score(make_records()) == pytest.approx(-10.5 / 5)


def test_zlib_divides_the_loss_by_the_compressed_size():
    text = "hello there world again ok"
    size = len(zlib.compress(text.encode()))
    assert ZlibRatio().score(make_records(text)) == pytest.approx(-(10.5 / 5) / size)


def test_min_k_averages_the_lowest_fraction():
    records = make_records()
    assert MinK(20).score(records) == pytest.approx(-4.0)  # 1 of 5 tokens
    assert MinK(40).score(records) == pytest.approx((-4.0 - 3.0) / 2)
    assert MinK(100).score(records) == pytest.approx(-10.5 / 5)
    assert MinK(1).score(records) == pytest.approx(-4.0)  # at least one token


def test_min_k_plus_plus_standardises_by_the_next_token_distribution():
    # (lp - mu) / sigma: -2, 0.5, -4, 1, and 0 where sigma = 0.
    records = make_records()
    assert MinKPlusPlus(20).score(records) == pytest.approx(-4.0)
    assert MinKPlusPlus(40).score(records) == pytest.approx((-4.0 - 2.0) / 2)
    assert MinKPlusPlus(100).score(records) == pytest.approx((-2 + 0.5 - 4 + 1 + 0) / 5)


def test_linear_fit_matches_a_hand_computed_line_and_polyfit():
    a, b = linear_fit(np.array([1.0, 3.0, 5.0]))
    assert (a, b) == pytest.approx((1.0, 2.0))
    y = np.array([0.3, -1.2, 2.5, 0.7, 4.0, -0.1])
    b_np, a_np = np.polyfit(np.arange(len(y)), y, 1)
    assert linear_fit(y) == pytest.approx((a_np, b_np))
    assert linear_fit(np.array([2.0])) == (2.0, 0.0)


def test_slope_variants_by_hand():
    records = make_records()
    # y = [-4, -1, -3, -0.5, -2], ȳ = -2.1; x − x̄ = [-2, -1, 0, 1, 2]:
    # b = Σ(x − x̄)·y / Σ(x − x̄)² = (8 + 1 + 0 − 0.5 − 4) / 10 = 0.45.
    assert ProbabilitySlope().score(records) == pytest.approx(0.45)
    # mean-adjusted = ȳ − b (the research's b − ȳ, negated so higher = member) = −2.1 − 0.45
    assert ProbabilitySlope(adjust="mean").score(records) == pytest.approx(-2.1 - 0.45)
    assert ProbabilitySlope(adjust="z").score(records) == pytest.approx((-2.1 - 0.45) / LOGPROBS.std())


def test_slope_kgram_normalisation_subtracts_the_local_context_logprob():
    records = make_records()
    series = slope_series(records, "logprob", kgram=1)
    np.testing.assert_allclose(series, [1.0, 2.0, 0.0, 2.0, 0.0])
    # slope of [1, 2, 0, 2, 0]: Σ(x−x̄)(y−ȳ) = (−2)(0)+(−1)(1)+0+(1)(1)+(2)(−1) = −2; Σ(x−x̄)² = 10.
    assert ProbabilitySlope(kgram=1).score(records) == pytest.approx(-0.2)
    assert ProbabilitySlope(kgram=2, adjust="mean").score(records) == pytest.approx(
        (LOGPROBS - KGRAM[1]).mean() - linear_fit(LOGPROBS - KGRAM[1])[1]
    )


def test_slope_on_probabilities():
    records = make_records()
    p = np.exp(LOGPROBS)
    assert ProbabilitySlope(values="prob").score(records) == pytest.approx(np.polyfit(np.arange(5), p, 1)[0])
    with_kgram = ProbabilitySlope(values="prob", kgram=1).score(records)
    assert with_kgram == pytest.approx(np.polyfit(np.arange(5), p - np.exp(KGRAM[0]), 1)[0])


def test_z_adjust_of_a_constant_series_is_zero():
    records = make_records(logprobs=np.full(5, -1.0))
    assert ProbabilitySlope(adjust="z").score(records) == 0.0


def test_kgram_slope_without_kgram_records_explains_itself():
    records = make_records(kgram=None)
    with pytest.raises(ValueError, match="k=1 were not computed"):
        ProbabilitySlope(kgram=1).score(records)


def test_default_methods_have_unique_keys_and_descriptions():
    methods = default_methods()
    keys = [m.key for m in methods]
    assert len(keys) == len(set(keys)) == 16
    assert all(m.description and m.label for m in methods)
    assert max(m.kgram_needed for m in methods) == 6


def test_parse_method_specs():
    assert parse_method("min_k:k=10") == MinK(10.0)
    assert parse_method("min_k_pp_20") == MinKPlusPlus(20.0)
    assert parse_method("slope:kgram=3,adjust=z") == ProbabilitySlope(kgram=3, adjust="z")
    assert [m.key for m in parse_methods(["loss;min_k:k=5", "loss"])] == ["loss", "min_k_5"]
    assert len(parse_methods(None)) == 16


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nonsense", "Unknown method 'nonsense'"),
        ("min_k:q=3", "has no parameter"),
        ("min_k:k=abc", "Could not read 'abc'"),
        ("min_k:k=0", "percentage"),
        ("slope:kgram=9", "kgram must be"),
        ("slope:adjust=median", "adjust must be"),
        ("min_k:k", "name=value"),
    ],
)
def test_bad_method_specs_get_clear_errors(spec, message):
    with pytest.raises(MethodConfigError, match=message):
        parse_method(spec)


def test_every_default_method_scores_real_records(tiny_lm):
    records = score_texts(tiny_lm, ["A real passage scored by a real (tiny) model."])[0]
    scores = score_all(default_methods(), records)
    assert len(scores) == 16
    assert all(math.isfinite(v) for v in scores.values())
    assert scores["loss"] == pytest.approx(-records.loss)


def test_zlib_compresses_only_the_scored_part_of_a_truncated_passage():
    """Truncated to its first tokens, a passage is compared with the size of exactly those tokens' text."""
    text = "hello there world again ok" + " and a long tail the model never scored" * 40
    records = make_records(text)  # five 1-character tokens: "hello" is all that was scored
    records = TokenRecords(**{**records.__dict__, "n_dropped": 300})
    scored = text[:5]
    assert ZlibRatio().score(records) == pytest.approx(-(10.5 / 5) / len(zlib.compress(scored.encode())))


def test_zlib_of_a_real_truncated_passage_matches_the_hand_computed_ratio(tiny_lm):
    text = "The quick brown fox jumps over the lazy dog. " * 30
    with pytest.warns(TruncationWarning, match="the last 289 tokens were dropped"):
        (records,) = score_texts(tiny_lm, [text], kgram_max=0, max_tokens=12)
    assert records.n_tokens == 12
    assert records.n_dropped > 0
    end = int(records.offsets[-1, 1])
    scored = text[:end]
    assert scored == tiny_lm.tokenizer.decode(records.token_ids.tolist())
    expected = -records.loss / len(zlib.compress(scored.encode("utf-8")))
    assert ZlibRatio().score(records) == pytest.approx(expected, rel=1e-12)
