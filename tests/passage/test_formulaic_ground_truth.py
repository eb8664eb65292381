"""Predictable is not seen: freshly written formulaic text should read as new, famous text still as seen.

Two sets written for this test alone and kept out of the calibration set (``tests/helpers/texts``): 133 freshly
written passages of formulaic kinds, by writers who never saw the calibration passages: 85 of 17 kinds (recipes,
contract clauses, licences, changelogs, API references, weather and sports reports, forms, lists, code comments,
policies, FAQs, form emails, listings, job adverts, minutes, notices), five of each, and 48 written in their
kinds' stock phrases, as people really write them (``formulaic-idiom-*``, 12 kinds, four of each); and 39
famous public-domain passages the bundled model has surely read (licences, scripture, founding documents, famous
openings). Each is judged as Inspect judges a passage (its loss against close rewordings of itself among fresh
passages of its length, and the extraction test), with the bundled model.

A verdict of any evidence (``weak`` or more) needs a chance of at most 10% that new text of the passage's kind
scores as high (``core.passage.placement.LEVEL_CHANCE``): that is the stated false-positive rate, and the count of
held-out passages reading as evidence should not exceed its binomial 95th percentile, and none should read
``strong``; and at least 70% of the famous passages should read as evidence, half of them ``strong``.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
from scipy.stats import binom

from core.config import PROJECT_ROOT
from core.engine.handle import resolve_model
from core.engine.records import scored_text
from core.engine.setup import resolve_setup
from core.methods.analysis import analyse_passages
from core.methods.extraction import extract
from core.methods.loss import Loss
from core.methods.min_k import MinK
from core.passage.calibration import FRESH_NEIGHBOURHOOD, stored_fresh_calibration
from core.passage.extraction import extraction_view
from core.passage.placement import LEVEL_CHANCE, NEIGHBOURHOOD_KEY
from core.passage.verdict import judge_passage, judge_passages, passage_vectors
from core.stats.finding import EXPOSURE_LEVELS
from core.store.results import ResultStore

TEXTS = PROJECT_ROOT / "tests" / "helpers" / "texts"
FALSE_POSITIVE_RATE = dict(LEVEL_CHANCE)["weak"]
"""The chance of any evidence for new text: the weakest level's."""


def _rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (TEXTS / name).read_text(encoding="utf-8").splitlines()]


def _levels(verdicts) -> Counter:
    return Counter(v.finding.level for v in verdicts)


def _evidence(levels: Counter) -> int:
    return sum(levels[level] for level in EXPOSURE_LEVELS)


@pytest.mark.usefixtures("smollm2_calibration")
def test_formulaic_fresh_text_reads_new_within_the_stated_rate_and_famous_text_still_reads_seen(smollm2):
    """Each passage judged as Inspect judges it (against close rewordings of itself, and the extraction test), and
    again from the same scores as before this reading existed (loss and Min-K% against the nearest fresh passages
    in kind). The bar: held-out evidence within the binomial 95th percentile of its 10% rate (19 of 133), none
    strong; at least 70% of the famous passages as evidence and half strong. Measured (SmolLM2-135M, CPU float32)
    in docs/methods.md."""
    calibration = stored_fresh_calibration(
        resolve_model(smollm2.spec, loader=lambda _: smollm2, setup=resolve_setup()), store=ResultStore()
    )
    assert calibration.from_store and calibration.set_passages
    assert NEIGHBOURHOOD_KEY in calibration.scores
    held_out, famous = _rows("formulaic_held_out.jsonl"), _rows("famous_public_domain.jsonl")
    assert len(held_out) >= 60 and len(famous) >= 30
    fresh_texts = {p.text for p in calibration.set_passages}
    assert not fresh_texts & {r["text"] for r in held_out + famous}  # kept out of the calibration set
    texts = [r["text"] for r in held_out + famous]
    analyses = analyse_passages(smollm2, texts, [Loss(), MinK(20), FRESH_NEIGHBOURHOOD], kgram_max=0)
    records = [a.records for a in analyses]
    continuations = extract(smollm2, records)
    vectors = passage_vectors(calibration, [scored_text(r) for r in records])

    def judged(reworded: bool) -> list:
        out = []
        for a, (continuation,), vector in zip(analyses, continuations, vectors, strict=True):
            view = extraction_view(smollm2, a.records, continuation) if continuation is not None else None
            scores = a.scores if reworded else {k: v for k, v in a.scores.items() if k != NEIGHBOURHOOD_KEY}
            out.append(judge_passage(scores, a.records, calibration, continuation, view, vector=vector))
        return out

    today, before = judged(True), judged(False)
    n = len(held_out)
    new, seen = _levels(today[:n]), _levels(today[n:])
    before_new, before_seen = _levels(before[:n]), _levels(before[n:])
    allowed = int(binom.ppf(0.95, n, FALSE_POSITIVE_RATE))
    print(f"held out: {dict(new)}; before: {dict(before_new)}; the bar: at most {allowed}, none strong")
    print(f"famous: {dict(seen)}; before: {dict(before_seen)}; the bar: 70% evidence, half strong")
    assert all(v.placement.deciding.method_key == NEIGHBOURHOOD_KEY for v in today)
    assert _evidence(new) <= allowed and new["strong"] == 0
    assert _evidence(seen) >= 0.7 * len(famous) and seen["strong"] >= 0.5 * len(famous)
    assert _evidence(new) < _evidence(before_new)
    # The words name the comparison: the passage against its rewordings, and the fresh passages nearest in kind.
    recipe = next(v for r, v in zip(held_out, today, strict=True) if r["kind"] == "recipe")
    assert "reworded" in recipe.finding.headline and "nearest to it in kind" in recipe.finding.headline
    assert recipe.placement.deciding.kind_words.split(" and ")[0] in ("recipes", "instructions")


@pytest.mark.usefixtures("smollm2_calibration")
def test_a_table_of_numbers_has_no_fresh_text_of_its_kind_and_reads_at_most_inconclusive(smollm2):
    calibration = stored_fresh_calibration(
        resolve_model(smollm2.spec, loader=lambda _: smollm2, setup=resolve_setup()), store=ResultStore()
    )
    table = "\n".join(
        f"{year}  {a:5d}  {b:5d}  {c:6.1f}  {d:4.2f}"
        for year, a, b, c, d in [
            (2016, 1204, 311, 87.4, 0.42),
            (2017, 1287, 298, 88.1, 0.45),
            (2018, 1333, 342, 86.9, 0.47),
            (2019, 1390, 355, 89.3, 0.44),
            (2020, 1102, 276, 84.0, 0.39),
            (2021, 1251, 301, 85.7, 0.41),
            (2022, 1419, 367, 90.2, 0.48),
            (2023, 1476, 380, 91.0, 0.50),
        ]
    )
    (analysis,) = analyse_passages(smollm2, [table], [Loss(), MinK(20), FRESH_NEIGHBOURHOOD], kgram_max=0)
    (verdict,) = judge_passages(smollm2, [(analysis.scores, analysis.records)], calibration)
    assert verdict.finding.level == "inconclusive", verdict.finding.headline
    assert "table or list of numbers" in verdict.finding.headline
    assert "no yardstick" in verdict.finding.headline
