"""Loss-delta losses in the shared results store, so no model scores the same problem set twice.

One stored run (kind ``delta``) holds one model's solution losses on one problem set, keyed by the model
(spec and weights' identity) and a fingerprint of the problems. HumanEval losses computed against one
reference set are reused against any other, a base model shared by several fine-tuned models is scored
once, and an interrupted run resumes batch by batch (through the one run loop, ``core.store.runloop``).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, cast

from core.data.fingerprint import fingerprint_rows
from core.data.problems import ProblemSet
from core.engine.handle import ModelHandle
from core.engine.progress import ProgressCallback
from core.engine.scoring import DEFAULT_TOKEN_BUDGET, ScoringModel
from core.loss_delta.losses import ProblemLoss, solution_losses
from core.store.results import ResultStore, SampleRow
from core.store.runloop import RunRequest
from core.store.stored_run import run_meta, run_stored

KIND = "delta"
DEFAULT_BATCH_SIZE = 16
LOSS_KEY = "solution_loss"


def problem_set_fingerprint(problems: ProblemSet) -> str:
    """Fingerprint over ids, prompts and solutions: a file and its upload (or the hub copy) match."""
    return fingerprint_rows((p.task_id, p.prompt, p.solution) for p in problems.problems)


def problem_run_key(model: ModelHandle, problems: ProblemSet) -> dict[str, Any]:
    """The store key of one model's losses on one problem set: the same weights, start token and problems."""
    return {**model.key, "problems": problem_set_fingerprint(problems)}


def stored_set_losses(
    model: ModelHandle,
    problems: ProblemSet,
    *,
    role: str,
    store: ResultStore,
    batch_size: int = DEFAULT_BATCH_SIZE,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
    progress: ProgressCallback | None = None,
    provenance: Mapping[str, Any] | None = None,
) -> tuple[ProblemLoss, ...]:
    """Losses of ``model`` on ``problems``, read from the store where present and scored (and stored) otherwise.

    The model is loaded only when something is left to score. Its setup (device, dtype, revision) is checked
    against a stored run's before anything is added to it.
    """
    key = problem_run_key(model, problems)
    meta = run_meta(
        dataset=problems.name,
        model=model.spec,
        n_total=len(problems),
        task="loss-delta",
        provenance=provenance,
        role=role,
        model_identity=model.identity,
    )

    def score(lm: ScoringModel, positions: list[int]) -> list[SampleRow]:
        chunk = [problems.problems[i] for i in positions]
        losses = solution_losses(lm, chunk, token_budget=token_budget)
        return [SampleRow(x.task_id, None, {LOSS_KEY: x.loss}, {"n_tokens": x.n_tokens}) for x in losses]

    def summarise(samples: list[SampleRow]) -> dict[str, Any]:
        losses = [float(cast(float, s.scores[LOSS_KEY])) for s in samples]  # score stores every loss
        return {"mean_loss": sum(losses) / len(losses), "n": len(losses)}

    stored = run_stored(
        store,
        RunRequest(KIND, key, meta, model.setup.to_dict()),
        problems.ids,
        load=model.load,
        score=score,
        summarise=summarise,
        batch_size=batch_size,
        progress=progress,
        report_start=False,
    )
    for note in stored.notes:
        warnings.warn(note, stacklevel=2)
    by_id = stored.by_id()
    return tuple(
        ProblemLoss(
            p.task_id,
            float(cast(float, by_id[p.task_id].scores[LOSS_KEY])),  # score stores every loss
            int(by_id[p.task_id].summary["n_tokens"]),
        )
        for p in problems.problems
    )
