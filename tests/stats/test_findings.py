"""Findings: each test's verdict rules against hand-built results, and on real runs."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from core.dataset_inference.finding import MIN_TEXTS_PER_SET, inference_finding
from core.dataset_inference.statistic import InferenceResult
from core.engine.handle import resolve_model
from core.loss_delta.delta import DeltaStats, LeakageReport, ModelDelta
from core.loss_delta.finding import MIN_PROBLEMS, leakage_finding
from core.mcq.finding import MIN_QUESTIONS, mcq_finding
from core.membership.benchmark import BenchmarkResult
from core.membership.finding import MIN_PER_CLASS, membership_finding
from core.overlap.finding import MIN_ITEMS, overlap_finding
from core.overlap.report import ContaminationReport
from core.stats.finding import Finding, texts_needed
from core.stats.metrics import MetricResult
from core.store.results import SampleRow


def _metric(auroc: float, lo: float, hi: float, n: int = 40) -> MetricResult:
    return MetricResult(auroc=auroc, ci=(lo, hi), tpr_at_1_fpr=0.0, tpr_at_5_fpr=0.1, n=n, n_dropped=0)


def _membership(best: MetricResult, baseline: MetricResult | None, n: int = 40) -> BenchmarkResult:
    samples = [SampleRow(str(i), i % 2, {}, {}) for i in range(n)]
    weaker = _metric(max(0.5, best.auroc - 0.05), best.ci[0] - 0.05, best.ci[1] - 0.05, n)
    return BenchmarkResult(
        run_id="r",
        dataset="d",
        fingerprint="f",
        model="m",
        method_keys=["loss", "zlib"],
        method_labels={"loss": "Loss", "zlib": "zlib ratio"},
        samples=samples,
        metrics={"loss": best, "zlib": weaker},
        blind_baseline=baseline,
        ensemble=None,
    )


def test_finding_checks_its_level_and_round_trips():
    finding = Finding("weak", "Something.", ("a",), ("b",))
    assert Finding.from_dict(finding.to_dict()) == finding
    with pytest.raises(ValueError):
        Finding("certain", "No such level.")
    with pytest.raises(ValueError):
        Finding("none", "  ")


def test_texts_needed_scales_with_the_interval():
    # half-width 0.2 at distance 0.1 from chance: four times the texts
    assert texts_needed(40, 0.6, (0.4, 0.8), 0.5) == 160
    assert texts_needed(40, 0.5, (0.4, 0.6), 0.5) is None


def test_membership_interval_including_chance_is_inconclusive_never_strong():
    finding = membership_finding(_membership(_metric(0.717, 0.39, 0.86), _metric(0.631, 0.45, 0.8)))
    assert finding.level == "inconclusive"
    assert "includes chance" in finding.headline
    assert "texts would be needed" in finding.headline
    assert any("0.63" in c for c in finding.caveats)


def test_membership_baseline_beating_the_detectors_is_confounded():
    finding = membership_finding(_membership(_metric(0.632, 0.565, 0.702, 250), _metric(0.943, 0.91, 0.97, 250)))
    assert finding.level == "confounded"
    assert "wording alone" in finding.headline
    # also when the detector's interval clears chance but the baseline reaches its lower end
    reached = membership_finding(_membership(_metric(0.80, 0.70, 0.88, 250), _metric(0.72, 0.6, 0.8, 250)))
    assert reached.level == "confounded"


def test_membership_grades_by_the_lower_end_of_the_interval():
    assert membership_finding(_membership(_metric(0.9, 0.8, 0.97), _metric(0.55, 0.4, 0.7))).level == "strong"
    assert membership_finding(_membership(_metric(0.75, 0.65, 0.85), _metric(0.5, 0.4, 0.6))).level == "moderate"
    assert membership_finding(_membership(_metric(0.62, 0.53, 0.7), _metric(0.5, 0.4, 0.52))).level == "weak"
    tight = membership_finding(_membership(_metric(0.52, 0.47, 0.57, 1000), _metric(0.5, 0.46, 0.54, 1000)))
    assert tight.level == "none"


def _leakage(delta: float, ci: tuple[float, float], n: int = 40) -> LeakageReport:
    stats = DeltaStats(
        l_test=1.0 + delta, l_ref=1.0, delta=delta, ci=ci, p_value=0.12, test="mann-whitney u", n_test=n, n_ref=n
    )
    return LeakageReport("HumanEval", "reference", False, (ModelDelta("m", None, stats),), (), ())


def test_delta_whose_interval_reaches_past_the_margin_is_inconclusive_not_none():
    # Issue 26: an interval including 0 but reaching a large effect (−0.355) cannot rule one out.
    finding = leakage_finding(_leakage(-0.170, (-0.355, 0.021)))
    assert finding.level == "inconclusive"
    assert "more problems per set would settle it" in finding.headline
    assert "not that the model saw these exact problems" in " ".join(finding.caveats)


def test_delta_below_zero_is_graded_and_worded_as_easier():
    assert leakage_finding(_leakage(-0.76, (-0.9, -0.6))).level == "strong"
    assert leakage_finding(_leakage(-0.3, (-0.45, -0.15))).level == "moderate"
    weak = leakage_finding(_leakage(-0.14, (-0.28, -0.003)))
    assert weak.level == "weak"
    assert "(or its style) is easier" in weak.headline
    small = leakage_finding(_leakage(-0.14, (-0.28, -0.003), n=5))
    assert any("Only 5 problems" in c for c in small.caveats)


def test_overlap_levels_follow_the_matched_share():
    def report(matched: int, total: int = 20) -> ContaminationReport:
        return ContaminationReport(
            ["test"], ["train"], {("test", "train"): matched / total}, {("test", "train"): matched}, {"test": total}
        )

    assert overlap_finding(report(0)).level == "none"
    assert overlap_finding(report(7)).level == "strong"
    assert "7 of 20 items" in overlap_finding(report(7)).headline
    assert overlap_finding(report(1, 40)).level == "moderate"
    assert overlap_finding(report(1, 200)).level == "weak"


# ------------------------------------------------ findings never outrun their data (issue 25, item 4)


class _McqQuestion:
    def __init__(self, completion: int, next_token: int) -> None:
        self.scores = {"completion": completion, "next_token": next_token}

    def score(self, kind: str) -> int:
        return self.scores[kind]


class _McqRun:
    """What ``mcq_finding`` reads of an ``MCQRun``: per-question scores out of 4 options and their mean."""

    n_options = 4

    def __init__(self, completion: list[int]) -> None:
        self.results = [_McqQuestion(c, c) for c in completion]

    def summary(self, kind: str) -> SimpleNamespace:
        return SimpleNamespace(mean=sum(r.score(kind) for r in self.results) / len(self.results))


def _mcq(n: int, before: int = 4, after: int = 0) -> SimpleNamespace:
    """n questions, each finished ``before`` of 4 options word for word in the published order, ``after`` shuffled."""
    return SimpleNamespace(original=_McqRun([before] * n), shuffled=_McqRun([after] * n), permutation=None)


def _inference(n: int, p: float = 0.001, effect: float = 1.5) -> InferenceResult:
    return InferenceResult(
        p_value=p,
        split_p_values=(p / 2,) * 5,
        effect_size=effect,
        weights={"loss": 1.2},
        n_suspect=n,
        n_validation=n,
        features=("loss",),
    )


def _overlap(matched: int, total: int) -> ContaminationReport:
    return ContaminationReport(
        ["test"], ["train"], {("test", "train"): matched / max(total, 1)}, {("test", "train"): matched}, {"test": total}
    )


STRONG, CHANCE = _metric(0.9, 0.8, 0.97), _metric(0.5, 0.4, 0.6)

MINIMUM_CASES = [
    # membership: texts per class
    pytest.param(
        lambda: membership_finding(_membership(_metric(1.0, 1.0, 1.0, 2), _metric(0.5, 0.5, 0.5, 2), n=2)),
        "inconclusive",
        ("only 1 member text and 1 non-member text", f"at least {MIN_PER_CLASS} of each"),
        None,
        id="membership-1+1-perfect-separation",
    ),
    pytest.param(
        lambda: membership_finding(_membership(STRONG, CHANCE, n=2 * MIN_PER_CLASS - 2)),
        "inconclusive",
        (
            f"only {MIN_PER_CLASS - 1} member texts and {MIN_PER_CLASS - 1} non-member texts",
            f"at least {MIN_PER_CLASS} of each",
        ),
        None,
        id="membership-below-minimum",
    ),
    pytest.param(
        lambda: membership_finding(_membership(STRONG, CHANCE, n=2 * MIN_PER_CLASS)),
        "strong",
        ("Strong evidence",),
        None,
        id="membership-at-minimum",
    ),
    pytest.param(
        lambda: membership_finding(_membership(_metric(0.5, 0.4, 0.6), _metric(0.5, 0.4, 0.6))),
        "inconclusive",
        ("includes chance",),
        None,
        id="membership-baseline-0.50-vs-0.50",
    ),
    pytest.param(
        lambda: membership_finding(_membership(_metric(0.5, 0.47, 0.53, 1000), _metric(0.5, 0.47, 0.53, 1000), n=1000)),
        "none",
        ("No sign",),
        None,
        id="membership-tight-0.50-vs-0.50-is-none",
    ),
    pytest.param(
        lambda: membership_finding(_membership(_metric(0.7, 0.6, 0.8), _metric(0.8, 0.7, 0.9))),
        "confounded",
        ("wording alone",),
        None,
        id="membership-baseline-above-chance-beats-detector",
    ),
    pytest.param(
        lambda: membership_finding(_membership(_metric(0.75, 0.65, 0.85), _metric(0.7, 0.45, 0.9))),
        "moderate",
        ("Moderate evidence",),
        "its interval includes chance, but a confounded split is not",
        id="membership-baseline-reaching-lower-end-but-including-chance",
    ),
    pytest.param(
        lambda: membership_finding(replace(_membership(STRONG, CHANCE), n_shared_texts=40)),
        "inconclusive",
        ("members and non-members hold the same texts", "all 40"),
        None,
        id="membership-identical-texts",
    ),
    pytest.param(
        lambda: membership_finding(replace(_membership(STRONG, CHANCE), n_shared_texts=4)),
        "strong",
        ("Strong evidence",),
        "4 of the 40 texts appear word for word in both classes",
        id="membership-some-shared-texts",
    ),
    # multiple choice: questions
    pytest.param(
        lambda: mcq_finding(_mcq(MIN_QUESTIONS - 1)),
        "inconclusive",
        (f"only {MIN_QUESTIONS - 1} questions", f"at least {MIN_QUESTIONS} are needed"),
        None,
        id="mcq-below-minimum",
    ),
    pytest.param(lambda: mcq_finding(_mcq(1)), "inconclusive", ("only 1 question;",), None, id="mcq-one-question"),
    pytest.param(lambda: mcq_finding(_mcq(MIN_QUESTIONS)), "strong", ("memorised options",), None, id="mcq-at-minimum"),
    # dataset inference: texts per set
    pytest.param(
        lambda: inference_finding(_inference(MIN_TEXTS_PER_SET - 1), _metric(0.5, 0.4, 0.6)),
        "inconclusive",
        (
            f"only {MIN_TEXTS_PER_SET - 1} suspect texts and {MIN_TEXTS_PER_SET - 1} validation texts",
            f"at least {MIN_TEXTS_PER_SET} of each",
        ),
        None,
        id="inference-below-minimum",
    ),
    pytest.param(
        lambda: inference_finding(_inference(MIN_TEXTS_PER_SET), _metric(0.5, 0.4, 0.6)),
        "strong",
        ("trained on the suspect set",),
        None,
        id="inference-at-minimum-baseline-at-chance",
    ),
    pytest.param(
        lambda: inference_finding(_inference(100), _metric(0.8, 0.7, 0.9)),
        "confounded",
        ("wording alone",),
        None,
        id="inference-baseline-above-chance",
    ),
    # overlap: test items per test set
    pytest.param(
        lambda: overlap_finding(_overlap(0, MIN_ITEMS - 3)),
        "inconclusive",
        (f"only {MIN_ITEMS - 3} items of test searched", f"at least {MIN_ITEMS} items per test set"),
        None,
        id="overlap-no-match-below-minimum",
    ),
    pytest.param(
        lambda: overlap_finding(_overlap(0, 0)),
        "inconclusive",
        ("only 0 items of test",),
        None,
        id="overlap-empty-test-set",
    ),
    pytest.param(
        lambda: overlap_finding(_overlap(1, MIN_ITEMS - 3)),
        "strong",
        ("1 of 2 items of test",),
        "is a rough rate",
        id="overlap-match-below-minimum-is-still-found",
    ),
    pytest.param(
        lambda: overlap_finding(_overlap(0, MIN_ITEMS)), "none", ("No overlap found",), None, id="overlap-at-minimum"
    ),
    # loss delta: problems per set
    pytest.param(
        lambda: leakage_finding(_leakage(-0.76, (-0.9, -0.6), n=MIN_PROBLEMS - 1)),
        "inconclusive",
        (f"only {MIN_PROBLEMS - 1} on one side", f"at least {MIN_PROBLEMS} per set are needed"),
        None,
        id="delta-below-minimum",
    ),
    pytest.param(
        lambda: leakage_finding(_leakage(-0.76, (-0.9, -0.6), n=MIN_PROBLEMS)),
        "strong",
        ("(or its style) is easier",),
        None,
        id="delta-at-minimum",
    ),
]


@pytest.mark.parametrize(("build", "level", "headline", "caveat"), MINIMUM_CASES)
def test_findings_never_outrun_their_data(build, level, headline, caveat):
    finding = build()
    assert finding.level == level, finding.headline
    for words in headline:
        assert words in finding.headline, finding.headline
    if caveat is not None:
        assert any(caveat in c for c in finding.caveats), finding.caveats
    assert finding.evidence  # too few to judge is not too few to show


def test_a_blind_baseline_at_chance_never_confounds_a_run():
    """0.50 against 0.50 is no confound, whatever the detector; above chance and as good as it, it is."""
    for detector in (_metric(0.5, 0.4, 0.6), _metric(0.5, 0.47, 0.53, 1000), _metric(0.48, 0.38, 0.58)):
        for baseline in (_metric(0.5, 0.4, 0.6), _metric(0.55, 0.5, 0.6), _metric(0.6, 0.45, 0.75)):
            finding = membership_finding(_membership(detector, baseline))
            assert finding.level != "confounded", (detector, baseline, finding.headline)


def test_identical_member_and_non_member_texts_are_counted_and_said(tiny_lm, tmp_path):
    from core.data.labelled import LabelledDataset
    from core.membership.benchmark import result_from_store, run_membership_benchmark
    from core.methods import parse_methods
    from core.store.results import ResultStore

    texts = [f"The river town held its {i}th market fair under a grey and windy sky." for i in range(6)]

    def dataset(members: list[str], non_members: list[str]) -> LabelledDataset:
        rows = [*members, *non_members]
        labels = [1] * len(members) + [0] * len(non_members)
        ids = [str(i) for i in range(len(rows))]
        return LabelledDataset(rows, labels, ids, "same.jsonl", "text", "label", [], "|".join(rows) + str(labels))

    store = ResultStore(tmp_path / "r.sqlite")
    same = run_membership_benchmark(
        dataset(texts, texts),
        resolve_model("tiny-random", loader=lambda _spec: tiny_lm),
        parse_methods(["loss"]),
        store=store,
    )
    assert same.n_shared_texts == 12
    (run,) = store.list_runs("mia")
    assert result_from_store(store, run).n_shared_texts == 12
    finding = membership_finding(same)
    assert finding.level == "inconclusive"
    assert "hold the same texts" in finding.headline
    # one text in both classes: counted twice (once per class) and said in a caveat
    some = run_membership_benchmark(
        dataset(texts, [texts[0], "A fresh line about nothing in particular."] * 3),
        resolve_model("tiny-random", loader=lambda _spec: tiny_lm),
        parse_methods(["loss"]),
        store=store,
    )
    assert some.n_shared_texts == 4
    assert any("4 of the 12 texts appear word for word in both classes" in c for c in membership_finding(some).caveats)


@pytest.mark.slow
def test_famous_vs_fresh_demo_is_not_none_with_the_bundled_model(smollm2, tmp_path):
    from core.data.labelled import load_labelled_dataset
    from core.membership.benchmark import run_membership_benchmark
    from core.methods import parse_methods
    from core.store.results import ResultStore

    dataset = load_labelled_dataset("demo:famous-vs-fresh", limit=48, sample=True)
    result = run_membership_benchmark(
        dataset,
        resolve_model("smollm2-135m", loader=lambda _spec: smollm2),
        parse_methods(["loss", "min_k"]),
        store=ResultStore(tmp_path / "r.sqlite"),
    )
    finding = membership_finding(result)
    assert finding.level in ("strong", "moderate", "weak"), finding.headline


def test_every_command_puts_the_finding_first_in_its_json_and_its_printout(tmp_path, capsys):
    import json

    from core.cli import main

    store = str(tmp_path / "r.sqlite")
    runs = {
        "mia": [
            "mia",
            "--dataset",
            "demo:famous-vs-fresh",
            "--limit",
            "8",
            "--sample",
            "--methods",
            "loss",
            "--model",
            "tiny-random",
            "--store",
            store,
        ],
        "mcq": ["mcq", "--dataset", "demo:mcq", "--limit", "3", "--model", "tiny-random", "--store", store],
        "delta": [
            "delta",
            "--test",
            "builtin",
            "--reference",
            "builtin",
            "--limit",
            "4",
            "--model",
            "tiny-random",
            "--store",
            store,
        ],
    }
    index = [
        "overlap",
        "index",
        "--name",
        "demo",
        "--dataset",
        "demo:overlap-train",
        "--index-dir",
        str(tmp_path / "idx"),
    ]
    assert main(index) == 0
    runs["overlap"] = [
        "overlap",
        "search",
        "--index",
        "demo",
        "--dataset",
        "demo:overlap-test",
        "--index-dir",
        str(tmp_path / "idx"),
        "--output-dir",
        str(tmp_path / "out"),
    ]
    capsys.readouterr()
    for name, args in runs.items():
        assert main([*args, "--json"]) == 0, name
        document = json.loads(capsys.readouterr().out)
        assert list(document)[0] == "finding", name
        assert set(document["finding"]) == {"level", "headline", "numbers", "evidence", "caveats"}, name
        assert main(args) == 0, name
        printed = capsys.readouterr().out
        assert f"finding ({document['finding']['level']}): {document['finding']['headline']}" in printed, name
    # The demo test set plants verbatim and near copies among twenty items; 8-grams find them all.
    from core.data.demo import DEMO_DIR

    truth = json.loads((DEMO_DIR / "overlap_truth.json").read_text())
    planted = len(truth["verbatim"]) + len(truth["near"])
    assert main([*runs["overlap"], "--json"]) == 0
    overlap = json.loads(capsys.readouterr().out)["finding"]
    assert overlap["level"] == "strong"
    assert overlap["headline"].startswith(f"{planted} of 20 items")


# ------------------------------------------- "none" only inside the no-effect margin (issue 26, item 3)


def test_finding_numbers_round_trip_and_old_dicts_read_back():
    finding = Finding("weak", "Something.", ("a",), ("b",), numbers="AUROC 0.62 (95% interval 0.53–0.70)")
    assert finding.to_dict()["numbers"] == "AUROC 0.62 (95% interval 0.53–0.70)"
    assert Finding.from_dict(finding.to_dict()) == finding
    old = {"level": "none", "headline": "No sign.", "evidence": ["e"], "caveats": []}  # stored before `numbers`
    assert Finding.from_dict(old) == Finding("none", "No sign.", ("e",), ())


def test_texts_needed_takes_the_boundary_that_settles_soonest():
    # Δ −0.02 with half-width 0.1: excluding 0 needs (0.1/0.02)² = 25×, fitting above −0.05 only (0.1/0.03)².
    assert texts_needed(10, -0.02, (-0.12, 0.08), (0.0, -0.05)) == texts_needed(10, -0.02, (-0.12, 0.08), -0.05)
    assert texts_needed(10, -0.02, (-0.12, 0.08), (0.0, -0.05)) == 112
    assert texts_needed(10, 0.0, (-0.1, 0.1), (0.0,)) is None


def test_the_confounded_membership_numbers_carry_the_baseline_interval():
    finding = membership_finding(_membership(_metric(0.7, 0.6, 0.8), _metric(0.8, 0.7, 0.9)))
    assert finding.level == "confounded"
    # The headline used to quote "0.80, 95% CI 0.70–0.90"; the interval now sits in the numbers line.
    assert "blind baseline AUROC 0.80 (95% interval 0.70–0.90)" in finding.numbers


def _leakage_tuned(delta2: float, ci: tuple[float, float], n: int = 40) -> LeakageReport:
    stats = DeltaStats(
        l_test=1.0 + delta2,
        l_ref=1.0,
        delta=delta2,
        ci=(ci[0] - 0.1, ci[1] - 0.1),
        p_value=0.1,
        test="mann-whitney u",
        n_test=n,
        n_ref=n,
    )
    base = DeltaStats(
        l_test=1.0, l_ref=1.0, delta=0.0, ci=(-0.1, 0.1), p_value=0.9, test="mann-whitney u", n_test=n, n_ref=n
    )
    return LeakageReport("HumanEval", "reference", False, (ModelDelta("m", "base", stats, base, ci),), (), ())


ISSUE_INTERVAL = (-0.394, 0.213)
"""Issue 26: loss delta on 8 + 8 problems read "No sign" with this interval, which includes a large effect."""


@pytest.mark.parametrize("build", [_leakage, _leakage_tuned], ids=["delta", "delta2"])
@pytest.mark.parametrize(
    ("value", "ci", "n", "level"),
    [
        (-0.09, ISSUE_INTERVAL, 8, "inconclusive"),  # the issue's case
        (0.005, (-0.03, 0.04), 40, "none"),  # inside ±NONE_MARGIN
        (-0.025, (-0.06, 0.01), 40, "inconclusive"),  # crosses −0.05
        (-0.02, (-0.049, 0.01), 40, "none"),  # just inside
        (-0.02, (-0.05, 0.01), 40, "inconclusive"),  # on the edge is not inside
        (0.2, (0.01, 0.4), 40, "none"),  # harder than the reference: "easier" ruled out
        (-0.02, (-0.04, -0.001), 40, "weak"),  # below 0: evidence, however small
    ],
)
def test_loss_delta_is_none_only_inside_its_margin(build, value, ci, n, level):
    from core.loss_delta.finding import NONE_MARGIN

    assert NONE_MARGIN == 0.05
    finding = leakage_finding(build(value, ci, n))
    assert finding.level == level, finding.headline
    assert ("Δ² " if build is _leakage_tuned else "Δ ") in finding.numbers
    if level == "inconclusive":
        more = texts_needed(n, value, ci, (0.0, -NONE_MARGIN)) - n
        assert f"about {more} more problems per set would settle it" in finding.headline, finding.headline
        assert f"with {n} problems per set" in finding.headline


def test_the_issue_loss_delta_says_how_many_more_problems():
    finding = leakage_finding(_leakage(-0.09, ISSUE_INTERVAL, n=8))
    assert finding.level == "inconclusive"
    assert finding.headline.startswith("Cannot tell yet: with 8 problems per set the measurement is too rough")
    assert "about 83 more problems per set" in finding.headline  # half-width 0.30 over a 0.09 distance: 91 per set
    assert "(95% interval -0.394 to +0.213)" in finding.numbers


@pytest.mark.parametrize(
    ("completion", "token", "level"),
    [
        ((0.01, (-0.02, 0.04)), (0.0, (-0.05, 0.05)), "none"),
        ((0.0, (-0.05, 0.049)), (0.0, (0.0, 0.0)), "none"),  # just inside the margin
        ((0.02, (-0.02, 0.05)), (0.0, (0.0, 0.0)), "inconclusive"),  # on the edge
        ((0.02, (-0.02, 0.12)), (0.0, (-0.1, 0.1)), "inconclusive"),
        ((-0.3, (-0.5, -0.1)), (0.0, (0.0, 0.0)), "none"),  # finishes more once shuffled
        ((0.1, (0.02, 0.2)), (0.0, (0.0, 0.0)), "weak"),
        ((0.0, (-0.03, 0.08)), (0.2, (0.05, 0.35)), "weak"),  # only next-token hits drop
    ],
)
def test_mcq_is_none_only_inside_its_margin(monkeypatch, completion, token, level):
    import core.mcq.finding as mcq

    assert mcq.NONE_MARGIN == 0.05
    monkeypatch.setattr(mcq, "score_drop", lambda _report, kind: completion if kind == "completion" else token)
    finding = mcq.mcq_finding(_mcq(40, before=1, after=1))
    assert finding.level == level, finding.headline
    if level == "inconclusive":
        drop, ci = completion
        more = texts_needed(40, drop, ci, (0.0, mcq.NONE_MARGIN)) - 40
        assert f"about {more} more questions would settle it" in finding.headline
    assert "no-effect margin 0.05" in finding.numbers


@pytest.mark.parametrize(
    ("metric", "level", "words"),
    [
        (_metric(0.47, 0.38, 0.55), "inconclusive", "includes chance"),  # lower end below 0.4
        (_metric(0.5, 0.42, 0.58), "none", "No sign"),
        (_metric(0.5, 0.40, 0.58), "inconclusive", "includes chance"),  # on the lower edge
        (_metric(0.52, 0.44, 0.60), "inconclusive", "includes chance"),  # on the upper edge
        (_metric(0.45, 0.35, 0.49), "inconclusive", "rank the texts labelled unseen (label 0) as more familiar"),
        (_metric(0.6, 0.51, 0.69), "weak", "Weak evidence"),
    ],
)
def test_membership_is_none_only_inside_0_4_to_0_6(metric, level, words):
    finding = membership_finding(_membership(metric, _metric(0.5, 0.4, 0.6)))
    assert finding.level == level, finding.headline
    assert words in finding.headline


def test_dataset_inference_is_none_only_when_a_small_effect_would_have_shown():
    from core.dataset_inference.finding import NONE_EFFECT, effect_interval

    assert NONE_EFFECT == 0.2
    chance = _metric(0.5, 0.4, 0.6)
    # No effect measured: 400 texts per set give d ± 0.196, inside d < 0.2; 380 give ± 0.201, not inside.
    enough, short = _inference(400, p=0.6, effect=0.0), _inference(380, p=0.6, effect=0.0)
    assert effect_interval(enough)[1] < NONE_EFFECT < effect_interval(short)[1]
    assert inference_finding(enough, chance).level == "none"
    inconclusive = inference_finding(short, chance)
    assert inconclusive.level == "inconclusive"
    more = texts_needed(380, 0.0, effect_interval(short), (0.0, NONE_EFFECT)) - 380
    assert f"about {more} more texts per set would settle it" in inconclusive.headline
    # A measured effect moves the interval: 0.1 on 400 texts reaches 0.296, past the margin.
    assert inference_finding(_inference(400, p=0.6, effect=0.1), chance).level == "inconclusive"
    assert "p = 0.6" in inference_finding(enough, chance).numbers


def _fresh(n_tokens: list[int], loss: list[float]):
    from core.passage.calibration import FreshCalibration

    ids = tuple(f"f{i}" for i in range(len(n_tokens)))
    return FreshCalibration("m", "run", ids, tuple(n_tokens), {"loss": tuple(loss)}, {"loss": "Loss"})


def test_a_two_token_passage_is_too_short_to_judge_never_below_all_fresh_passages():
    from core.passage.placement import place_passage, placement_finding

    calibration = _fresh([78 + i for i in range(15)], [-3.0] * 15)  # the fresh passages are 78+ tokens
    finding = placement_finding(place_passage({"loss": -9.0}, 2, calibration))
    assert finding.level == "inconclusive"
    assert finding.headline.startswith("Too short to judge: only 2 tokens")
    assert "less predictable than all" not in finding.headline


def test_at_the_minimum_length_a_passage_is_judged():
    from core.passage.placement import place_passage, placement_finding
    from core.passage.summary import MIN_PASSAGE_TOKENS

    n = MIN_PASSAGE_TOKENS
    calibration = _fresh([n] * 15, [float(-i) for i in range(15)])
    at = placement_finding(place_passage({"loss": 1.0}, n, calibration))
    assert at.level == "weak"
    assert at.headline.startswith("More predictable than all 15")  # chance 1/16
    below = placement_finding(place_passage({"loss": 1.0}, n - 1, _fresh([n - 1] * 15, [float(-i) for i in range(15)])))
    assert below.level == "inconclusive"
    assert below.headline.startswith("Too short to judge")


def test_a_passage_with_no_fresh_passages_of_its_length_is_inconclusive():
    from core.passage.placement import LENGTH_FACTOR, MIN_SIMILAR, place_passage, placement_finding

    calibration = _fresh([78 + i for i in range(40)], [-3.0] * 40)
    placement = place_passage({"loss": -9.0}, 30, calibration)  # 30 tokens: 15–60 is similar, none are
    assert placement.widened
    assert placement.n_similar == MIN_SIMILAR  # still placed, for the chart
    finding = placement_finding(placement)
    assert finding.level == "inconclusive"
    assert "no fresh passages of this length to compare with" in finding.headline
    assert f"none of the 40 freshly written passages are within {LENGTH_FACTOR:g} times" in finding.headline
    assert any("nearest in length" in c for c in finding.caveats)
    # Fourteen within the factor is still short of fifteen; fifteen is enough.
    near = _fresh([30] * 14 + [200] * 10, [-3.0] * 24)
    assert "only 14 of the 24" in placement_finding(place_passage({"loss": -1.0}, 30, near)).headline
    enough = _fresh([30] * 15 + [200] * 10, [-3.0] * 25)
    assert placement_finding(place_passage({"loss": -1.0}, 30, enough)).level == "weak"


def _noise_run(rng, n: int, detectors: int) -> BenchmarkResult:
    """A run whose detectors know nothing: every score is noise, independent of the label."""
    from core.stats.metrics import evaluate

    labels = [i % 2 for i in range(n)]
    keys = [f"d{j}" for j in range(detectors)]
    columns = {k: rng.normal(size=n).tolist() for k in keys}
    samples = [SampleRow(str(i), labels[i], {k: columns[k][i] for k in keys}, {}) for i in range(n)]
    return BenchmarkResult(
        run_id="r",
        dataset="d",
        fingerprint="f",
        model="m",
        method_keys=keys,
        method_labels={k: k for k in keys},
        samples=samples,
        metrics={k: evaluate(labels, columns[k]) for k in keys},
        blind_baseline=None,
        ensemble=None,
    )


def test_the_best_of_many_detectors_is_judged_on_an_interval_widened_for_the_pick():
    from core.membership.finding import SELECTION_RESAMPLES, selection_adjusted_ci
    from core.stats.metrics import bootstrap_ci

    run = _noise_run(np.random.default_rng(3), 40, 16)
    key = max(run.metrics, key=lambda k: run.metrics[k].auroc)
    column = [s.scores[key] for s in run.samples]
    assert selection_adjusted_ci(run, key) == bootstrap_ci(
        [s.label for s in run.samples], column, n_resamples=SELECTION_RESAMPLES, level=1 - 0.05 / 16
    )
    plain, widened = run.metrics[key].ci, selection_adjusted_ci(run, key)
    assert widened[0] < plain[0]
    assert widened[1] > plain[1]
    finding = membership_finding(run)
    assert "allowing for picking the best of 16 detectors" in finding.numbers
    one = _noise_run(np.random.default_rng(3), 40, 1)
    assert selection_adjusted_ci(one, "d0") == one.metrics["d0"].ci  # nothing picked, nothing widened


def test_detectors_that_know_nothing_rarely_read_as_evidence_once_the_pick_is_allowed_for():
    # 80 runs of 16 noise detectors on 20 + 20 texts: the plain 95% interval of the best one misses chance in
    # about a third of them (1 − 0.975^16); the widened one in about 1 in 40.
    rng = np.random.default_rng(11)
    runs = [_noise_run(rng, 40, 16) for _ in range(80)]
    plain = sum(max(m.ci[0] for m in r.metrics.values()) > 0.5 for r in runs)
    claimed = sum(membership_finding(r).level in {"weak", "moderate", "strong"} for r in runs)
    assert plain >= 15
    assert claimed <= 6


def test_the_page_and_report_note_on_wording_asks_the_verdicts_own_rule():
    from core.membership.finding import wording_rivals_detectors
    from core.viz.reports.membership import _baseline_warning  # the report's note, on hand-built results without scores

    chance_level = _membership(_metric(0.52, 0.40, 0.64), _metric(0.55, 0.43, 0.67))  # both include chance
    above_chance = _membership(_metric(0.70, 0.58, 0.82), _metric(0.80, 0.70, 0.90))
    assert not wording_rivals_detectors(chance_level)
    assert membership_finding(chance_level).level != "confounded"
    assert _baseline_warning(chance_level) == ""
    assert wording_rivals_detectors(above_chance)
    assert membership_finding(above_chance).level == "confounded"
    assert "wording alone" in _baseline_warning(above_chance)
