"""Headlines speak plainly; the numbers line under them may use jargon, but only terms the glossary explains.

Issue 26: "AUROC", "CI", "Δ", "nats", "p-value", "Cohen's d", "confounded" and internal keys such as
``slope_6gram_mean`` had crept into headlines. Every finding of every test, at every level, is built here
and its headline checked against ``JARGON``; every jargon term in its ``numbers`` must be glossed on hover.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from core.benchmark_order.confounds import OrderPattern
from core.benchmark_order.finding import order_finding
from core.dataset_inference.finding import inference_finding
from core.loss_delta.delta import LossChange
from core.loss_delta.finding import leakage_finding
from core.membership.finding import membership_finding
from core.overlap.finding import overlap_finding
from core.passage.calibration import FreshCalibration
from core.passage.placement import place_passage, placement_finding
from core.stats.finding import Finding
from core.viz.banner import banner_html
from core.viz.glossary import GLOSSARY, gloss_html, terms_in
from tests.benchmark_order.test_order_finding import result as order_result
from tests.benchmark_order.test_order_finding import spread
from tests.helpers.jargon import jargon_in
from tests.loss_delta.test_loss_delta_confounded import _report as _delta_report
from tests.loss_delta.test_loss_delta_confounded import _row as _tuned_row
from tests.stats.test_findings import (
    ISSUE_INTERVAL,
    _inference,
    _leakage,
    _leakage_tuned,
    _mcq,
    _membership,
    _metric,
    _overlap,
)

REQUIRED_TERMS = (
    "AUROC",
    "95% interval",
    "Δ",
    "Δ²",
    "nats",
    "p-value",
    "confounded",
    "calibration",
    "blind baseline",
    "perplexity",
    "Min-K%",
    "Min-K%++",
    "Cohen's d",
    "TPR@FPR",
    "zlib",
    "slope",
    "member",
    "non-member",
)
CHANCE, STRONG = _metric(0.5, 0.4, 0.6), _metric(0.9, 0.8, 0.97)


def _fresh(n_tokens: list[int], loss: list[float], min_k: list[float] | None = None) -> FreshCalibration:
    ids = tuple(f"f{i}" for i in range(len(n_tokens)))
    scores = {"loss": tuple(loss), **({"min_k_20": tuple(min_k)} if min_k is not None else {})}
    return FreshCalibration("m", "run", ids, tuple(n_tokens), scores, {"loss": "Loss", "min_k_20": "Min-20%"})


def _passage(score: float, n_tokens: int, lengths: list[int], min_k: float | None = None) -> Finding:
    fresh = [float(-i) for i in range(len(lengths))]
    scores = {"loss": score, **({"min_k_20": min_k} if min_k is not None else {})}
    calibration = _fresh(lengths, fresh, fresh if min_k is not None else None)
    return placement_finding(place_passage(scores, n_tokens, calibration))


def _extracted(leading: int, fresh: list[int], placed: float = -100.5) -> Finding:
    """A passage read by both tests: placed among 200 fresh passages, continued ``leading`` of 64 tokens."""
    from core.passage.extraction import ExtractionView
    from core.passage.extraction_finding import ExtractionReading, passage_finding

    placement = place_passage({"loss": placed}, 100, _fresh([100] * 200, [float(-i) for i in range(200)]), tests=2)
    reading = ExtractionReading(leading, 64, tuple(fresh), tests=2)
    return passage_finding(placement, reading, ExtractionView("p", (), (), (), 30, leading))


FINDINGS = {
    # membership
    "membership-strong": lambda: membership_finding(_membership(STRONG, CHANCE)),
    "membership-moderate": lambda: membership_finding(_membership(_metric(0.75, 0.65, 0.85), CHANCE)),
    "membership-weak": lambda: membership_finding(_membership(_metric(0.62, 0.53, 0.7), _metric(0.5, 0.4, 0.52))),
    "membership-none": lambda: membership_finding(_membership(_metric(0.5, 0.45, 0.55), CHANCE)),
    "membership-inconclusive": lambda: membership_finding(_membership(_metric(0.6, 0.45, 0.75), CHANCE)),
    "membership-below-chance": lambda: membership_finding(_membership(_metric(0.4, 0.3, 0.48), CHANCE)),
    "membership-confounded": lambda: membership_finding(_membership(_metric(0.7, 0.6, 0.8), _metric(0.8, 0.7, 0.9))),
    "membership-too-few": lambda: membership_finding(_membership(STRONG, CHANCE, n=4)),
    "membership-same-texts": lambda: membership_finding(replace(_membership(STRONG, CHANCE), n_shared_texts=40)),
    "membership-no-detector": lambda: membership_finding(replace(_membership(STRONG, CHANCE), metrics={})),
    # loss delta, Δ and Δ²
    "delta-strong": lambda: leakage_finding(_leakage(-0.76, (-0.9, -0.6))),
    "delta-moderate": lambda: leakage_finding(_leakage(-0.3, (-0.45, -0.15))),
    "delta-weak": lambda: leakage_finding(_leakage(-0.14, (-0.28, -0.003))),
    "delta-none": lambda: leakage_finding(_leakage(0.005, (-0.03, 0.04))),
    "delta-none-harder": lambda: leakage_finding(_leakage(0.2, (0.1, 0.3))),
    "delta-inconclusive": lambda: leakage_finding(_leakage(-0.09, ISSUE_INTERVAL, n=8)),
    "delta-too-few": lambda: leakage_finding(_leakage(-0.76, (-0.9, -0.6), n=3)),
    "delta2-strong": lambda: leakage_finding(_leakage_tuned(-0.79, (-0.9, -0.6))),
    "delta2-none": lambda: leakage_finding(_leakage_tuned(0.0, (-0.03, 0.03))),
    "delta2-inconclusive": lambda: leakage_finding(_leakage_tuned(-0.09, ISSUE_INTERVAL, n=8)),
    "delta2-confounded": lambda: leakage_finding(_shifted(LossChange(1.2, 1.212, (-0.02, 0.04)))),
    "delta2-confounded-harder": lambda: leakage_finding(_shifted(LossChange(1.2, 1.248, (0.01, 0.09)))),
    # multiple choice
    "mcq-strong": lambda: _mcq_finding(_mcq(40)),
    "mcq-none": lambda: _mcq_finding(_mcq(40, before=0, after=0)),
    "mcq-none-shuffled-better": lambda: _mcq_finding(_mcq(40, before=0, after=1)),
    "mcq-too-few": lambda: _mcq_finding(_mcq(3)),
    # dataset inference
    "inference-strong": lambda: inference_finding(_inference(100, p=0.001), CHANCE),
    "inference-moderate": lambda: inference_finding(_inference(100, p=0.03), CHANCE),
    "inference-weak": lambda: inference_finding(_inference(100, p=0.07), CHANCE),
    "inference-none": lambda: inference_finding(_inference(400, p=0.6, effect=0.0), CHANCE),
    "inference-inconclusive": lambda: inference_finding(_inference(40, p=0.4, effect=0.2), None),
    "inference-confounded": lambda: inference_finding(_inference(100), _metric(0.8, 0.7, 0.9)),
    "inference-too-few": lambda: inference_finding(_inference(8), CHANCE),
    # overlap
    "overlap-strong": lambda: overlap_finding(_overlap(7, 20)),
    "overlap-moderate": lambda: overlap_finding(_overlap(1, 40)),
    "overlap-weak": lambda: overlap_finding(_overlap(1, 200)),
    "overlap-none": lambda: overlap_finding(_overlap(0, 20)),
    "overlap-too-few": lambda: overlap_finding(_overlap(0, 2)),
    # one passage against fresh text
    "passage-moderate": lambda: _passage(1.0, 100, [100] * 36),
    "passage-weak-min-k-decides": lambda: _passage(1.0, 100, [100] * 200, min_k=-14.5),
    "passage-none": lambda: _passage(-100.5, 100, [100] * 200),
    "passage-none-below-all": lambda: _passage(-500.0, 100, [100] * 200, min_k=-500.0),
    "passage-too-short": lambda: _passage(-9.0, 2, [78 + i for i in range(15)]),
    "passage-no-similar-length": lambda: _passage(-9.0, 30, [78 + i for i in range(40)]),
    "passage-extraction-strong": lambda: _extracted(50, [0] * 250 + [3] * 49),
    "passage-extraction-inconclusive": lambda: _extracted(3, [0] * 240 + [3] * 59),
    "passage-extraction-none": lambda: _extracted(0, [0] * 300),
    # benchmark order
    "order-strong": lambda: _order([2.0] * 10 + [3.0] * 10),
    "order-weak": lambda: _order(spread(0.36)),
    "order-none": lambda: _order(spread(0.0, n=40, width=0.2)),
    "order-inconclusive": lambda: _order(spread(0.0, n=10, width=6.0)),
    "order-too-few": lambda: _order([5.0, 5.1, 4.9, 5.05]),
    "order-confounded": lambda: _order([2.0] * 20, [OrderPattern("column 'difficulty'", 30, 2)]),
}


def _order(differences: list[float], patterns=()) -> Finding:
    return order_finding(order_result(differences), "bench.jsonl", patterns)


def _shifted(test: LossChange):
    """A fine-tune whose Δ² comes from the reference set: the benchmark's own loss moved by ``test``."""
    return _delta_report(_tuned_row(test))


def _mcq_finding(report) -> Finding:
    from core.mcq.finding import mcq_finding

    return mcq_finding(report)


@pytest.mark.parametrize("name", FINDINGS)
def test_no_headline_holds_jargon(name):
    finding = FINDINGS[name]()
    found = [(term, m.group()) for term, m in jargon_in(finding.headline)]
    assert not found, f"{name} ({finding.level}): {finding.headline!r} uses {found}"


@pytest.mark.parametrize("name", FINDINGS)
def test_every_jargon_term_in_the_numbers_is_glossed(name):
    finding = FINDINGS[name]()
    assert finding.numbers, f"{name}: no numbers line"
    spans = [(m.start(), m.end()) for m, _ in terms_in(finding.numbers)]
    html = gloss_html(finding.numbers)
    for term, match in jargon_in(finding.numbers):
        assert term != "internal key", f"{name}: internal key {match.group()!r} in {finding.numbers!r}"
        assert any(s <= match.start() < e for s, e in spans), (
            f"{name}: {term} ({match.group()!r}) is not glossed in {finding.numbers!r}"
        )
    assert html.count('<abbr class="leaklens-term"') == len(spans)


def test_the_levels_are_all_covered():
    levels = {FINDINGS[name]().level for name in FINDINGS}
    assert levels == {"strong", "moderate", "weak", "none", "inconclusive", "confounded"}
    assert FINDINGS["passage-too-short"]().headline.startswith("Too short to judge: ")


def test_the_glossary_explains_the_required_terms_in_one_sentence():
    for term in REQUIRED_TERMS:
        assert term in GLOSSARY, term
    for term, text in GLOSSARY.items():
        assert text.endswith("."), term
        assert len(text) < 260, term
    for term in {t for _, t in __import__("core.viz.glossary", fromlist=["FORMS"]).FORMS}:
        assert term in GLOSSARY, term


@pytest.mark.parametrize(
    ("text", "wrapped"),
    [
        ("AUROC 0.93 (95% interval 0.85–0.99)", ["AUROC", "95% interval"]),
        ("Δ² −0.79 nats per token, Δ −0.76", ["Δ²", "nats", "Δ"]),
        ("p = 0.003, p < 0.0001, p-values", ["p", "p", "p-values"]),
        ("Min-20%++ and Min-20% and Min-K%", ["Min-20%++", "Min-20%", "Min-K%"]),
        ("TPR at 1% FPR; 95% CI; the CI", ["TPR at 1% FPR", "95% CI", "CI"]),
        ("Cohen's d +0.20 · blind baseline · Confounded", ["Cohen's d", "blind baseline", "Confounded"]),
        (
            "members, non-members, perplexity, zlib, slope, calibration",
            ["members", "non-members", "perplexity", "zlib", "slope", "calibration"],
        ),
        ("CIA, Pinterval, slope_6gram_mean, memberships, up = 1", []),  # whole words only
    ],
)
def test_gloss_html_wraps_whole_terms_longest_first(text, wrapped):
    html = gloss_html(text)
    assert re.findall(r'<abbr class="leaklens-term" title="[^"]+">([^<]*)</abbr>', html) == [
        w.replace("'", "&#x27;") for w in wrapped
    ]
    assert "<abbr" not in re.sub(r'<abbr class="leaklens-term" title="[^"]+">[^<]*</abbr>', "", html)


def test_gloss_html_escapes_and_never_wraps_twice():
    html = gloss_html('AUROC <b>x</b> & "q" title="AUROC"')
    assert "<b>" not in html
    assert "&lt;b&gt;x&lt;/b&gt; &amp; &quot;q&quot;" in html
    assert html.count("<abbr") == 2  # both AUROCs, each once; the title's own text is not re-wrapped
    # Glossing glossed markup escapes it as text: no tag of the input survives and no term is wrapped twice.
    again = gloss_html(html)
    assert set(re.findall(r"<(/?\w+)", again)) == {"abbr", "/abbr"}
    assert all("<" not in inner for inner in re.findall(r"<abbr[^>]*>(.*?)</abbr>", again))


def test_the_banner_shows_the_headline_plain_and_the_numbers_glossed():
    finding = FINDINGS["membership-strong"]()
    html = banner_html(finding)
    assert 'class="leaklens-finding"' in html
    headline = re.search(r'class="leaklens-headline"[^>]*>([^<]*)</div>', html)
    assert headline is not None
    assert headline.group(1) == finding.headline.replace("'", "&#x27;")
    numbers = re.search(r'class="leaklens-numbers"[^>]*>(.*?)</div>', html)
    assert numbers is not None
    assert numbers.group(1) == gloss_html(finding.numbers)
    assert html.index("leaklens-headline") < html.index("leaklens-numbers")
    assert 'title="' + GLOSSARY["AUROC"][:20] in html
    assert "leaklens-numbers" not in banner_html(Finding("none", "No sign."))
