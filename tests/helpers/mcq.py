"""Single-set and whole-study shortcuts over ``core.mcq`` that only tests call, and the edit distance."""

from __future__ import annotations

from collections.abc import Sequence

from rapidfuzz.distance import Levenshtein

from core.data.questions import MCQuestion
from core.engine.models import LoadedModel
from core.engine.progress import ProgressCallback
from core.mcq.completion import MCQConfig, MCQRun, run_mcq_sets
from core.mcq.shuffle import shuffle_questions
from core.mcq.study import MCQReport, assemble_report, probe_questions


def run_mcq(
    lm: LoadedModel,
    questions: Sequence[MCQuestion],
    config: MCQConfig | None = None,
    *,
    progress: ProgressCallback | None = None,
    per_probe: bool = False,
) -> MCQRun:
    """Build every probe, generate all continuations, judge them (see ``run_mcq_sets``)."""
    return run_mcq_sets(lm, [questions], config, progress=progress, per_probe=per_probe)[0]


def run_benchmark(
    lm: LoadedModel,
    questions: Sequence[MCQuestion],
    config: MCQConfig | None = None,
    *,
    shuffle_seed: int = 0,
    permutation: bool = False,
    progress: ProgressCallback | None = None,
) -> MCQReport:
    """Probe the original and the shuffled benchmark (and rank orders); progress counts probes of all phases."""
    config = config or MCQConfig()
    shuffled_questions = shuffle_questions(questions, shuffle_seed)
    outcomes = probe_questions(lm, questions, shuffled_questions, config, permutation=permutation, progress=progress)
    return assemble_report(questions, shuffled_questions, outcomes, config, shuffle_seed=shuffle_seed)


def levenshtein(a: str, b: str) -> int:
    """Character edit distance (insertions, deletions, substitutions all cost 1), computed by rapidfuzz."""
    return int(Levenshtein.distance(a, b))
