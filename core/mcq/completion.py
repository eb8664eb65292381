"""Multiple-choice memorisation test: does the model finish benchmark options word for word?

Each question yields one probe per option (see ``core.mcq.probes``); a question's score is the number
of its probes the model gets right (0..n_options), for two probes:

- ``next_token``: the greedy next token equals the ground truth's first in-context token;
- ``completion``: the greedy continuation reproduces the ground truth exactly; ``similar`` counts a
  continuation whose similarity (ROUGE-L or edit) reaches a threshold.

Shuffling the options (``core.mcq.shuffle``) and measuring again shows how much a shuffled release
mitigates: the drop in mean score.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from core.data.questions import MCQuestion, PromptLayout
from core.engine.generation import DEFAULT_GENERATION_BUDGET, Generation, greedy_generate
from core.engine.model_source import ScoringModel
from core.engine.models import LoadedModel
from core.engine.progress import ProgressCallback
from core.errors import InputTextError
from core.mcq.match import SIMILARITY_METRICS, SimilarityMetric, similarity
from core.mcq.probes import CUT_MODES, CutMode, Probe, build_probes, completion_candidate, continuation_text
from core.mcq.renderings import RenderingPrompts, generate_along_renderings

ProbeKind = Literal["next_token", "completion", "similar"]
PROBE_KINDS: tuple[ProbeKind, ...] = ("next_token", "completion", "similar")


@dataclass(frozen=True)
class MCQConfig:
    """How probes are built and judged."""

    layout: PromptLayout = field(default_factory=PromptLayout)
    cut: CutMode = "chars"
    """``chars`` (half the characters, as the study) or ``words`` (half the words)."""
    metric: SimilarityMetric = "rouge_l"
    """Similarity behind the ``similar`` count."""
    threshold: float = 0.75
    """A completion with similarity >= threshold counts as ``similar``."""
    slack_tokens: int = 2
    """Tokens generated beyond the ground truth's own length, in case the model splits it differently."""
    token_budget: int = DEFAULT_GENERATION_BUDGET

    def __post_init__(self) -> None:
        if self.cut not in CUT_MODES:
            raise InputTextError(f"Unknown cut mode '{self.cut}'; use one of {', '.join(CUT_MODES)}.")
        if self.metric not in SIMILARITY_METRICS:
            raise InputTextError(f"Unknown similarity '{self.metric}'; use one of {', '.join(SIMILARITY_METRICS)}.")
        if not 0.0 < self.threshold <= 1.0:
            raise InputTextError(f"The similarity threshold must be in (0, 1], got {self.threshold}.")
        if not 0 <= self.slack_tokens <= 64:
            raise InputTextError("slack_tokens must be between 0 and 64.")


@dataclass(frozen=True)
class ProbeResult:
    probe: Probe
    predicted_id: int
    """The model's greedy next token."""
    continuation: str
    """Text the model generated after the context."""
    completion: str
    """The part of the continuation compared with the ground truth (head removed, same length)."""
    similarity: float
    similar: bool

    @property
    def next_token_correct(self) -> bool:
        return self.predicted_id == self.probe.expected_id

    @property
    def exact(self) -> bool:
        return self.completion == self.probe.ground_truth

    def correct(self, kind: ProbeKind) -> bool:
        if kind == "next_token":
            return self.next_token_correct
        if kind == "completion":
            return self.exact
        if kind == "similar":
            return self.similar
        raise ValueError(f"Unknown probe '{kind}'; use one of {', '.join(PROBE_KINDS)}.")


@dataclass(frozen=True)
class QuestionResult:
    question: MCQuestion
    probes: tuple[ProbeResult, ...]

    def score(self, kind: ProbeKind) -> int:
        """Number of the question's probes answered right (0..n_options)."""
        return sum(p.correct(kind) for p in self.probes)

    def row(self) -> dict[str, object]:
        """A flat summary for tables and JSON."""
        return {
            "index": self.question.index,
            "question": self.question.question,
            "answer": self.question.answer,
            "next_token": self.score("next_token"),
            "completion": self.score("completion"),
            "similar": self.score("similar"),
        }


@dataclass(frozen=True)
class ScoreSummary:
    distribution: tuple[int, ...]
    """Number of questions with score 0, 1, ..., n_options."""
    mean: float

    def to_dict(self) -> dict[str, object]:
        return {"distribution": list(self.distribution), "mean": self.mean}


@dataclass(frozen=True)
class MCQRun:
    results: tuple[QuestionResult, ...]
    config: MCQConfig

    @property
    def n_options(self) -> int:
        return len(self.results[0].question.options) if self.results else 0

    def summary(self, kind: ProbeKind, questions: Sequence[int] | None = None) -> ScoreSummary:
        """Score distribution and mean over all questions, or over the given question indices."""
        wanted = None if questions is None else set(questions)
        scores = [r.score(kind) for r in self.results if wanted is None or r.question.index in wanted]
        distribution = [0] * (self.n_options + 1)
        for s in scores:
            distribution[s] += 1
        return ScoreSummary(tuple(distribution), sum(scores) / len(scores) if scores else float("nan"))

    def to_dict(self) -> dict[str, object]:
        """JSON layout shared by the CLI and exports."""
        completion = self.summary("completion").to_dict()
        similar = self.summary("similar").to_dict()
        completion["similar"] = {"metric": self.config.metric, "threshold": self.config.threshold, **similar}
        return {"next_token": self.summary("next_token").to_dict(), "completion": completion}


def run_mcq_sets(
    lm: ScoringModel,
    question_sets: Sequence[Sequence[MCQuestion]],
    config: MCQConfig | None = None,
    *,
    progress: ProgressCallback | None = None,
    per_probe: bool = False,
) -> list[MCQRun]:
    """Probe versions of one benchmark together (original and shuffled options); one run per set.

    Continuations come from one pass per question rendering (``core.mcq.renderings``), question ``i`` of
    every set sharing its question text; ``per_probe`` runs each probe's own prompt instead: the slow
    reference path the fast one must equal (tests, ``bench/mcq.py``). A served model is handed each probe's
    own prompt (the server schedules and caches as it does).
    """
    config = config or MCQConfig()
    probe_sets = [_set_probes(lm, questions, config) for questions in question_sets]
    probes = [p for set_probes in probe_sets for p in set_probes]
    counts = [p.n_truth_tokens + config.slack_tokens for p in probes]
    contexts = [p.context_ids for p in probes]

    def each_probe(model: ScoringModel) -> list[Generation]:
        return greedy_generate(model, contexts, counts, token_budget=config.token_budget, progress=progress)

    def along_renderings(model: LoadedModel) -> list[Generation]:
        return (
            each_probe(model)
            if per_probe
            else _generations_along_renderings(model, question_sets, probe_sets, config, progress)
        )

    # A model loaded here reuses one cache along each question's renderings; a server is handed each probe.
    generations = lm.visit(along_renderings, each_probe)
    judged = [_judge(lm, probe, generation, config) for probe, generation in zip(probes, generations, strict=True)]
    runs, at = [], 0
    for questions in question_sets:
        per_question = len(questions[0].options)
        results = tuple(
            QuestionResult(question=q, probes=tuple(judged[at + i * per_question : at + (i + 1) * per_question]))
            for i, q in enumerate(questions)
        )
        at += per_question * len(questions)
        runs.append(MCQRun(results=results, config=config))
    return runs


def _set_probes(lm: ScoringModel, questions: Sequence[MCQuestion], config: MCQConfig) -> list[Probe]:
    if not questions:
        raise InputTextError("No questions to probe.")
    n_options = {len(q.options) for q in questions}
    if len(n_options) != 1:
        raise InputTextError(f"Questions have different numbers of options ({sorted(n_options)}); probe them apart.")
    return [
        p for q in questions for p in build_probes(lm, q, config.layout, config.cut, slack_tokens=config.slack_tokens)
    ]


def _generations_along_renderings(
    lm: LoadedModel,
    question_sets: Sequence[Sequence[MCQuestion]],
    probe_sets: Sequence[Sequence[Probe]],
    config: MCQConfig,
    progress: ProgressCallback | None,
) -> list[Generation]:
    renderings = []
    for questions, set_probes in zip(question_sets, probe_sets, strict=True):
        per_question = len(questions[0].options)
        for i, question in enumerate(questions):
            text, _ = config.layout.render(question)
            ids = (lm.start_token_id, *lm.tokenizer(text, add_special_tokens=False)["input_ids"])
            own = set_probes[i * per_question : (i + 1) * per_question]
            renderings.append(
                RenderingPrompts(
                    group=i,
                    ids=ids,
                    prompts=tuple(p.context_ids for p in own),
                    counts=tuple(p.n_truth_tokens + config.slack_tokens for p in own),
                )
            )
    per_rendering = generate_along_renderings(lm, renderings, token_budget=config.token_budget, progress=progress)
    return [g for row in per_rendering for g in row]


def _judge(lm: ScoringModel, probe: Probe, generation: Generation, config: MCQConfig) -> ProbeResult:
    continuation = continuation_text(lm, probe, generation.token_ids)
    candidate = completion_candidate(probe, continuation)
    sim = similarity(probe.ground_truth, candidate, config.metric)
    return ProbeResult(
        probe=probe,
        predicted_id=generation.token_ids[0],
        continuation=continuation,
        completion=candidate,
        similarity=sim,
        similar=sim >= config.threshold,
    )


@dataclass(frozen=True)
class Mitigation:
    """Memorisation before and after shuffling the options."""

    original: MCQRun
    shuffled: MCQRun
    seed: int

    def drop(self, kind: ProbeKind) -> float:
        """Mean score before minus after: how much the shuffled release hides."""
        return self.original.summary(kind).mean - self.shuffled.summary(kind).mean


def summary_row(
    model: str, benchmark: str, mitigation: Mitigation, kind: ProbeKind = "completion"
) -> dict[str, object]:
    """One line of the model x benchmark table in the study's layout.

    Memorisation is the mean score (0..n_options) over single-answer and over multi-answer questions
    (None when the benchmark has no such question or no answer column); mitigation is the drop in mean
    score after shuffling.
    """
    run = mitigation.original
    single = [r.question.index for r in run.results if r.question.answer is not None and not r.question.is_multi_answer]
    multi = [r.question.index for r in run.results if r.question.is_multi_answer]
    unknown = [r.question.index for r in run.results if r.question.answer is None]
    single_all = single + unknown  # without an answer column every question is treated as single-choice
    return {
        "model": model,
        "benchmark": benchmark,
        "probe": kind,
        "questions": len(run.results),
        "memorisation (single-choice)": run.summary(kind, single_all).mean if single_all else None,
        "memorisation (multi-choice)": run.summary(kind, multi).mean if multi else None,
        "mitigation": mitigation.drop(kind),
    }
