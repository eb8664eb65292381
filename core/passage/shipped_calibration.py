"""The bundled model's scores on the fresh passages, shipped with LeakLens: a newcomer's first Inspect
places the passage at once instead of scoring about a thousand passages first.

``python -m bench.calibration`` scores the shipped fresh set with the bundled SmolLM2 on the CPU in float32
and writes ``assets/calibration/scores/<model>.json``: the store key the scores belong to (model identity,
start token, device, dtype, score definitions, fresh-set fingerprint, methods) and, per passage, what a
stored calibration sample holds (every fresh method's score, the scored token count, the loss and a digest
of the model's continuation). On first use the file is copied into the results store as a finished
calibration run, so no model pass runs over the fresh set. A key that differs in anything (another model
or start token, a GPU in bfloat16, edited passages or changed definitions) never reads it: the scores are
then computed as before.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.config import ASSETS_DIR
from core.errors import DataError
from core.store.results import ResultStore, RunInfo, SampleRow, canonical_json
from core.store.runloop import RunRequest

SHIPPED_DIR = ASSETS_DIR / "calibration" / "scores"
REGENERATE_COMMAND = ".venv/bin/python -m bench.calibration"
"""What rebuilds the shipped scores after the fresh set, the score definitions or the bundled model change."""
FORMAT = 1


@dataclass(frozen=True)
class ShippedScores:
    """One model's shipped fresh-passage scores and the run key they were computed under."""

    path: Path
    key: Mapping[str, Any]
    samples: tuple[SampleRow, ...]
    made: Mapping[str, Any]
    """Where and how the file was made (machine, versions, date): provenance of the seeded run."""


def shipped_path(spec: str) -> Path:
    return SHIPPED_DIR / f"{spec}.json"


def read_shipped(spec: str) -> ShippedScores | None:
    """The shipped scores of ``spec`` (a bundled name), or None when none ship; a damaged file is an error
    naming the command that rebuilds it."""
    path = shipped_path(spec)
    if "/" in spec or not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            raise ValueError(f"format {data.get('format')!r}, expected {FORMAT}")
        samples = tuple(
            SampleRow(str(s["id"]), None, {k: _score(v) for k, v in s["scores"].items()}, dict(s["summary"]))
            for s in data["samples"]
        )
        return ShippedScores(path, dict(data["key"]), samples, dict(data.get("made") or {}))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise DataError(f"{path} is damaged ({exc}); rebuild it with `{REGENERATE_COMMAND}`.") from exc


def _score(value: Any) -> float | None:
    return None if value is None else float(value)


def shipped_payload(key: Mapping[str, Any], samples: Sequence[SampleRow], made: Mapping[str, Any]) -> str:
    """The file ``read_shipped`` reads: one sample per line, so a rebuild's diff shows what moved."""
    head = {"format": FORMAT, "regenerate": REGENERATE_COMMAND, "made": dict(made), "key": dict(key)}
    lines = [
        json.dumps({"id": s.sample_id, "scores": dict(s.scores), "summary": dict(s.summary)}, sort_keys=True)
        for s in samples
    ]
    text = json.dumps(head, sort_keys=True)[:-1] + ', "samples": [\n' + ",\n".join(lines) + "\n]}\n"
    json.loads(text)  # the file must read back as written
    return text


def seed_from_shipped(
    store: ResultStore,
    request: RunRequest,
    sample_ids: Sequence[str],
    summarise: Callable[[list[SampleRow]], Mapping[str, Any]],
) -> RunInfo | None:
    """Copy the shipped scores matching ``request``'s key into ``store`` as a finished run; None (nothing
    done) when the store already holds a finished run, when no scores ship for the model, or when the shipped
    key differs in anything."""
    existing = store.find_run(request.kind, request.key)
    if existing is not None and existing.finished:
        return None
    shipped = read_shipped(str(request.key.get("model", "")))
    if shipped is None or canonical_json(dict(shipped.key)) != canonical_json(dict(request.key)):
        return None
    by_id = {s.sample_id: s for s in shipped.samples}
    if set(by_id) != set(sample_ids):
        return None
    meta = {**request.meta, "shipped": {"file": shipped.path.name, **shipped.made}}
    if request.setup is not None:
        meta["setup"] = dict(request.setup)
    run = store.get_or_create_run(request.kind, request.key, meta)
    if run.finished:
        return None
    rows = [by_id[i] for i in sample_ids]
    store.add_samples(run.run_id, rows)
    return store.finish_run(run.run_id, summarise(rows))


def reusable_samples(request: RunRequest, fingerprint_of: Callable[[Sequence[str]], str | None]) -> list[SampleRow]:
    """The shipped samples a rebuild can keep: same key in everything but the passages, and the shipped passages
    provably unchanged (``fingerprint_of(shipped ids)``, the current set's fingerprint over exactly those ids, equals
    the shipped key's). A rebuild after adding passages then scores only the new ones."""
    shipped = read_shipped(str(request.key.get("model", "")))
    if shipped is None:
        return []
    rest = {k: v for k, v in request.key.items() if k != "passages"}
    if canonical_json(rest) != canonical_json({k: v for k, v in shipped.key.items() if k != "passages"}):
        return []
    if fingerprint_of([s.sample_id for s in shipped.samples]) != shipped.key.get("passages"):
        return []
    return list(shipped.samples)


def seed_unfinished(store: ResultStore, request: RunRequest, samples: Sequence[SampleRow]) -> None:
    """Put ``samples`` into ``request``'s run as already scored, leaving it unfinished so the run loop scores the
    rest (``python -m bench.calibration`` after passages were added)."""
    if not samples:
        return
    meta = dict(request.meta)
    if request.setup is not None:
        meta["setup"] = dict(request.setup)
    run = store.get_or_create_run(request.kind, request.key, meta)
    if not run.finished:
        store.add_samples(run.run_id, list(samples))
