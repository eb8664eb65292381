"""The evidence table's rows and "what would change the conclusion", from audits put together by hand."""

from __future__ import annotations

from core.audit.combine import PartResult, combine_parts
from core.audit.plan import plan_audit
from core.audit.run import Audit, AuditPart
from core.audit.summary import evidence_rows, what_would_change
from core.data.tables import load_rows
from core.stats.finding import Finding


def _audit(*parts: tuple[str, str, float | None]) -> Audit:
    found = tuple(
        AuditPart(key, Finding(level, f"{key} reads {level}.", numbers=f"{key} number · more"), p)
        for key, level, p in parts
    )
    verdict = combine_parts([PartResult(p.key, p.finding, p.p_value) for p in found])
    return Audit("demo:mcq", "tiny-random", plan_audit(load_rows("demo:mcq")), found, verdict)


def test_only_surviving_evidence_counts_and_the_key_number_is_the_first_figure():
    audit = _audit(("benchmark-order", "strong", 0.001), ("mcq", "weak", 0.04), ("extraction", "none", 0.8))
    rows = {row.key: row for row in evidence_rows(audit)}
    # Holm over three: 3 × 0.001 = 0.003 holds up; 2 × 0.04 = 0.08 does not.
    assert rows["benchmark-order"].counted == "Yes"
    assert rows["mcq"].counted == "No"
    assert rows["extraction"].counted == "No"
    assert rows["benchmark-order"].key_number == "benchmark-order number"
    assert rows["benchmark-order"].numbers == "benchmark-order number · more"
    assert rows["benchmark-order"].chance == "p = 0.001, 0.003 after Holm"


def test_what_would_change_names_what_the_verdict_rests_on_and_what_else_could_run():
    audit = _audit(("benchmark-order", "strong", 0.001), ("mcq", "inconclusive", 0.3), ("extraction", "none", 0.8))
    lines = what_would_change(audit)
    assert lines[0] == "The verdict rests most on benchmark order; without it the audit would read cannot tell."
    assert "Multiple-choice memorisation: mcq reads inconclusive." in lines
    assert "Giving a reference set of fresh problems of the same kind (--reference) would add loss delta." in lines
    assert "Giving a training-data index (--index) would add overlap." in lines


def test_a_none_verdict_says_what_it_does_not_rule_out():
    audit = _audit(("benchmark-order", "none", 0.6), ("mcq", "none", 0.9))
    assert audit.finding.level == "none"
    assert what_would_change(audit)[-1].startswith("No sign means the tests that ran rule out an effect of useful size")
