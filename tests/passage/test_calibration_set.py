"""The shipped fresh calibration set, its stored scores, and a passage's placement among them."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest

from core.config import ASSETS_DIR
from core.data.examples import EXAMPLES, FRESH, GETTYSBURG, GETTYSBURG_PARAPHRASE
from core.engine.handle import resolve_model
from core.engine.setup import ScoringSetup
from core.errors import DataError, LeakLensError
from core.membership.benchmark import SCORE_DEFINITIONS
from core.methods.analysis import analyse_passages
from core.methods.loss import Loss
from core.methods.min_k import MinK
from core.passage.calibration import (
    FRESH_KIND,
    FRESH_PASSAGES_PATH,
    FreshCalibration,
    FreshPassage,
    fresh_methods,
    fresh_run_key,
    fresh_set_fingerprint,
    load_fresh_passages,
    stored_fresh_calibration,
)
from core.passage.placement import (
    FORMULAIC_CAVEAT,
    LENGTH_FACTOR,
    PassagePlacement,
    place_passage,
    placement_finding,
    similar_length,
)
from core.passage.summary import MIN_PASSAGE_TOKENS
from core.passage.text_form import group_of_form, guess_group
from core.store.results import ResultStore

CPU = ScoringSetup("cpu", "float32")


def _words(text: str) -> int:
    return len(text.split())


def _runs(text: str, n: int = 8) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z']+", text.lower())
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


# --- the shipped file ---------------------------------------------------------------------------------


def test_shipped_set_has_enough_unique_passages_spread_over_lengths(tiny_lm):
    """At least 300 passages from one sentence to about 400 tokens, so that a passage of any length a reading
    needs (20 to 400 tokens) has at least 100 fresh passages within the length factor: enough for "strong"."""
    passages = load_fresh_passages()
    assert len(passages) >= 300
    assert len({p.id for p in passages}) == len(passages)
    assert len({p.text for p in passages}) == len(passages)
    assert all(re.fullmatch(r"fresh-cal-\d{3,4}", p.id) for p in passages)
    words = [_words(p.text) for p in passages]
    assert min(words) <= 12  # one sentence
    assert max(words) <= 300
    # The tiny test model shares SmolLM2's tokenizer: these are the counts the bundled model compares.
    tokens = [len(tiny_lm.tokenizer(p.text, add_special_tokens=False)["input_ids"]) for p in passages]
    for n in (MIN_PASSAGE_TOKENS, 30, 50, 80, 120, 200, 300, 400):
        near = sum(abs(math.log(m / n)) <= math.log(LENGTH_FACTOR) for m in tokens)
        assert near >= 100, (n, near)


FORMS = ("narrative", "news", "dialogue", "technical", "instructions", "code", "non-english")
FORMULAIC_FORMS = (
    "recipe",
    "weather",
    "sports",
    "contract",
    "licence",
    "policy",
    "changelog",
    "api-reference",
    "code-comment",
    "form",
    "list",
    "faq",
    "email",
    "listing",
    "job-posting",
    "minutes",
    "notice",
)
"""The kinds that are predictable for their kind: at least 40 fresh passages of each (``core.passage.kind``)."""


def test_shipped_passages_are_labelled_by_form_and_independent_of_the_other_shipped_texts():
    passages = load_fresh_passages()
    counts = {form: sum(p.form == form for p in passages) for form in FORMS + FORMULAIC_FORMS}
    assert sum(counts.values()) == len(passages)  # every passage has a known form
    assert all(n >= 20 for n in counts.values()), counts
    assert all(counts[form] >= 40 for form in FORMULAIC_FORMS), counts
    for p in passages:
        assert p.text.strip() == p.text, p.id
    others = [e.text for e in EXAMPLES] + [GETTYSBURG_PARAPHRASE.text]
    for path in sorted((ASSETS_DIR / "demo").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            others += [v for v in json.loads(line).values() if isinstance(v, str)]
    seen = set().union(*(_runs(t) for t in others))
    shared = {p.id: _runs(p.text) & seen for p in passages}
    assert not any(shared.values()), {k: v for k, v in shared.items() if v}
    within = [_runs(p.text) for p in passages]
    repeated = Counter(run for runs in within for run in runs)
    assert not [run for run, n in repeated.items() if n > 1]  # no eight-word run twice in the set


def test_the_kind_of_text_is_read_as_the_labels_say_for_nearly_every_fresh_passage():
    """The grouping a pasted passage gets (code, non-English, dialogue, prose) agrees with the writers' labels
    for the clear kinds; the fresh passages are grouped by the same rule, so a mislabelled one cannot skew it."""
    passages = load_fresh_passages()
    agree = {form: 0 for form in ("code", "non-english")}
    for p in passages:
        if p.form in agree:
            agree[p.form] += guess_group(p.text) == group_of_form(p.form)
        elif p.form in ("narrative", "news", "technical", "instructions"):
            assert guess_group(p.text) in ("prose", "dialogue"), p.id  # English, not code
    assert agree["code"] == sum(p.form == "code" for p in passages)
    assert agree["non-english"] >= sum(p.form == "non-english" for p in passages) - 1


def test_a_broken_calibration_file_is_refused_with_the_reason(tmp_path):
    def write(lines: list[str]):
        path = tmp_path / "set.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    good = json.dumps({"id": "a", "text": "Some words."})
    assert load_fresh_passages(write([good])) == (FreshPassage("a", "Some words."),)
    with pytest.raises(DataError, match="unique"):
        load_fresh_passages(write([good, good]))
    with pytest.raises(DataError, match="lines 2: not valid JSON"):
        load_fresh_passages(write([good, "{not json"]))
    with pytest.raises(DataError, match="no text"):
        load_fresh_passages(write([good, json.dumps({"id": "b", "text": "  "})]))
    with pytest.raises(DataError, match="'text'"):
        load_fresh_passages(write([json.dumps({"id": "a", "body": "x"})]))


# --- placement ----------------------------------------------------------------------------------------


def _calibration(n_tokens, loss, min_k=None) -> FreshCalibration:
    ids = tuple(f"f{i}" for i in range(len(n_tokens)))
    scores = {"loss": tuple(loss)}
    if min_k is not None:
        scores["min_k_20"] = tuple(min_k)
    return FreshCalibration("m", "run", ids, tuple(n_tokens), scores, {"loss": "Loss", "min_k_20": "Min-20%"})


def test_similar_lengths_are_within_the_factor_or_the_nearest_when_too_few():
    lengths = [10, 50, 60, 70, 100, 150, 200]
    # 100 tokens, factor 1.5: 66.7..150 -> 70, 100, 150 (nearest first on a log scale: 100, 70, 150).
    assert similar_length(100, lengths, factor=1.5, minimum=3) == ([4, 3, 5], False)
    # Five needed: the next nearest are 60 (log 1.67 = 0.51) and 50 (log 2 = 0.69), not 200 (log 2 = 0.69, later).
    assert similar_length(100, lengths, factor=1.5, minimum=5) == ([4, 3, 5, 2, 1], True)
    # A set smaller than the minimum is used whole.
    assert similar_length(100, [90, 110], minimum=15) == ([1, 0], False)
    assert similar_length(100, [90, 400], factor=1.5, minimum=15) == ([0, 1], True)
    with pytest.raises(LeakLensError, match="no scored token"):
        similar_length(0, lengths)


def test_percentiles_and_chance_match_hand_computed_values():
    # Six similar passages (95..120 tokens) and two far longer ones whose scores must not count.
    calibration = _calibration(
        [100, 110, 120, 95, 105, 115, 400, 500],
        loss=[-3.0, -2.0, -1.0, -1.0, -4.0, -5.0, 9.0, 9.0],
        min_k=[-8.0, -7.0, -6.0, -5.0, -9.0, -10.0, 9.0, 9.0],
    )
    placement = place_passage({"loss": -1.0, "min_k_20": 0.0, "zlib": 1.0}, 100, calibration, minimum=5)
    assert not placement.widened
    assert placement.n_similar == 6
    assert placement.token_range == (95, 120)
    loss, min_k = placement.methods
    # loss: 4 below (-2, -3, -4, -5), 2 tied (-1, -1): (4 + 0.5 * 2) / 6; 2 at least as high -> chance 3/7.
    assert loss.percentile == pytest.approx(100 * 5 / 6)
    assert (loss.n_at_least, loss.chance) == (2, pytest.approx(3 / 7))
    assert sorted(loss.calibration_scores) == [-5.0, -4.0, -3.0, -2.0, -1.0, -1.0]
    # Min-K%: above all six -> 100th percentile, chance 1/7.
    assert (min_k.percentile, min_k.n_at_least, min_k.chance) == (100.0, 0, pytest.approx(1 / 7))
    assert placement.deciding is loss  # the less extreme reading decides
    assert placement.method("zlib") is None  # only the placed methods
    chart = loss.chart_data()
    assert chart["passage_score"] == -1.0
    assert isinstance(chart["calibration_scores"], list)
    assert json.loads(json.dumps(placement.to_dict()))["methods"][1]["chance"] == pytest.approx(1 / 7)


def test_missing_scores_are_skipped_and_nothing_to_place_is_refused():
    calibration = _calibration([100] * 4, loss=[-3.0, float("nan"), -1.0, -2.0])
    placement = place_passage({"loss": -1.5, "min_k_20": -1.0}, 100, calibration, minimum=2)
    (loss,) = placement.methods  # Min-K% is not in this calibration
    assert loss.n_compared == 3
    assert loss.percentile == pytest.approx(100 * 2 / 3)
    with pytest.raises(LeakLensError, match="None of loss, min_k_20"):
        place_passage({"zlib": 1.0}, 100, calibration)
    with pytest.raises(LeakLensError, match="None of"):
        place_passage({"loss": float("nan")}, 100, calibration)


# --- the finding --------------------------------------------------------------------------------------


def _placed(rank_from_top: int, n: int, *, min_k_rank: int | None = None, widened: bool = False) -> PassagePlacement:
    """A passage with ``rank_from_top`` of ``n`` similar fresh passages scoring above it (no ties)."""
    fresh = [float(-i) for i in range(n)]  # 0, -1, ..., -(n-1)
    score = -rank_from_top + 0.5 if rank_from_top else 1.0
    scores = {"loss": score}
    min_k = None
    if min_k_rank is not None:
        min_k = fresh
        scores["min_k_20"] = -min_k_rank + 0.5 if min_k_rank else 1.0
    placement = place_passage(scores, 100, _calibration([100] * n, fresh, min_k), minimum=1)
    return replace(placement, widened=widened)


@pytest.mark.parametrize(
    ("above_it", "n", "level"),
    [
        (0, 200, "strong"),  # above all 200: chance 1/201
        (1, 200, "strong"),  # chance 2/201 < 1%
        (5, 200, "moderate"),  # 97.5th percentile, chance 6/201
        (15, 200, "weak"),  # 92.5th, chance 16/201
        (30, 200, "inconclusive"),  # 85th: above most new text, not far enough to call
        (49, 200, "inconclusive"),  # chance 50/201, just under the no-effect margin of 1 in 4
        (50, 200, "none"),  # chance 51/201: inside the bulk of new text
        (0, 36, "moderate"),  # above all 36: chance 1/37 — 36 passages cannot support "strong"
        (0, 15, "weak"),  # chance 1/16
    ],
)
def test_levels_follow_the_percentile_within_what_the_set_size_supports(above_it, n, level):
    finding = placement_finding(_placed(above_it, n))
    assert finding.level == level
    assert FORMULAIC_CAVEAT in finding.caveats
    assert "evidence, not proof" in FORMULAIC_CAVEAT
    if level == "inconclusive":
        assert finding.headline.startswith("Cannot tell: more predictable than ")
        assert "above most new text but not far enough to count as a sign" in finding.headline
    elif level != "none":
        assert finding.headline.startswith("More predictable than ")
        assert finding.headline.endswith("the model may have seen it — evidence, not proof.")
    if n < 99 and level not in ("none", "inconclusive"):
        assert any("strongest possible reading" in c for c in finding.caveats)


def test_headlines_are_plain_and_never_overstate_the_share():
    top = placement_finding(_placed(0, 36))
    assert top.headline == (
        "More predictable than all 36 freshly written passages of similar length: a sign "
        "the model may have seen it — evidence, not proof."
    )
    assert top.numbers.startswith("loss: more predictable than all 36")
    assert any("1 time in 37" in e for e in top.evidence)
    # 199.5 / 200 = 99.75%: shown rounded down, never as 100%.
    assert "99.75" not in placement_finding(_placed(1, 200)).headline
    assert "than 99% of 200" in placement_finding(_placed(1, 200)).headline
    middle = placement_finding(_placed(100, 200))
    assert middle.level == "none"
    assert middle.headline.startswith("No clear sign the model has seen it: more predictable than 50% of 200")
    assert "(100 of 200 score this high)" in middle.numbers  # never "1 in 1" for a common score
    assert "(1 in 10 score this high)" in placement_finding(_placed(19, 200)).numbers
    bottom = placement_finding(_placed(200, 200))
    assert bottom.headline == (
        "No sign the model has seen it: less predictable than all 200 freshly written passages of similar length."
    )


def test_the_less_extreme_method_decides_and_the_other_is_named():
    finding = placement_finding(_placed(15, 200, min_k_rank=0))  # loss 92.5th, Min-K% above all
    assert finding.level == "weak"
    assert finding.numbers.startswith("loss:")
    assert any("Min-20% alone places it higher" in c for c in finding.caveats)
    reverse = placement_finding(_placed(0, 200, min_k_rank=15))
    assert reverse.level == "weak"
    assert reverse.numbers.startswith("Min-20%:")


def test_a_widened_comparison_says_so():
    finding = placement_finding(_placed(0, 200, widened=True))
    assert any("nearest in length" in c for c in finding.caveats)


# --- stored scores ------------------------------------------------------------------------------------


def _refuse_model():
    raise AssertionError("the model was loaded although every score is stored")


def test_fresh_scores_are_computed_once_and_read_back_from_the_store(tmp_path, tiny_lm):
    store = ResultStore(tmp_path / "r.sqlite")
    passages = load_fresh_passages()[:20]
    loads = []

    def get_model():
        loads.append(1)
        return tiny_lm

    first = stored_fresh_calibration(
        resolve_model("tiny-random", loader=lambda _: get_model(), setup=CPU),
        store=store,
        passages=passages,
        batch_size=8,
    )
    assert loads == [1]  # loaded once for three batches
    assert first.n_computed == 20
    assert not first.from_store
    assert first.ids == tuple(p.id for p in passages)
    assert set(first.scores) == {m.key for m in fresh_methods()} >= {"loss", "min_k_20"}
    assert all(n > 0 for n in first.n_tokens)
    assert all(np.isfinite(first.scores["loss"]))
    assert all(np.isfinite(first.scores["min_k_20"]))

    again = stored_fresh_calibration(
        resolve_model("tiny-random", loader=lambda _: _refuse_model(), setup=CPU), store=store, passages=passages
    )
    assert again.from_store
    assert again.run_id == first.run_id
    assert (again.scores, again.n_tokens) == (first.scores, first.n_tokens)
    (run,) = store.list_runs(FRESH_KIND)
    assert run.finished
    assert run.n_done == 20
    assert run.model == "tiny-random"

    # Another precision or another passage set is another calibration: it needs the model.
    with pytest.raises(AssertionError, match="the model was loaded"):
        stored_fresh_calibration(
            resolve_model("tiny-random", loader=lambda _: _refuse_model(), setup=ScoringSetup("cpu", "bfloat16")),
            store=store,
            passages=passages,
        )
    with pytest.raises(AssertionError, match="the model was loaded"):
        stored_fresh_calibration(
            resolve_model("tiny-random", loader=lambda _: _refuse_model(), setup=CPU),
            store=store,
            passages=passages[:19],
        )


def test_the_run_key_names_model_passages_methods_definitions_and_precision():
    passages = load_fresh_passages()
    key = fresh_run_key(resolve_model("tiny-random", setup=CPU), passages, [MinK(20), Loss()])
    assert key["passages"] == fresh_set_fingerprint(passages)
    assert key["methods"] == ["loss", "min_k_20"]
    assert key["score_definitions"] == SCORE_DEFINITIONS
    assert (key["device"], key["dtype"]) == ("cpu", "float32")
    assert {"model", "model_identity", "start_token"} <= set(key)
    edited = (FreshPassage(passages[0].id, passages[0].text + " "), *passages[1:])
    assert fresh_set_fingerprint(edited) != key["passages"]
    assert FRESH_PASSAGES_PATH.is_file()


# --- the bundled model --------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.usefixtures("smollm2_calibration")  # the fresh passages scored once per session, as a user's store
def test_gettysburg_stands_out_from_fresh_text_and_the_fresh_example_does_not(smollm2):
    """Measured (SmolLM2-135M, CPU float32): Gettysburg above every similar fresh passage on loss and Min-K%;
    the fresh example far inside them (see the printed percentiles)."""
    calibration = stored_fresh_calibration(
        resolve_model("smollm2-135m", loader=lambda _: smollm2, setup=CPU), store=ResultStore()
    )
    assert calibration.n >= 300
    famous, fresh = analyse_passages(smollm2, [GETTYSBURG.text, FRESH.text], [Loss(), MinK(20)], kgram_max=0)
    placed_famous = place_passage(famous.scores, famous.records.n_tokens, calibration)
    placed_fresh = place_passage(fresh.scores, fresh.records.n_tokens, calibration)
    for name, placement in (("gettysburg", placed_famous), ("fresh", placed_fresh)):
        print(
            name,
            placement.n_tokens,
            placement.n_similar,
            {m.method_key: round(m.percentile, 1) for m in placement.methods},
        )
    assert placed_famous.n_similar >= 15
    assert placed_fresh.n_similar >= 15
    assert placed_famous.method("loss").percentile > 90
    assert placed_famous.method("min_k_20").percentile > 90
    assert placed_fresh.method("loss").percentile < 90
    assert placement_finding(placed_famous).level in ("strong", "moderate", "weak")
    assert placement_finding(placed_fresh).level == "none"
    assert math.isfinite(placed_famous.method("loss").score)


def test_a_passage_between_the_margin_and_weak_still_has_its_yardstick():
    from core.passage.placement import has_yardstick

    placement = _placed(30, 200)  # 85th percentile: inconclusive, but read against 200 passages of its length
    assert placement_finding(placement).level == "inconclusive"
    assert has_yardstick(placement)
    assert not has_yardstick(_placed(0, 200, widened=True))


# --- progressive calibration ---------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("n_tokens", [9, 34, 150])
def test_scoring_only_the_passages_a_verdict_needs_places_the_passage_exactly_as_the_whole_set(
    tiny_lm, tmp_path, n_tokens
):
    """A model whose fresh scores are not stored scores the passages of the passage's length first: the
    placement read from them equals the one read from the whole set (same passages compared, same scores),
    for a passage with enough of its kind near its length, one compared across kinds and a widened one."""
    from core.passage.calibration import fresh_lengths
    from core.passage.placement import comparison_positions, fresh_positions_for

    passages = load_fresh_passages()[:160]
    wanted = [(n_tokens, "prose")]
    store = ResultStore(tmp_path / "partial.sqlite")
    positions = fresh_positions_for(tiny_lm, passages, wanted)
    lengths = fresh_lengths(tiny_lm, passages)
    distances = [abs(math.log(lengths[i] / n_tokens)) for i in positions]
    assert distances == sorted(distances)  # nearest in length first
    partial = stored_fresh_calibration(
        resolve_model("tiny-random", loader=lambda _: tiny_lm, setup=CPU),
        store=store,
        passages=passages,
        only=positions,
    )
    whole = stored_fresh_calibration(
        resolve_model("tiny-random", loader=lambda _: tiny_lm, setup=CPU),
        store=ResultStore(tmp_path / "whole.sqlite"),
        passages=passages,
    )
    assert partial.n == len(positions) < whole.n == partial.n_set == len(passages)
    assert not partial.complete and whole.complete
    assert partial.n_tokens == tuple(lengths[i] for i in sorted(positions))
    scores = {"loss": -4.0, "min_k_20": -7.0}
    for calibration in (partial, whole):
        chosen = comparison_positions(n_tokens, calibration.n_tokens, calibration.groups, group="prose")[0]
        assert {calibration.ids[i] for i in chosen} == {passages[i].id for i in positions}
    a = place_passage(scores, n_tokens, partial, group="prose")
    b = place_passage(scores, n_tokens, whole, group="prose")
    assert (a.similar_ids, a.widened, a.n_own_group) == (b.similar_ids, b.widened, b.n_own_group)
    for x, y in zip(a.methods, b.methods, strict=True):
        assert x.calibration_scores == pytest.approx(y.calibration_scores, abs=1e-5)
        assert x.n_at_least == y.n_at_least
    resumed = stored_fresh_calibration(
        resolve_model("tiny-random", loader=lambda _: tiny_lm, setup=CPU), store=store, passages=passages
    )
    assert resumed.complete and resumed.n_computed == len(passages) - len(positions)
