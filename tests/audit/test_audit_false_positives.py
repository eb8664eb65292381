"""False positives: the untrained (random-weight) model's audit over 20 disjoint benchmark slices reads evidence no
more often than the audit's family-wise level allows, and never on the shipped demo.

Each slice is 20 MMLU-sample questions with their options, so every test that needs only the benchmark runs: the
benchmark order, multiple-choice memorisation and its option order, and extraction. Holm's correction keeps the
chance that an audit of a model which never saw the benchmark reads evidence at 5% or less; over 20 audits, more
than the binomial's 95th percentile of such readings (3 of 20) would break that.
"""

from __future__ import annotations

import json
import shutil

import pytest
from scipy import stats

from core.audit.combine import DEFAULT_ALPHA
from core.audit.run import run_audit
from core.config import SHARED_DATA_DIR
from core.data.tables import load_rows
from core.engine.handle import resolve_model
from core.stats.finding import EXPOSURE_LEVELS
from core.store.results import ResultStore

pytestmark = pytest.mark.slow
SLICES, ROWS = 20, 20


def test_the_untrained_model_reads_evidence_no_more_often_than_the_family_wise_level(
    tiny_lm, tiny_calibration, tmp_path
):
    lines = (SHARED_DATA_DIR / "mmlu_sample.jsonl").read_text().splitlines()
    path = tmp_path / "store.sqlite"
    shutil.copyfile(tiny_calibration, path)
    store = ResultStore(path)
    model = resolve_model(tiny_lm.spec, loader=lambda _: tiny_lm)
    levels, planned = [], set()
    for s in range(SLICES):
        rows = tmp_path / f"slice{s}.jsonl"
        rows.write_text("\n".join(lines[s * ROWS : (s + 1) * ROWS]) + "\n")
        audit = run_audit(load_rows(str(rows)), model, store=store)
        planned.add(tuple(p.key for p in audit.parts))
        levels.append(audit.finding.level)
    assert planned == {("benchmark-order", "mcq", "mcq-option-order", "extraction")}
    allowed = int(stats.binom.ppf(0.95, SLICES, DEFAULT_ALPHA))
    assert allowed == 3
    evidence = [level for level in levels if level in EXPOSURE_LEVELS]
    assert len(evidence) <= allowed, levels
    assert len({json.dumps(lines[s * ROWS]) for s in range(SLICES)}) == SLICES  # 20 different slices


def test_the_shipped_demo_never_reads_evidence_for_the_untrained_model(tiny_lm, tiny_calibration, tmp_path):
    path = tmp_path / "store.sqlite"
    shutil.copyfile(tiny_calibration, path)
    audit = run_audit(
        load_rows("demo:mcq"), resolve_model(tiny_lm.spec, loader=lambda _: tiny_lm), store=ResultStore(path)
    )
    assert audit.finding.level not in EXPOSURE_LEVELS, audit.to_dict()
    assert audit.verdict.survivors == ()
