"""Loss-delta losses in the shared results store, so no model scores the same problem set twice.

One stored run (kind ``delta``) holds one model's solution losses on one problem set, keyed by the model
spec and a fingerprint of the problems. HumanEval losses computed against one reference set are reused
against any other, a base model shared by several fine-tuned models is scored once, and an interrupted
run resumes batch by batch.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

from core.leakage.delta import ProblemLoss, solution_losses
from core.data.problems import ProblemSet
from core.engine.models import LoadedModel
from core.engine.progress import ProgressCallback
from core.engine.scoring import DEFAULT_TOKEN_BUDGET
from core.store.results import ResultStore, SampleRow

KIND = "delta"
DEFAULT_BATCH_SIZE = 16
LOSS_KEY = "solution_loss"


def problem_set_fingerprint(problems: ProblemSet) -> str:
    """sha256 over ids, prompts and solutions: a file and its upload (or the hub copy) match."""
    digest = hashlib.sha256()
    for p in problems.problems:
        digest.update(json.dumps([p.task_id, p.prompt, p.solution], ensure_ascii=False).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def stored_set_losses(
    spec: str,
    problems: ProblemSet,
    *,
    role: str,
    get_model: Callable[[], LoadedModel],
    store: ResultStore,
    batch_size: int = DEFAULT_BATCH_SIZE,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
    progress: ProgressCallback | None = None,
) -> tuple[ProblemLoss, ...]:
    """Losses of ``spec`` on ``problems``, read from the store where present and scored (and stored) otherwise.

    ``get_model()`` is called only when something is left to score.
    """
    key = {"model": spec, "problems": problem_set_fingerprint(problems)}
    meta = {"dataset": problems.name, "model": spec, "n_total": len(problems), "role": role, "task": "loss-delta"}
    run = store.get_or_create_run(KIND, key, meta)
    total = len(problems)
    if not run.finished:
        done_ids = store.done_sample_ids(run.run_id)
        todo = [p for p in problems.problems if p.task_id not in done_ids]
        n_done = total - len(todo)
        try:
            for start in range(0, len(todo), batch_size):
                chunk = todo[start : start + batch_size]
                losses = solution_losses(get_model(), chunk, token_budget=token_budget)
                store.add_samples(
                    run.run_id,
                    [SampleRow(l.task_id, None, {LOSS_KEY: l.loss}, {"n_tokens": l.n_tokens}) for l in losses],
                )
                n_done += len(chunk)
                if progress is not None:
                    progress(n_done, total)
        except BaseException:
            store.mark_interrupted(run.run_id)
            raise
        result = _read(store, run.run_id, problems)
        store.finish_run(run.run_id, {"mean_loss": sum(l.loss for l in result) / len(result), "n": len(result)})
        return result
    if progress is not None:
        progress(total, total)
    return _read(store, run.run_id, problems)


def _read(store: ResultStore, run_id: str, problems: ProblemSet) -> tuple[ProblemLoss, ...]:
    by_id = {s.sample_id: s for s in store.load_samples(run_id)}
    return tuple(
        ProblemLoss(p.task_id, float(by_id[p.task_id].scores[LOSS_KEY]), int(by_id[p.task_id].summary["n_tokens"]))
        for p in problems.problems
    )
