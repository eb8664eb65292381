"""The bundled model's shipped fresh-passage scores: they belong to today's fresh set and definitions, they
equal a rescoring, and a first Inspect reads them with no model pass; any other key never reads them."""

from __future__ import annotations

import math
import random
from collections import defaultdict
from dataclasses import replace

import pytest

from core.engine.handle import resolve_model
from core.engine.setup import ScoringSetup
from core.methods.support import supported_methods
from core.passage.calibration import (
    FRESH_KIND,
    FreshPassage,
    fresh_methods,
    fresh_run_key,
    load_fresh_passages,
    stored_fresh_calibration,
)
from core.passage.shipped_calibration import REGENERATE_COMMAND, read_shipped, seed_from_shipped, shipped_path
from core.store.results import ResultStore, SampleRow
from core.store.runloop import RunRequest

BUNDLED = "smollm2-135m"
CPU = ScoringSetup("cpu", "float32")
SAMPLE = 24
TOLERANCE = 1e-4


def _no_model():
    raise AssertionError("the model was asked for: a fresh passage was about to be scored")


def _summarise(rows: list[SampleRow]) -> dict:
    return {"n": len(rows)}


def _todays_key(setup: ScoringSetup = CPU, passages=None) -> dict:
    model = resolve_model(BUNDLED, setup=setup)
    chosen, _ = supported_methods(model, fresh_methods())
    return fresh_run_key(model, passages or load_fresh_passages(), chosen)


def test_the_shipped_scores_belong_to_todays_fresh_set_definitions_methods_and_model():
    """Editing a passage, a score definition, the fresh methods or the bundled model's package changes this
    key: the test then fails, naming the command that rebuilds the file."""
    shipped = read_shipped(BUNDLED)
    assert shipped is not None, f"{shipped_path(BUNDLED)} is missing: build it with `{REGENERATE_COMMAND}`."
    key = _todays_key()
    changed = sorted(name for name in set(key) | set(shipped.key) if key.get(name) != shipped.key.get(name))
    assert not changed, (
        f"The shipped calibration of {BUNDLED} is stale ({', '.join(changed)} changed): rebuild it with "
        f"`{REGENERATE_COMMAND}` and commit {shipped_path(BUNDLED).relative_to(shipped_path(BUNDLED).parents[3])}."
    )
    ids = [p.id for p in load_fresh_passages()]
    assert [s.sample_id for s in shipped.samples] == ids, f"passages changed: rebuild with `{REGENERATE_COMMAND}`"
    for sample in shipped.samples:
        assert set(sample.scores) == set(key["methods"])
        assert sample.summary["n_tokens"] >= 1 and math.isfinite(sample.summary["loss"])
    assert shipped.made["setup"] == CPU.to_dict()


def test_a_first_inspect_with_the_bundled_model_reads_the_shipped_scores_with_no_model_pass(tmp_path):
    store = ResultStore(tmp_path / "results.sqlite")
    calibration = stored_fresh_calibration(resolve_model(BUNDLED, loader=lambda _: _no_model(), setup=CPU), store=store)
    shipped = read_shipped(BUNDLED)
    assert shipped is not None
    assert calibration.source == "shipped" and calibration.n_computed == 0 and calibration.complete
    assert calibration.n == len(shipped.samples) == len(load_fresh_passages())
    first = shipped.samples[0]
    assert calibration.scores["loss"][0] == first.scores["loss"]
    (run,) = store.list_runs(FRESH_KIND)
    assert run.finished and run.meta["shipped"]["file"] == shipped_path(BUNDLED).name
    again = stored_fresh_calibration(resolve_model(BUNDLED, loader=lambda _: _no_model(), setup=CPU), store=store)
    assert again.source == "store" and again.run_id == calibration.run_id


@pytest.mark.parametrize(
    "what",
    ["a GPU in bfloat16", "another start token", "an edited passage", "another model"],
)
def test_any_other_key_never_reads_the_shipped_scores(tmp_path, what):
    passages = list(load_fresh_passages())
    key = _todays_key()
    if what == "a GPU in bfloat16":
        key = _todays_key(ScoringSetup("cuda", "bfloat16"))
    elif what == "another start token":
        key = {**key, "start_token": "<|im_start|>"}
    elif what == "an edited passage":
        passages[5] = replace(passages[5], text=passages[5].text + " Edited.")
        key = _todays_key(passages=passages)
    else:
        key = {**key, "model": "tiny-random"}
    store = ResultStore(tmp_path / "results.sqlite")
    request = RunRequest(FRESH_KIND, key, {"model": key["model"]}, CPU.to_dict())
    assert seed_from_shipped(store, request, [p.id for p in passages], _summarise) is None
    assert store.list_runs() == []


def _sample(passages: tuple[FreshPassage, ...], n_tokens: dict[str, int]) -> list[FreshPassage]:
    """A seeded sample with a passage of every form in every length band it has, topped up at random.

    Each form and band is represented by one of its two shortest passages, and the top-up is drawn from passages
    under 100 tokens: every band and form is checked while the model passes stay short (a long passage costs a
    long pass and its continuation)."""
    bands = (0, 40, 100, 250)
    cells: dict[tuple[str, int], list[FreshPassage]] = defaultdict(list)
    for p in passages:
        band = max(b for b in bands if n_tokens[p.id] >= b)
        cells[(p.form, band)].append(p)
    rng = random.Random(36)
    chosen = [rng.choice(sorted(cells[cell], key=lambda p: n_tokens[p.id])[:2]) for cell in sorted(cells)]
    rest = [p for p in passages if p not in chosen and n_tokens[p.id] < 100]
    chosen += rng.sample(rest, max(0, SAMPLE - len(chosen)))
    # In order of length, so each batch holds passages of similar length: a batch continues its passages for as
    # many steps as its longest one needs, and the long ones together make the fewest steps in all.
    return sorted(chosen, key=lambda p: n_tokens[p.id])


@pytest.mark.slow
def test_rescoring_a_sample_of_every_length_and_form_matches_the_shipped_scores(smollm2, tmp_path):
    """The sample is scored as one new set (other batches than the shipped file's): every score within 1e-4,
    the same token counts, and the model continues every passage with exactly the same tokens."""
    assert smollm2.device.type == "cpu" and str(smollm2.dtype) == "torch.float32"
    shipped = read_shipped(BUNDLED)
    assert shipped is not None
    by_id = {s.sample_id: s for s in shipped.samples}
    passages = load_fresh_passages()
    sample = _sample(passages, {i: int(s.summary["n_tokens"]) for i, s in by_id.items()})
    assert len(sample) >= SAMPLE
    assert {p.form for p in sample} == {p.form for p in passages}
    rescored = stored_fresh_calibration(
        resolve_model(BUNDLED, loader=lambda _: smollm2, setup=CPU),
        store=ResultStore(tmp_path / "results.sqlite"),
        passages=sample,
        batch_size=8,
        shipped=False,
    )
    assert rescored.source == "scored" and rescored.n_computed == len(sample)
    store = ResultStore(tmp_path / "results.sqlite")
    for row in store.load_samples(rescored.run_id):
        expected = by_id[row.sample_id]
        assert row.summary["n_tokens"] == expected.summary["n_tokens"], row.sample_id
        assert row.summary.get("continuation") == expected.summary.get("continuation"), row.sample_id
        for key, value in row.scores.items():
            want = expected.scores[key]
            if value is None or want is None or not math.isfinite(value):
                assert (value is None or not math.isfinite(value)) and (want is None or not math.isfinite(want))
                continue
            assert abs(value - want) <= TOLERANCE, (row.sample_id, key, value, want)
