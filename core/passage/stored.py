"""An inspection kept in the results store: once judged, the page and the command store it as a finished run
of its own, so it is listed on the Results page, has its report (``python -m core report RUN_ID``) and can be
opened by a shared presentation link (``?present=1&run=RUN_ID``) with no model loaded.

The run's summary holds everything the view needs, as plain JSON: each passage's token records and scores, its
place among the fresh passages, its continuation and its finding. The same passages, model and token limit
name the same run: asking again reads it back.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

import numpy as np

from core.data.fingerprint import fingerprint_rows
from core.engine.records import TokenRecords
from core.errors import LeakLensError
from core.methods.analysis import PassageAnalysis
from core.methods.extraction import Continuation
from core.passage.extraction import ExtractionView
from core.passage.extraction_finding import ExtractionReading
from core.passage.inspection import InspectedPassage
from core.passage.placement import MethodPlacement, PassagePlacement
from core.passage.reading import data_label
from core.passage.result import InspectResult
from core.passage.summary import ReferencePoint
from core.passage.verdict import PassageVerdict
from core.stats.finding import Finding
from core.store.results import ResultStore, RunInfo
from core.store.stored_run import finished_run

KIND = "passage"
"""Store kind of a judged inspection."""
FORMAT = 2
"""Part of the run key: raised when the stored summary's layout changes, so an old one is never misread."""


def inspection_key(result: InspectResult, model_key: Mapping[str, str]) -> dict[str, Any]:
    """What names a stored inspection: the model (``model_key``, the handle's ``key``: its weights and start
    token), the passages and the token limit."""
    return {
        **model_key,
        "passages": fingerprint_rows(result.asked),
        "max_tokens": result.max_tokens,
        "format": FORMAT,
    }


def _json_ready(value: Any) -> Any:
    """Plain JSON values: arrays as lists, tuples as lists, NaN and infinities as None."""
    if isinstance(value, np.ndarray):
        return _json_ready(value.tolist())
    if isinstance(value, dict):
        return {str(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_ready(v) for v in value]
    if isinstance(value, float | np.floating):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    return value


def _summary(result: InspectResult) -> dict[str, Any]:
    return _json_ready(
        {
            "model": result.model,
            "complete": result.complete,
            "texts": list(result.texts),
            "asked": [list(pair) for pair in result.asked],
            "max_tokens": result.max_tokens,
            "fresh": result.fresh,
            "references": [asdict(r) for r in result.references],
            "references_note": result.references_note,
            "passages": [
                {
                    "name": passage.name,
                    "records": asdict(passage.analysis.records),
                    "scores": passage.analysis.scores,
                    "verdict": {
                        "placement": asdict(verdict.placement),
                        "finding": verdict.finding.to_dict(),
                        "continuation": None if verdict.continuation is None else asdict(verdict.continuation),
                        "view": None if verdict.view is None else asdict(verdict.view),
                        "reading": None if verdict.reading is None else asdict(verdict.reading),
                        "extraction_note": verdict.extraction_note,
                    },
                }
                for passage, verdict in zip(result.passages, result.verdicts, strict=True)
            ],
        }
    )


def store_inspection(store: ResultStore, result: InspectResult, model_key: Mapping[str, str]) -> RunInfo:
    """Keep a judged inspection as a finished run (the stored one when the same inspection was kept before) and
    return it. The store needs only the part of the run key that names the model (the handle's ``key``)."""
    if not result.judged or len(result.verdicts) != len(result.passages):
        raise LeakLensError("Only an inspection with a verdict for every passage can be stored.")
    key = inspection_key(result, model_key)
    meta = {"dataset": data_label(result), "model": result.model, "n_total": len(result.passages)}
    run = store.get_or_create_run(KIND, key, meta)
    if run.finished and (run.summary or {}).get("complete", False) >= result.complete:
        return run  # kept before, as complete as this one (a fast view's run gains the k-gram pass's scores)
    return store.finish_run(run.run_id, _summary(result))


def _floats(values: Any) -> np.ndarray:
    return np.array([math.nan if v is None else v for v in values], dtype=float)


def _records(data: dict[str, Any]) -> TokenRecords:
    kgram = data.get("kgram_logprobs")
    return TokenRecords(
        text=data["text"],
        token_ids=np.array(data["token_ids"], dtype=np.int64),
        offsets=np.array(data["offsets"], dtype=np.int64).reshape(-1, 2),
        logprobs=_floats(data["logprobs"]),
        mean_logprob=_floats(data["mean_logprob"]),
        std_logprob=_floats(data["std_logprob"]),
        entropy=_floats(data["entropy"]),
        rank=np.array(data["rank"], dtype=np.int64),
        kgram_logprobs=None if kgram is None else np.array([_floats(row) for row in kgram], dtype=float),
        n_dropped=int(data.get("n_dropped", 0)),
        n_dropped_exact=bool(data.get("n_dropped_exact", True)),
    )


def _placement(data: dict[str, Any]) -> PassagePlacement:
    methods = tuple(
        MethodPlacement(**{**m, "calibration_scores": tuple(m["calibration_scores"])}) for m in data["methods"]
    )
    return PassagePlacement(
        **{
            **data,
            "similar_ids": tuple(data["similar_ids"]),
            "similar_n_tokens": tuple(data["similar_n_tokens"]),
            "methods": methods,
        }
    )


def _verdict(data: dict[str, Any]) -> PassageVerdict:
    continuation, view, reading = data.get("continuation"), data.get("view"), data.get("reading")
    return PassageVerdict(
        placement=_placement(data["placement"]),
        finding=Finding.from_dict(data["finding"]),
        continuation=None
        if continuation is None
        else Continuation(
            continuation["fraction"],
            continuation["prefix_tokens"],
            tuple(continuation["truth_ids"]),
            tuple(continuation["generated_ids"]),
        ),
        view=None
        if view is None
        else ExtractionView(
            view["prompt"],
            tuple(view["truth_pieces"]),
            tuple(view["generated_pieces"]),
            tuple(view["matched"]),
            view["prompt_words"],
            view["leading_words"],
        ),
        reading=None
        if reading is None
        else ExtractionReading(
            reading["leading"], reading["length"], tuple(reading["fresh_leading"]), reading["tests"]
        ),
        extraction_note=data.get("extraction_note") or "",
    )


def inspection_from_run(store: ResultStore, run: RunInfo) -> InspectResult:
    """A stored inspection rebuilt from its run alone (no model, no fresh passages)."""
    finished_run(run, KIND, "a passage inspection")
    try:
        data = run.summary or {}
        passages = tuple(
            InspectedPassage(
                p["name"],
                PassageAnalysis(
                    _records(p["records"]),
                    {k: math.nan if v is None else float(v) for k, v in p["scores"].items()},
                ),
            )
            for p in data["passages"]
        )
        verdicts = tuple(_verdict(p["verdict"]) for p in data["passages"])
        references = tuple(ReferencePoint(**r) for r in data.get("references") or ())
    except (KeyError, TypeError, ValueError) as exc:
        raise LeakLensError(
            f"Run {run.run_id}'s stored inspection cannot be read ({type(exc).__name__}: {exc}); inspect the "
            "passage again to store it anew."
        ) from exc
    return InspectResult(
        model=data["model"],
        passages=passages,
        complete=True,
        placements=tuple(v.placement for v in verdicts),
        texts=tuple(data["texts"]),
        verdicts=verdicts,
        judged=True,
        asked=tuple((name, text) for name, text in data["asked"]),
        max_tokens=data.get("max_tokens"),
        fresh=dict(data.get("fresh") or {}),
        references=references,
        references_note=str(data.get("references_note") or ""),
    )
