"""Loss-delta leakage test: boundary, statistics against slow paths, pairing, flags, and a controlled leak."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
import torch

from core.data.problems import (
    SKY_SHADOW,
    CodeProblem,
    ProblemSet,
    builtin_problems,
    humaneval_problems,
    load_problem_set,
)
from core.data.tables import Table
from core.engine.bundled import tiny_random_model
from core.engine.handle import resolve_model
from core.engine.models import wrap_model
from core.errors import DataError, InputTextError
from core.loss_delta.delta import (
    ModelRequest,
    bootstrap_deltas,
    build_leakage_report,
    delta_stats,
    flag_reference_problems,
    pair_sets,
)
from core.loss_delta.losses import (
    ModelLosses,
    ProblemLoss,
    first_solution_token,
    solution_losses,
    solution_losses_full_pass,
)
from core.loss_delta.run import run_leakage_test
from tests.helpers.fine_tune import fine_tune


def _set(name: str, ids: list[str], *, has_ids: bool = True, solutions: list[str] | None = None) -> ProblemSet:
    solutions = solutions or [f"    return {i}\n" for i in range(len(ids))]
    problems = tuple(CodeProblem(t, f"def f{i}():\n", s) for i, (t, s) in enumerate(zip(ids, solutions)))
    return ProblemSet(name, problems, has_ids)


def _losses(model: str, test: dict[str, float], ref: dict[str, float]) -> ModelLosses:
    return ModelLosses(
        model,
        tuple(ProblemLoss(t, v, 10) for t, v in test.items()),
        tuple(ProblemLoss(t, v, 10) for t, v in ref.items()),
    )


# ------------------------------------------------------------------------------------------- boundary


def test_first_solution_token_counts_a_straddling_token_with_the_solution():
    # tokens: "def" [0,3) "(x)" [3,6) "\n   " [6,10) " ret" [10,14); prompt is 7 chars ("def(x)\n")
    offsets = np.array([[0, 3], [3, 6], [6, 10], [10, 14]])
    assert first_solution_token(offsets, 7) == 2  # "\n   " ends after the boundary
    assert first_solution_token(offsets, 6) == 2  # boundary exactly between tokens
    assert first_solution_token(offsets, 10) == 3
    assert first_solution_token(offsets, 14) == 4  # nothing after the boundary
    assert first_solution_token(offsets, 0) == 0


def _slow_solution_loss(lm, prompt: str, solution: str) -> tuple[float, int]:
    """Independent path: one unbatched forward pass and token spans straight from the tokenizer."""
    text = prompt + solution
    enc = lm.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    ids = [lm.start_token_id] + list(enc["input_ids"])
    with torch.no_grad():
        logits = lm.model(input_ids=torch.tensor([ids])).logits[0].double()
    logp = torch.log_softmax(logits, dim=-1)
    picked = []
    for i, (_start, end) in enumerate(enc["offset_mapping"]):
        if end > len(prompt):
            picked.append(float(logp[i, ids[i + 1]]))
    return -sum(picked) / len(picked), len(picked)


def test_boundary_found_from_offsets_when_the_prompt_alone_tokenizes_differently(tiny_lm):
    prompt = 'def double(x):\n    """Twice x."""\n'
    solution = "    return 2 * x\n"
    tok = tiny_lm.tokenizer
    joint = tok(prompt + solution, add_special_tokens=False, return_offsets_mapping=True)
    alone = tok(prompt, add_special_tokens=False)["input_ids"]
    first = first_solution_token(np.array(joint["offset_mapping"]), len(prompt))
    # The prompt's final newline merges with the solution's indentation into one token, so the
    # prompt tokenized alone has one token more than the joint sequence has before the solution.
    assert len(alone) == first + 1
    straddling = joint["offset_mapping"][first]
    assert straddling[0] < len(prompt) < straddling[1]
    (result,) = solution_losses(tiny_lm, [CodeProblem("t", prompt, solution)])
    expected, n = _slow_solution_loss(tiny_lm, prompt, solution)
    assert result.n_tokens == n == len(joint["input_ids"]) - first
    assert result.loss == pytest.approx(expected, abs=1e-4)


def test_solution_losses_batched_match_the_slow_path(tiny_lm):
    problems = list(builtin_problems(limit=4).problems)
    results = solution_losses(tiny_lm, problems, token_budget=256)
    for problem, result in zip(problems, results):
        expected, n = _slow_solution_loss(tiny_lm, problem.prompt, problem.solution)
        assert result.task_id == problem.task_id
        assert result.n_tokens == n
        assert result.loss == pytest.approx(expected, abs=1e-4)


def test_cheap_solution_pass_equals_the_full_scoring_pass_batched_or_not(tiny_lm):
    """Solution log-probs alone (logits only at the solution) = the full pass with every statistic."""
    problems = list(builtin_problems(limit=5).problems) + list(humaneval_problems(limit=3).problems)
    previous = solution_losses_full_pass(tiny_lm, problems)
    seen: list[tuple[int, int]] = []
    for budget in (4096, 300, 1):  # one batch; a few; one problem per batch
        cheap = solution_losses(tiny_lm, problems, token_budget=budget, progress=lambda d, t: seen.append((d, t)))
        for new, old, problem in zip(cheap, previous, problems):
            assert (new.task_id, new.n_tokens) == (old.task_id, old.n_tokens) == (problem.task_id, new.n_tokens)
            assert new.loss == pytest.approx(old.loss, abs=1e-6)
    assert seen[-1] == (8, 8)
    one_by_one = [solution_losses(tiny_lm, [p])[0] for p in problems]
    assert [x.loss for x in one_by_one] == pytest.approx([x.loss for x in previous], abs=1e-5)


def test_prompt_filling_the_context_is_a_clear_error(tiny_lm):
    short_context = dataclasses.replace(tiny_lm, max_context=12)
    problem = CodeProblem("long/0", "def f():\n" + "    # comment line\n" * 10, "    return 1\n")
    with pytest.warns(UserWarning), pytest.raises(DataError, match="long/0.*context"):
        solution_losses(short_context, [problem])


# ----------------------------------------------------------------------------------------- statistics


def _exact_wilcoxon_p(diffs: np.ndarray) -> float:
    """Two-sided exact signed-rank p-value by enumerating every sign assignment (no ties, no zeros)."""
    ranks = np.argsort(np.argsort(np.abs(diffs))) + 1
    observed = ranks[diffs > 0].sum()
    total = ranks.sum()
    stats = [sum(r for r, s in zip(ranks, signs) if s) for signs in itertools.product([0, 1], repeat=len(ranks))]
    low = min(observed, total - observed)
    extreme = sum(1 for w in stats if w <= low or w >= total - low)
    return min(1.0, extreme / len(stats))


def _exact_mann_whitney_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided exact U test by enumerating every split of the pooled values (no ties)."""
    pooled = np.concatenate([a, b])

    def u_of(first: np.ndarray) -> int:
        return sum(1 for x in first for y in pooled if y not in first and x > y)

    observed = u_of(a)
    us = [u_of(pooled[list(idx)]) for idx in itertools.combinations(range(len(pooled)), len(a))]
    mean = len(a) * len(b) / 2
    extreme = sum(1 for u in us if abs(u - mean) >= abs(observed - mean) - 1e-12)
    return extreme / len(us)


def test_paired_delta_statistics_against_hand_values():
    test = np.array([1.0, 1.2, 0.9, 1.5, 1.1, 0.7])
    ref = np.array([1.3, 1.25, 1.6, 1.4, 1.9, 0.75])
    result = delta_stats(test, ref, paired=True)
    assert result.l_test == pytest.approx(6.4 / 6)
    assert result.l_ref == pytest.approx(8.2 / 6)
    assert result.delta == pytest.approx(-0.3)
    assert result.test == "wilcoxon signed-rank"
    assert result.p_value == pytest.approx(_exact_wilcoxon_p(test - ref))
    # Slow bootstrap: one resample at a time from the same seeded generator.
    rng = np.random.default_rng(0)
    slow = [float((test - ref)[rng.integers(0, 6, size=6)].mean()) for _ in range(1000)]
    assert result.ci == pytest.approx(tuple(np.percentile(slow, [2.5, 97.5])))
    assert result.ci[0] <= result.delta <= result.ci[1]


def test_unpaired_delta_statistics_against_hand_values():
    test = np.array([0.5, 0.8, 0.65, 0.7])
    ref = np.array([0.9, 1.1, 0.75, 1.3, 1.0])
    result = delta_stats(test, ref, paired=False)
    assert result.delta == pytest.approx(0.6625 - 1.01)
    assert result.test == "mann-whitney u"
    assert (result.n_test, result.n_ref) == (4, 5)
    assert result.p_value == pytest.approx(_exact_mann_whitney_p(test, ref))
    rng = np.random.default_rng(0)
    draws_t = [rng.integers(0, 4, size=4) for _ in range(1000)]
    draws_r = [rng.integers(0, 5, size=5) for _ in range(1000)]
    slow = [test[dt].mean() - ref[dr].mean() for dt, dr in zip(draws_t, draws_r)]
    assert result.ci == pytest.approx(tuple(np.percentile(slow, [2.5, 97.5])))


def test_degenerate_statistics():
    same = delta_stats([1.0, 2.0], [1.0, 2.0], paired=True)
    assert same.delta == 0.0
    assert math.isnan(same.p_value)
    assert same.ci == (0.0, 0.0)
    single = delta_stats([1.0], [3.0], paired=False)
    assert single.delta == -2.0
    assert math.isnan(single.p_value)
    with pytest.raises(DataError):
        delta_stats([], [1.0], paired=False)
    with pytest.raises(DataError, match="equal lengths"):
        bootstrap_deltas(np.ones(3), np.ones(2), paired=True)


# -------------------------------------------------------------------------------------------- pairing


def test_pairing_by_task_id_keeps_matched_problems_in_test_order():
    test = _set("test", ["A/0", "A/1", "A/2", "A/3"])
    ref = _set("ref", ["A/2", "A/0", "A/9"])
    sets = pair_sets(test, ref)
    assert sets.paired
    assert sets.test.ids == sets.ref.ids == ["A/0", "A/2"]
    assert sets.unmatched_test == ("A/1", "A/3")
    assert sets.unmatched_ref == ("A/9",)
    assert not pair_sets(test, ref, "unpaired").paired


def test_sets_without_shared_ids_are_unpaired():
    test = _set("test", ["A/0", "A/1"])
    assert not pair_sets(test, _set("ref", ["B/0"])).paired
    assert not pair_sets(test, _set("ref", ["A/0"], has_ids=False)).paired
    with pytest.raises(DataError, match="share no task id"):
        pair_sets(test, _set("ref", ["B/0"]), "paired")
    with pytest.raises(DataError, match="pairing"):
        pair_sets(test, test, "sideways")  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------ reference check


def test_reference_flags_for_length_and_suspiciously_low_delta():
    ids = ["T/0", "T/1", "T/2", "T/3"]
    test = _set("test", ids, solutions=["x" * 100] * 4)
    ref = _set("ref", ids, solutions=["y" * 100, "y" * 131, "y" * 129, "y" * 69])
    sets = pair_sets(test, ref)
    # 5 models: on T/0 all five have Δ_i < -0.2 (flag); on T/2 four of five (80%, not more: no flag).
    losses = []
    for m in range(5):
        ref_losses = {"T/0": 1.5, "T/1": 1.0, "T/2": 1.5 if m < 4 else 1.1, "T/3": 1.0}
        losses.append(_losses(f"m{m}", dict.fromkeys(ids, 1.0), ref_losses))
    flagged = {f.task_id: f for f in flag_reference_problems(sets, losses)}
    assert set(flagged) == {"T/0", "T/1", "T/3"}
    assert flagged["T/0"].low_delta_share == 1.0
    assert flagged["T/0"].length_ratio == pytest.approx(1.0)
    assert flagged["T/1"].length_ratio == pytest.approx(1.31)
    assert "length" in flagged["T/1"].reasons[0]
    assert flagged["T/3"].length_ratio == pytest.approx(0.69)


def test_unpaired_flags_compare_each_reference_problem_with_the_test_mean():
    sets = pair_sets(_set("test", ["A/0", "A/1"]), _set("ref", ["B/0", "B/1"]))
    losses = [_losses("m", {"A/0": 1.0, "A/1": 1.2}, {"B/0": 1.35, "B/1": 1.25})]
    # mean test loss 1.1: Δ(B/0) = -0.25 flagged, Δ(B/1) = -0.15 not; no length check without pairs.
    assert [f.task_id for f in flag_reference_problems(sets, losses)] == ["B/0"]


# ------------------------------------------------------------------------------------------- report


def test_report_with_base_model_gives_delta_squared():
    ids = ["T/0", "T/1", "T/2"]
    sets = pair_sets(_set("test", ids), _set("ref", ids))
    losses = {
        "sft": _losses("sft", {"T/0": 0.5, "T/1": 0.6, "T/2": 0.4}, {"T/0": 0.9, "T/1": 0.8, "T/2": 1.0}),
        "base": _losses("base", {"T/0": 0.8, "T/1": 0.9, "T/2": 0.7}, {"T/0": 0.9, "T/1": 0.8, "T/2": 1.0}),
    }
    report = build_leakage_report(sets, [ModelRequest("sft", "base"), ModelRequest("base")], losses)
    sft, base = report.models
    assert sft.stats.delta == pytest.approx(-0.4)
    assert sft.base_stats.delta == pytest.approx(-0.1)
    assert sft.delta2 == pytest.approx(-0.3)
    assert base.delta2 is None
    lo, hi = sft.delta2_ci
    assert lo <= -0.3 <= hi
    assert [ml.model for ml in report.losses] == ["sft", "base"]
    payload = report.to_dict()
    assert payload["paired"] is True
    assert payload["significance_test"] == "wilcoxon signed-rank"
    row = payload["models"][0]
    assert set(row) >= {
        "model",
        "base_model",
        "l_test",
        "l_ref",
        "delta",
        "delta_ci",
        "p_value",
        "delta_base",
        "delta2",
    }
    assert row["delta_base"] == pytest.approx(-0.1)
    assert row["delta2"] == pytest.approx(-0.3)
    assert {"task_id": "T/1", "model": "sft", "loss_test": 0.6, "loss_ref": 0.8} in payload["problems"]
    assert report.delta_table()[0] == {
        "Model": "sft",
        "L_test": pytest.approx(0.5),
        "L_ref": pytest.approx(0.9),
        "Δ": pytest.approx(-0.4),
    }
    assert [r["Model"] for r in report.delta2_table()] == ["sft"]
    assert report.delta2_table()[0]["Δ²"] == pytest.approx(-0.3)


def test_run_scores_each_model_once_and_reports_progress(tiny_lm):
    test = builtin_problems(limit=3)
    ref = ProblemSet("ref", builtin_problems(limit=6).problems[3:], True)
    loads: list[str] = []
    seen: list[tuple[int, int]] = []

    def load(spec: str):
        loads.append(spec)
        return dataclasses.replace(tiny_lm, spec=spec)

    report = run_leakage_test(
        test,
        ref,
        [ModelRequest("a", "base"), ModelRequest("b", "base")],
        model=resolve_model("a", loader=load),
        progress=lambda d, t: seen.append((d, t)),
    )
    assert loads == ["a", "base", "b"]
    assert seen[-1] == (18, 18)
    assert all(t == 18 for _, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert not report.paired
    assert report.test_used == "mann-whitney u"
    # The same weights under three names: identical losses, so Δ² is exactly zero.
    assert report.models[0].delta2 == pytest.approx(0.0, abs=1e-12)
    assert len(report.problem_rows()) == 3 * 6
    with pytest.raises(DataError, match="at least one model"):
        run_leakage_test(test, ref, [], model=resolve_model("tiny-random", loader=load))


# --------------------------------------------------------------------------------------------- data


def test_humaneval_loads_offline():
    problems = humaneval_problems()
    assert len(problems) == 164
    assert problems.has_ids
    first = problems.problems[0]
    assert first.task_id == "HumanEval/0"
    assert first.prompt.startswith("from typing import List")
    assert len(humaneval_problems(limit=5)) == 5


def test_unreachable_shadow_set_is_a_clear_error():
    # Tests run with the hub switched off, which is how an offline user meets the published reference set.
    with pytest.raises(DataError, match="openai-humaneval-sky-shadow.*local"):
        load_problem_set(SKY_SHADOW)


def test_problem_files_with_column_mapping(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text(
        'qid,question,answer\nq1,"def a():\n","    return 1\n"\nq2,"def b():\n",\nq3,"def c():\n","    pass\n"\n'
    )
    problems = load_problem_set(str(path), id_column="qid")
    assert problems.ids == ["q1", "q3"]
    assert problems.has_ids
    assert problems.problems[0].solution == "    return 1\n"
    assert [s.line for s in problems.skipped] == [5]  # the file line where q2's row starts (q1's spans 2-4)
    with pytest.raises(DataError, match="no solution column"):
        _table_problems({"question": ["x"]})
    with pytest.raises(DataError, match="'nope'"):
        load_problem_set(str(path), prompt_column="nope")


def _table_problems(columns: dict[str, list]) -> ProblemSet:
    from core.data.problems import problems_from_table

    rows = [dict(zip(columns, values)) for values in zip(*columns.values())]
    return problems_from_table(Table(rows=rows, columns=list(columns), source="t"))


def test_problem_rows_without_ids_are_numbered_and_duplicates_rejected():
    problems = _table_problems({"prompt": ["p1", "p2"], "solution": ["s1", "s2"]})
    assert problems.ids == ["0", "1"]
    assert not problems.has_ids
    with pytest.raises(DataError, match="appears in rows 1 and 2"):
        _table_problems({"task_id": ["x", "x"], "prompt": ["p", "p"], "solution": ["s", "s"]})
    with pytest.raises(DataError, match="no row has both"):
        _table_problems({"prompt": ["p"], "solution": ["  "]})


def test_whitespace_only_text_is_rejected_by_the_scorer(tiny_lm):
    with pytest.raises(InputTextError):
        solution_losses(tiny_lm, [CodeProblem("w", "  ", "\n")])


# --------------------------------------------------------------------------------- controlled leak


def _fine_tune(model, tokenizer, start_id: int, problems: list[CodeProblem], *, steps: int, lr: float) -> None:
    """Full-sequence causal-LM training on prompt + solution, one padded batch per step."""
    fine_tune(model, tokenizer, start_id, [p.prompt + p.solution for p in problems], steps=steps, lr=lr)


def test_fine_tuning_on_half_the_test_set_drives_its_delta_down(tiny_lm):
    """The study's validation: leak half of a problem set into training, and Δ must see it."""
    tokenizer = tiny_lm.tokenizer
    shortest = sorted(builtin_problems().problems, key=lambda p: len(p.prompt) + len(p.solution))[:12]
    leaked = ProblemSet("leaked half", tuple(shortest[0::2]), True)
    clean = ProblemSet("clean half", tuple(shortest[1::2]), True)
    base = tiny_random_model(tokenizer, seed=0)
    tuned = tiny_random_model(tokenizer, seed=0)
    _fine_tune(tuned, tokenizer, tiny_lm.start_token_id, list(leaked.problems), steps=8, lr=3e-2)
    models = {
        "tuned": wrap_model(tuned, tokenizer, spec="tuned", start_token_id=tiny_lm.start_token_id),
        "base": wrap_model(base, tokenizer, spec="base", start_token_id=tiny_lm.start_token_id),
    }
    report = run_leakage_test(
        leaked, clean, [ModelRequest("tuned", "base")], model=resolve_model("tuned", loader=models.__getitem__)
    )
    (row,) = report.models
    # Before training the two halves look alike to the model ...
    assert abs(row.base_stats.delta) < 0.1
    # ... after training on one half its loss is far below the other half's, beyond the bootstrap noise.
    assert row.stats.delta < -1.0
    assert row.stats.ci[1] < -0.5
    assert row.delta2 < -1.0
    assert row.delta2_ci[1] < 0
    # Every leaked problem individually became easier than every clean one.
    tuned_losses = report.losses[0]
    assert tuned_losses.test_losses.max() < tuned_losses.ref_losses.min()
    # The verdict follows: strong, and worded as "easier", never as "saw these items".
    from core.loss_delta.finding import leakage_finding

    finding = leakage_finding(report)
    assert finding.level == "strong"
    assert "easier" in finding.headline


def test_report_applies_the_low_delta_check_only_with_three_models():
    ids = ["T/0", "T/1"]
    sets = pair_sets(_set("test", ids), _set("ref", ids))
    low = {"T/0": 1.5, "T/1": 1.0}  # every model finds T/0 far easier in the test set
    one = {"m0": _losses("m0", dict.fromkeys(ids, 1.0), low)}
    report = build_leakage_report(sets, [ModelRequest("m0")], one)
    assert report.flagged == ()
    assert "at least 3 scored models" in report.flag_note
    three = {f"m{i}": _losses(f"m{i}", dict.fromkeys(ids, 1.0), low) for i in range(3)}
    report = build_leakage_report(sets, [ModelRequest(m) for m in three], three)
    assert [f.task_id for f in report.flagged] == ["T/0"]
    assert report.flag_note is None
