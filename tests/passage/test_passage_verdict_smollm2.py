"""The single-passage verdict on the bundled model, against text no model has seen.

Famous public-domain passages (the first 16 of the demo set's famous half) must reach ``strong`` at least once,
through the extraction test or the placement; 25 passages written for this test alone (``tests/helpers/texts``,
never part of the calibration set) must never read as a sign. Measured: 3 of those 16 famous passages strong (16
of all 64), 3 moderate, 1 weak; the 25 held-out passages 11 none and 14 inconclusive.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from core.config import PROJECT_ROOT
from core.data.labelled import load_labelled_dataset
from core.engine.handle import resolve_model
from core.engine.setup import resolve_setup
from core.methods.analysis import analyse_passages
from core.methods.loss import Loss
from core.methods.min_k import MinK
from core.passage.calibration import stored_fresh_calibration
from core.passage.verdict import judge_passages
from core.stats.finding import EXPOSURE_LEVELS
from core.store.results import ResultStore

FAMOUS = 16
"""Famous passages judged: enough to hold several strong ones, few enough to keep the test under a minute."""
HELD_OUT = PROJECT_ROOT / "tests" / "helpers" / "texts" / "fresh_held_out.jsonl"


@pytest.mark.usefixtures("smollm2_calibration")
def test_a_famous_passage_reads_strong_and_no_held_out_fresh_passage_reads_as_a_sign(smollm2):
    calibration = stored_fresh_calibration(
        resolve_model(smollm2.spec, loader=lambda _: smollm2, setup=resolve_setup()), store=ResultStore()
    )
    assert calibration.from_store
    demo = load_labelled_dataset("demo:famous-vs-fresh")
    famous = [t for t, y in zip(demo.texts, demo.labels, strict=True) if y == 1][:FAMOUS]
    held_out = [json.loads(line)["text"] for line in HELD_OUT.read_text(encoding="utf-8").splitlines()]
    assert len(held_out) >= 20
    analyses = analyse_passages(smollm2, famous + held_out, [Loss(), MinK(20)], kgram_max=0)
    verdicts = judge_passages(smollm2, [(a.scores, a.records) for a in analyses], calibration)
    famous_verdicts, fresh_verdicts = verdicts[: len(famous)], verdicts[len(famous) :]
    print("famous", Counter(v.finding.level for v in famous_verdicts))
    print("held out", Counter(v.finding.level for v in fresh_verdicts))
    strong = [v for v in famous_verdicts if v.finding.level == "strong"]
    assert strong, [v.finding.headline for v in famous_verdicts[:5]]
    raised = [v.finding.headline for v in fresh_verdicts if v.finding.level in EXPOSURE_LEVELS]
    assert raised == []
