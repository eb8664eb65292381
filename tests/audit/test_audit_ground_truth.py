"""Ground truth for the audit: a model that trained on a benchmark reads strong; the same model on a file it never
saw, and the untrained model on the trained file, read no evidence.

Two trained models: the tiny random Llama fine-tuned on a question file in its published order (the order test's
ground truth, tests/helpers/order_benchmark.py), and the same tiny model fine-tuned on half of a code benchmark's
solutions (the loss-delta study's leak, tests/loss_delta/test_leakage.py), audited against fresh problems of the
same kind.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.audit.plan import LOSS_DELTA, ORDER, EvidenceSources
from core.audit.run import run_audit
from core.data.problems import builtin_problems
from core.data.tables import load_rows
from core.engine.handle import resolve_model
from core.engine.models import wrap_model
from core.stats.finding import EXPOSURE_LEVELS
from core.store.results import ResultStore
from tests.helpers.fine_tune import tuned_tiny_model
from tests.helpers.order_benchmark import TEMPLATE

pytestmark = pytest.mark.slow
CODE_PROBLEMS = 12


def _store(tmp_path: Path, seeded: Path) -> ResultStore:
    """A store seeded with the tiny model's fresh-passage scores (its extraction yardstick)."""
    path = tmp_path / "audit.sqlite"
    shutil.copyfile(seeded, path)
    return ResultStore(path)


def test_the_model_that_read_the_file_in_order_reads_strong_and_the_others_do_not(
    order_tuned_model, order_benchmarks, tiny_calibration, tmp_path
):
    trained, unseen = order_benchmarks
    store = _store(tmp_path, tiny_calibration)
    tuned = resolve_model(str(order_tuned_model))

    caught = run_audit(load_rows(str(trained)), tuned, store=store, template=TEMPLATE)
    assert caught.finding.level == "strong", caught.to_dict()
    assert ORDER.key in caught.verdict.survivors

    on_unseen = run_audit(load_rows(str(unseen)), tuned, store=store, template=TEMPLATE)
    assert on_unseen.finding.level not in EXPOSURE_LEVELS, on_unseen.to_dict()

    untrained = run_audit(load_rows(str(trained)), resolve_model("tiny-random"), store=store, template=TEMPLATE)
    assert untrained.finding.level not in EXPOSURE_LEVELS, untrained.to_dict()


def _code_benchmark(path: Path) -> tuple[Path, Path, list[str]]:
    """(a code benchmark of the shortest built-in problems, fresh problems of the same kind as its reference, the
    texts of the half a model is fine-tuned on)."""
    problems = sorted(builtin_problems().problems, key=lambda p: len(p.prompt) + len(p.solution))
    benchmark, reference = problems[:CODE_PROBLEMS], problems[CODE_PROBLEMS : 3 * CODE_PROBLEMS]

    def write(name: str, rows) -> Path:
        out = path / name
        out.write_text(
            "".join(
                json.dumps({"task_id": p.task_id, "prompt": p.prompt, "canonical_solution": p.solution}) + "\n"
                for p in rows
            )
        )
        return out

    leaked = [p.prompt + p.solution for p in benchmark[0::2]]
    return write("code_benchmark.jsonl", benchmark), write("fresh_problems.jsonl", reference), leaked


def test_a_model_tuned_on_half_a_code_benchmark_reads_strong_with_fresh_problems_as_reference(
    tiny_lm, tiny_calibration, tmp_path
):
    benchmark, reference, leaked = _code_benchmark(tmp_path)
    tuned_weights, _ = tuned_tiny_model(leaked, start_id=tiny_lm.start_token_id, steps=8, lr=3e-2)
    tuned = wrap_model(tuned_weights, tiny_lm.tokenizer, spec="code-tuned", start_token_id=tiny_lm.start_token_id)
    table = load_rows(str(benchmark))
    sources = EvidenceSources(reference=str(reference))
    store = _store(tmp_path, tiny_calibration)

    audit = run_audit(table, resolve_model("code-tuned", loader=lambda _: tuned), sources=sources, store=store)
    assert audit.plan.part(LOSS_DELTA.key).applies
    assert audit.finding.level == "strong", audit.to_dict()
    assert LOSS_DELTA.key in audit.verdict.survivors

    untrained = run_audit(table, resolve_model(tiny_lm.spec, loader=lambda _: tiny_lm), sources=sources, store=store)
    assert untrained.finding.level not in EXPOSURE_LEVELS, untrained.to_dict()
