"""Two stored runs of one question, and why their answers may differ.

"Has this model seen this data?" asked twice can read two levels: a sample of 20 texts with 4 detectors is
not the run of 100 texts with 16. Both runs are stored under different ids, so nothing on the list of runs
says they answer the same question. ``same_question`` finds the other runs of the opened run's question
(same test, same model, same data as people name it) and ``why_they_differ`` says in plain words which of
the choices that go into a run's identity differ between two of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.results.stored import data_label
from core.store.results import RunInfo

CONTENT_FIELDS = frozenset({"dataset", "benchmark", "examples", "scores_run", "set_runs"})
"""Key fields that fingerprint the rows a run scored (another sample or limit of the same data changes them)."""
VERSION_FIELDS = frozenset({"score_definitions", "sample_format"})
SETTING_NAMES: Mapping[str, str] = {
    "max_tokens": "tokens scored per text",
    "seed": "random seed",
    "shuffle_seed": "seed of the option shuffle",
    "n_splits": "random splits",
    "shards": "shards",
    "permutations": "shuffles per shard",
    "context": "context length",
    "stride": "stride",
    "cut": "where options are cut",
    "metric": "similarity measure",
    "threshold": "similarity threshold",
    "layout": "prompt layout",
    "permutation": "option-order ranking",
    "start_token": "start token",
    "revision": "model revision",
}
"""Plain names of the settings in run keys; a field not named here is shown by its own name."""


def same_question(runs: Sequence[RunInfo], run: RunInfo) -> list[RunInfo]:
    """The other finished runs of ``run``'s test on the same model and data, in the order given."""
    label = data_label(run)
    return [
        other
        for other in runs
        if other.run_id != run.run_id
        and other.finished
        and other.kind == run.kind
        and other.model == run.model
        and data_label(other) == label
    ]


def _methods(run: RunInfo) -> list[str]:
    """The run's detectors in the order it ran them (its meta), else as its key lists them."""
    keyed = list(run.key.get("methods") or [])
    ordered = list(run.meta.get("methods") or [])
    return ordered if sorted(ordered) == sorted(keyed) else keyed


def _methods_line(a: RunInfo, b: RunInfo) -> str | None:
    ours, theirs = _methods(a), _methods(b)
    if sorted(ours) == sorted(theirs):
        return None
    labels = {**dict(b.meta.get("method_labels") or {}), **dict(a.meta.get("method_labels") or {})}

    def named(keys: Sequence[str]) -> str:
        shown = [str(labels.get(k, k)) for k in keys]
        return ", ".join(shown[:4]) + (f" and {len(shown) - 4} more" if len(shown) > 4 else "")

    line = f"Detectors: {len(ours)} in this run, {len(theirs)} in the other"
    only_ours = [k for k in ours if k not in theirs]
    only_theirs = [k for k in theirs if k not in ours]
    if only_ours:
        line += f"; only this run used {named(only_ours)}"
    if only_theirs:
        line += f"; only the other used {named(only_theirs)}"
    return line + "."


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 40 else text[:37] + "…"


def why_they_differ(run: RunInfo, other: RunInfo) -> list[str]:
    """Plain sentences on what differs between two runs of one question (empty: nothing recorded differs)."""
    reasons: list[str] = []
    fields = set(run.key) | set(other.key)
    if any(run.key.get(f) != other.key.get(f) for f in fields & CONTENT_FIELDS):
        if run.n_total != other.n_total and run.n_total is not None and other.n_total is not None:
            reasons.append(
                f"Data: {run.n_total:,} rows in this run, {other.n_total:,} in the other (another sample or limit "
                "of the same data). Fewer rows give a wider interval, and with it a weaker or less certain level."
            )
        else:
            reasons.append("Data: the same number of rows, but not the same rows (another sample of the data).")
    methods = _methods_line(run, other)
    if methods:
        reasons.append(
            methods + " The verdict rests on the detectors that ran: more detectors, more chances to separate."
        )
    if run.key.get("model_identity") != other.key.get("model_identity"):
        reasons.append("Model: the same name, but other weights (another revision or file).")
    for field in sorted(fields - CONTENT_FIELDS - VERSION_FIELDS - {"methods", "model", "model_identity"}):
        ours, theirs = run.key.get(field), other.key.get(field)
        if ours != theirs:
            name = SETTING_NAMES.get(field, field.replace("_", " "))
            reasons.append(f"Setting, {name}: {_short(ours)} in this run, {_short(theirs)} in the other.")
    if any(run.key.get(f) != other.key.get(f) for f in fields & VERSION_FIELDS):
        reasons.append("LeakLens version: the runs were scored by different versions of LeakLens.")
    return reasons
