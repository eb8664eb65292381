"""Confidence curves, their Plotly figure, and the token-table CSV, against hand-computed values."""

from __future__ import annotations

import csv
import io
import math

import numpy as np
import pytest

from core.methods.slope import ProbabilitySlope
from core.viz.token_curve import confidence_curve, confidence_figure, display_token, y_axis_title
from core.viz.token_table import token_table_csv
from tests.viz.test_heatmap import make_records

TEXT = "<b>one two\nthree"
SPANS = [(0, 3), (3, 6), (6, 10), (10, 16)]
# log-probs -3, -2, -1.5, -0.5: hand fit over x = 0..3 gives b = 4/5 = 0.8, a = -1.75 - 0.8*1.5 = -2.95.
LOGPROBS = [-3.0, -2.0, -1.5, -0.5]


def records(kgram: np.ndarray | None = None):
    return make_records(TEXT, SPANS, list(np.exp(LOGPROBS)), ranks=[9, 3, 2, 1], kgram=kgram)


def test_logprob_curve_and_fitted_line_match_the_hand_fit():
    curve = confidence_curve(records(), "A")
    np.testing.assert_allclose(curve.y, LOGPROBS)
    assert math.isclose(curve.slope, 0.8)
    assert math.isclose(curve.intercept, -2.95)
    np.testing.assert_allclose(curve.fitted, [-2.95, -2.15, -1.35, -0.55])
    # Population std of y: sqrt((1.25² + 0.25² + 0.25² + 1.25²) / 4) = sqrt(0.8125).
    assert math.isclose(curve.mean_adjusted, -1.75 - 0.8)  # ȳ − b
    assert math.isclose(curve.z_adjusted, -2.55 / math.sqrt(0.8125))
    assert curve.tokens == ("<b>", "one", " two", "\nthree")
    assert list(curve.ranks) == [9, 3, 2, 1]


def test_curve_numbers_agree_with_the_slope_detectors_and_numpy():
    kgram = np.array([[-4.0, -4.0, -4.0, -4.0], [-3.5, -2.5, -2.0, -0.5]])
    recs = records(kgram)
    for values in ("logprob", "prob"):
        for k in (0, 1, 2):
            curve = confidence_curve(recs, "A", values, k)
            assert math.isclose(curve.slope, np.polyfit(np.arange(4), curve.y, 1)[0], abs_tol=1e-12)
            for adjust, shown in (("none", curve.slope), ("mean", curve.mean_adjusted), ("z", curve.z_adjusted)):
                expected = ProbabilitySlope(values=values, kgram=k, adjust=adjust).score(recs)
                assert math.isclose(shown, expected, rel_tol=1e-12, abs_tol=1e-15)
    # 2-gram normalised log-probs by hand: y - kgram row 2 = (0.5, 0.5, 0.5, 0.0).
    np.testing.assert_allclose(confidence_curve(recs, "A", "logprob", 2).y, [0.5, 0.5, 0.5, 0.0])
    np.testing.assert_allclose(confidence_curve(recs, "A", "prob", 0).y, np.exp(LOGPROBS))


def test_constant_curve_has_zero_z_adjustment_and_bad_k_is_rejected():
    recs = make_records("aaaa", [(0, 1), (1, 2), (2, 3), (3, 4)], [0.5] * 4)
    curve = confidence_curve(recs, "A")
    assert curve.slope == 0.0
    assert curve.z_adjusted == 0.0
    with pytest.raises(ValueError, match="kgram must be 0..6"):
        confidence_curve(recs, "A", "logprob", 7)


def test_figure_has_a_curve_and_a_dashed_fit_per_passage_with_safe_hover_text():
    a = confidence_curve(records(), "A")
    b = confidence_curve(records(), "B <i>")
    figure = confidence_figure([a, b])
    assert [t.mode for t in figure.data] == ["lines+markers", "lines", "lines+markers", "lines"]
    assert figure.data[1].line.dash == "dash"
    assert figure.data[3].line.dash == "dash"
    np.testing.assert_allclose(figure.data[1].y, a.fitted)
    assert figure.data[0].customdata[0][0] == "&lt;b&gt;"
    assert figure.data[0].customdata[3][0] == "↵three"
    assert float(figure.data[0].customdata[1][1]) == pytest.approx(math.exp(-2.0))
    assert int(figure.data[0].customdata[0][2]) == 9
    assert "B &lt;i&gt;" in figure.data[2].hovertemplate
    assert figure.layout.yaxis.title.text == "log-probability of each token"
    assert figure.data[1].name == "A: fitted line, slope +0.8 per token"
    with pytest.raises(ValueError):
        confidence_figure([])


def test_axis_titles_and_display_tokens():
    assert y_axis_title("prob", 3) == "probability of each token minus its 3-gram baseline"
    assert display_token('\t"x"') == "⇥&quot;x&quot;"


def test_token_table_csv_has_one_row_per_token_and_defuses_formulas():
    recs = make_records("=SUM(A1) ok", [(0, 8), (8, 11)], [0.25, 0.5], ranks=[4, 1])
    other = make_records("+cmd", [(0, 4)], [1.0])
    text = token_table_csv([("A", recs), ("B", other)])
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["passage"] for r in rows] == ["A", "A", "B"]
    assert rows[0]["token"] == "'=SUM(A1)"
    assert rows[1]["token"] == " ok"
    assert rows[2]["token"] == "'+cmd"
    assert float(rows[0]["prob"]) == pytest.approx(0.25)
    assert rows[0]["rank"] == "4"
    assert rows[0]["start"] == "0"
    assert rows[0]["end"] == "8"
    with pytest.raises(ValueError):
        token_table_csv([])


def test_token_table_csv_includes_kgram_columns_when_present():
    kgram = np.array([[-4.0, -4.0, -4.0, -4.0]])
    header = next(csv.reader(io.StringIO(token_table_csv([("A", records(kgram))]))))
    assert header[0] == "passage"
    assert header[-1] == "logprob_1gram"


def test_score_cards_put_headline_detectors_first_and_describe_each_slope_variant():
    from core.methods import default_methods
    from core.methods.slope import ProbabilitySlope
    from core.viz.score_cards import card_description, split_headline

    methods = default_methods()
    headline, variants = split_headline(methods)
    assert [m.key for m in headline] == ["loss", "zlib", "min_k_20", "min_k_pp_20", "slope"]
    assert len(headline) + len(variants) == len(methods)
    assert all(isinstance(m, ProbabilitySlope) for m in variants)
    descriptions = [card_description(m) for m in variants]
    assert len(set(descriptions)) == len(variants)  # no two variant cards read the same
    assert card_description(methods[0]) == methods[0].description
    assert card_description(ProbabilitySlope(values="prob", kgram=3, adjust="z")) == (
        "Slope of the straight line through each token's probability, minus its probability given only the "
        "2 tokens before it (how much the long context helps); the curve's mean minus the slope, divided by "
        "its standard deviation."
    )
    assert "given no context at all" in card_description(ProbabilitySlope(kgram=1))
