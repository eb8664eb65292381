"""A whole loss-delta comparison in the results store, so it reopens and exports without a model.

Each problem set's losses are stored per model (``core.loss_delta.stored``), which is what lets them be
reused; but a comparison is more: which problems were paired, which were left out, which model is
whose base, and the bootstrap settings. One run of kind ``delta-comparison`` holds all of that: one
sample per problem of the compared sets (its text, and every scored model's loss on it) and the rest
in its meta. ``report_from_comparison`` rebuilds the same ``LeakageReport`` from that run alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from core.data.problems import CodeProblem, ProblemSet
from core.data.tables import SkippedRow
from core.errors import LeakLensError
from core.loss_delta.delta import LeakageReport, ModelRequest, PairedSets, build_leakage_report
from core.loss_delta.losses import ModelLosses, ProblemLoss
from core.store.results import ResultStore, RunInfo, SampleRow
from core.store.stored_run import finished_run

COMPARISON_KIND = "delta-comparison"
ROLES = ("test", "reference")


def save_comparison(
    store: ResultStore,
    sets: PairedSets,
    report: LeakageReport,
    set_runs: Mapping[str, Sequence[str]],
    *,
    provenance: Mapping[str, Any] | None = None,
) -> RunInfo:
    """Store the comparison behind ``report``; an identical comparison already stored is left as it is.

    ``set_runs`` maps each scored model to the ids of its (test, reference) loss runs: they identify the
    weights and problems measured, so the same models on the same sets with the same settings are one run.
    """
    requests = [[m.model, m.base_model] for m in report.models]
    key = {
        "set_runs": {spec: list(ids) for spec, ids in set_runs.items()},
        "requests": requests,
        "paired": sets.paired,
        **{k: report.settings[k] for k in ("n_resamples", "seed")},
    }
    problems = {"test": sets.test.problems, "reference": sets.ref.problems}
    meta: dict[str, Any] = {
        "dataset": f"{report.test_name} vs {report.ref_name}",
        "model": ", ".join(m.model for m in report.models),
        "n_total": len(sets.test) + len(sets.ref),
        "task": "loss-delta",
        "test_name": report.test_name,
        "ref_name": report.ref_name,
        "has_ids": [sets.test.has_ids, sets.ref.has_ids],
        "unmatched_test": list(report.unmatched_test),
        "unmatched_ref": list(report.unmatched_ref),
        "skipped": {
            role: [[s.line, s.reason] for s in rows]
            for role, rows in (("test", report.skipped_test), ("reference", report.skipped_ref))
        },
    }
    if provenance is not None:
        meta["provenance"] = dict(provenance)
    run = store.get_or_create_run(COMPARISON_KIND, key, meta)
    if run.finished:
        return run
    losses = {ml.model: {"test": ml.test, "reference": ml.ref} for ml in report.losses}
    rows = []
    for role in ROLES:
        for position, problem in enumerate(problems[role]):
            per_model = {spec: by_role[role][position] for spec, by_role in losses.items()}
            rows.append(
                SampleRow(
                    f"{role}/{position}",
                    None,
                    {spec: loss.loss for spec, loss in per_model.items()},
                    {
                        "role": role,
                        "task_id": problem.task_id,
                        "prompt": problem.prompt,
                        "solution": problem.solution,
                        "n_tokens": {spec: loss.n_tokens for spec, loss in per_model.items()},
                    },
                )
            )
    store.add_samples(run.run_id, rows)
    return store.finish_run(run.run_id, {"models": [m.to_dict() for m in report.models]})


def report_from_comparison(store: ResultStore, run: RunInfo) -> LeakageReport:
    """The comparison's report rebuilt from the store alone (equal to the report of the run that stored it)."""
    finished_run(run, COMPARISON_KIND, "a loss-delta comparison")
    try:
        meta, key = run.meta, run.key
        samples = store.load_samples(run.run_id)
        sets = PairedSets(
            _problem_set(meta["test_name"], samples, "test", meta["has_ids"][0], meta["skipped"]["test"]),
            _problem_set(meta["ref_name"], samples, "reference", meta["has_ids"][1], meta["skipped"]["reference"]),
            bool(key["paired"]),
            tuple(meta["unmatched_test"]),
            tuple(meta["unmatched_ref"]),
        )
        requests = [ModelRequest(model, base) for model, base in key["requests"]]
        losses = {spec: _model_losses(spec, samples) for spec in key["set_runs"]}
        report = build_leakage_report(
            sets, requests, losses, n_resamples=int(key["n_resamples"]), seed=int(key["seed"])
        )
        return replace(report, run_id=run.run_id)
    except (KeyError, TypeError, ValueError) as exc:
        raise LeakLensError(
            f"The loss-delta comparison {run.run_id} in the store is incomplete ({exc!r}); run the test again."
        ) from exc


def _problem_set(
    name: str, samples: Sequence[SampleRow], role: str, has_ids: bool, skipped: Sequence[Sequence[Any]]
) -> ProblemSet:
    problems = tuple(
        CodeProblem(str(s.summary["task_id"]), str(s.summary["prompt"]), str(s.summary["solution"]))
        for s in samples
        if s.summary["role"] == role
    )
    return ProblemSet(name, problems, bool(has_ids), tuple(SkippedRow(int(line), str(why)) for line, why in skipped))


def _model_losses(spec: str, samples: Sequence[SampleRow]) -> ModelLosses:
    by_role: dict[str, list[ProblemLoss]] = {role: [] for role in ROLES}
    for s in samples:
        loss = s.scores[spec]
        if loss is None:
            raise ValueError(f"no stored loss for {spec} on {s.sample_id}")
        by_role[s.summary["role"]].append(
            ProblemLoss(str(s.summary["task_id"]), float(loss), int(s.summary["n_tokens"][spec]))
        )
    return ModelLosses(spec, tuple(by_role["test"]), tuple(by_role["reference"]))
