"""Findings: each test's verdict rules against hand-built results, and on real runs."""

from __future__ import annotations

import pytest

from core.leakage.delta import DeltaStats, LeakageReport, ModelDelta
from core.leakage.finding import leakage_finding
from core.membership.benchmark import BenchmarkResult
from core.membership.finding import membership_finding
from core.overlap.finding import overlap_finding
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
        run_id="r", dataset="d", fingerprint="f", model="m", method_keys=["loss", "zlib"],
        method_labels={"loss": "Loss", "zlib": "zlib ratio"}, samples=samples,
        metrics={"loss": best, "zlib": weaker}, blind_baseline=baseline, ensemble=None,
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
    assert "includes chance" in finding.headline and "texts would be needed" in finding.headline
    assert any("0.63" in c for c in finding.caveats)


def test_membership_baseline_beating_the_detectors_is_confounded():
    finding = membership_finding(_membership(_metric(0.632, 0.565, 0.702, 250), _metric(0.943, 0.91, 0.97, 250)))
    assert finding.level == "confounded" and "wording alone" in finding.headline
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
    stats = DeltaStats(l_test=1.0 + delta, l_ref=1.0, delta=delta, ci=ci, p_value=0.12, test="mann-whitney u",
                       n_test=n, n_ref=n)
    return LeakageReport("HumanEval", "reference", False, (ModelDelta("m", None, stats),), (), ())


def test_delta_whose_interval_spans_zero_is_none():
    finding = leakage_finding(_leakage(-0.170, (-0.355, 0.021)))
    assert finding.level == "none" and "No significant difference" in finding.headline
    assert "not that the model saw these exact problems" in " ".join(finding.caveats)


def test_delta_below_zero_is_graded_and_worded_as_easier():
    assert leakage_finding(_leakage(-0.76, (-0.9, -0.6))).level == "strong"
    assert leakage_finding(_leakage(-0.3, (-0.45, -0.15))).level == "moderate"
    weak = leakage_finding(_leakage(-0.14, (-0.28, -0.003)))
    assert weak.level == "weak" and "(or its style) is easier" in weak.headline
    small = leakage_finding(_leakage(-0.14, (-0.28, -0.003), n=5))
    assert any("Only 5 problems" in c for c in small.caveats)


def test_overlap_levels_follow_the_matched_share():
    def report(matched: int, total: int = 20) -> ContaminationReport:
        return ContaminationReport(["test"], ["train"], {("test", "train"): matched / total},
                                   {("test", "train"): matched}, {"test": total})

    assert overlap_finding(report(0)).level == "none"
    assert overlap_finding(report(7)).level == "strong"
    assert "7 of 20 items" in overlap_finding(report(7)).headline
    assert overlap_finding(report(1, 40)).level == "moderate"
    assert overlap_finding(report(1, 200)).level == "weak"


@pytest.mark.slow
def test_famous_vs_fresh_demo_is_not_none_with_the_bundled_model(smollm2, tmp_path):
    from core.data.labelled import load_labelled_dataset
    from core.membership.benchmark import run_membership_benchmark
    from core.methods import parse_methods
    from core.store.results import ResultStore

    dataset = load_labelled_dataset("demo:famous-vs-fresh", limit=48, sample=True)
    result = run_membership_benchmark(dataset, "smollm2-135m", parse_methods(["loss", "min_k"]),
                                      store=ResultStore(tmp_path / "r.sqlite"), load_model=lambda _spec: smollm2)
    finding = membership_finding(result)
    assert finding.level in ("strong", "moderate", "weak"), finding.headline


def test_every_command_puts_the_finding_first_in_its_json_and_its_printout(tmp_path, capsys):
    import json

    from core.cli import main

    store = str(tmp_path / "r.sqlite")
    runs = {
        "mia": ["mia", "--dataset", "demo:famous-vs-fresh", "--limit", "8", "--sample", "--methods", "loss",
                "--model", "tiny-random", "--store", store],
        "mcq": ["mcq", "--dataset", "demo:mcq", "--limit", "3", "--model", "tiny-random", "--store", store],
        "delta": ["delta", "--test", "builtin", "--reference", "builtin", "--limit", "4", "--model", "tiny-random",
                  "--store", store],
    }
    index = ["overlap", "index", "--name", "demo", "--dataset", "demo:overlap-train", "--index-dir",
             str(tmp_path / "idx")]
    assert main(index) == 0
    runs["overlap"] = ["overlap", "search", "--index", "demo", "--dataset", "demo:overlap-test", "--index-dir",
                       str(tmp_path / "idx"), "--output-dir", str(tmp_path / "out")]
    capsys.readouterr()
    for name, args in runs.items():
        assert main([*args, "--json"]) == 0, name
        document = json.loads(capsys.readouterr().out)
        assert list(document)[0] == "finding", name
        assert set(document["finding"]) == {"level", "headline", "evidence", "caveats"}, name
        assert main(args) == 0, name
        printed = capsys.readouterr().out
        assert f"finding ({document['finding']['level']}): {document['finding']['headline']}" in printed, name
    # The demo test set plants verbatim and near copies among twenty items; 8-grams find them all.
    from core.data.demo import DEMO_DIR

    truth = json.loads((DEMO_DIR / "overlap_truth.json").read_text())
    planted = len(truth["verbatim"]) + len(truth["near"])
    assert main([*runs["overlap"], "--json"]) == 0
    overlap = json.loads(capsys.readouterr().out)["finding"]
    assert overlap["level"] == "strong" and overlap["headline"].startswith(f"{planted} of 20 items")
