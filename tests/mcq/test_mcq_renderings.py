"""MCQ probes from one pass per question rendering must equal the per-probe path, probe for probe."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from core.config import SHARED_DATA_DIR
from core.data.questions import PromptLayout, load_mcq
from core.engine.generation import (
    EMPTY_PREFIX,
    greedy_after_prefixes,
    greedy_generate,
    reusable_cache_bytes,
    run_after_prefixes,
)
from core.engine.packing import TokenTree, honours_packed_masks, run_packed_trees
from core.mcq.completion import MCQConfig, MCQRun, run_mcq_sets
from core.mcq.probes import build_probes
from core.mcq.renderings import RenderingPrompts, generate_along_renderings
from core.mcq.shuffle import shuffle_questions
from tests.helpers.generation import greedy_generate_slow
from tests.helpers.mcq import run_benchmark, run_mcq

DATA = SHARED_DATA_DIR
MMLU = str(DATA / "mmlu_sample.jsonl")
CHINESE = str(DATA / "chinese_mcq_sample.jsonl")


def _ids(lm, text: str) -> list[int]:
    return [lm.start_token_id] + list(lm.tokenizer(text, add_special_tokens=False)["input_ids"])


def _assert_same_runs(fast: list[MCQRun], slow: list[MCQRun]) -> None:
    for a, b in zip(fast, slow, strict=True):
        for qa, qb in zip(a.results, b.results, strict=True):
            assert qa.question == qb.question
            for pa, pb in zip(qa.probes, qb.probes, strict=True):
                assert pa == pb, (pa.probe.question_index, pa.probe.option_index)


def _both_paths(lm, sets, config):
    fast = run_mcq_sets(lm, sets, config)
    slow = [run_mcq(lm, questions, config, per_probe=True) for questions in sets]
    _assert_same_runs(fast, slow)
    return fast


# --- engine: passes after cached prefixes, decoding after them -------------------------------------


def test_passes_after_cached_prefixes_give_the_logits_of_full_sequences(tiny_lm):
    seqs = [_ids(tiny_lm, t) for t in ("Which of these is prime?\nA. 4\nB. 7", "Which of these is even?\nA. 3")]
    stems, _ = run_after_prefixes(tiny_lm, [EMPTY_PREFIX] * 2, [s[:5] for s in seqs], [[], []])
    rests, logits = run_after_prefixes(tiny_lm, stems, [s[5:] for s in seqs], [list(range(len(s) - 5)) for s in seqs])
    at = 0
    for seq, prefix in zip(seqs, rests):
        assert prefix.length == len(seq)
        with torch.inference_mode():
            full = tiny_lm.model(input_ids=torch.tensor([seq])).logits[0, 5:].float()
        assert torch.allclose(logits[at : at + len(full)], full, atol=1e-4)
        at += len(full)
    # Cutting a prefix and decoding after it equals greedy decoding of that prompt from scratch.
    prompts = [(0, 7), (0, 12), (1, 6)]
    cut = [rests[row].cut(n) for row, n in prompts]
    firsts = [seqs[row][n] for row, n in prompts]
    counts = [4, 1, 6]
    for budget in (4096, 20):  # one batch; a row per batch
        out = greedy_after_prefixes(tiny_lm, cut, firsts, counts, token_budget=budget)
        for (row, n), first, count, got in zip(prompts, firsts, counts, out):
            assert got == greedy_generate_slow(tiny_lm, seqs[row][:n] + [first], count)
    with pytest.raises(ValueError):
        rests[0].cut(len(seqs[0]) + 1)
    assert reusable_cache_bytes(tiny_lm) == 2 * 2 * 2 * 8 * 4  # layers × (keys, values) × kv heads × dim × fp32


def test_packed_token_trees_give_each_path_what_running_it_alone_gives(tiny_lm):
    """Trees packed into rows (tiny rows: several rows, a tree wider than a row, a lone stem) give every
    path the greedy tokens and log-probs of its full sequence, and keys and values to decode after."""
    texts = [
        "Which of these is prime?\nA. 4\nB. 7",
        "Which of these is prime?\nA. 9\nB. 2",
        "Name a colour.\nA. red",
        "Name a colour.\nA. blue, as the sky is",
        "Two plus two?",
    ]
    seqs = [_ids(tiny_lm, t) for t in texts]

    def tree(stem: int, of: list[int], keep: list[tuple[int, ...]]) -> TokenTree:
        return TokenTree(tuple(seqs[of[0]][:stem]), tuple(tuple(seqs[s][stem:]) for s in of), tuple(keep))

    trees = [
        tree(8, [0, 1], [tuple(range(4, len(seqs[0]))), tuple(range(len(seqs[1])))]),
        tree(6, [2, 3], [(5, 6), tuple(range(2, len(seqs[3])))]),
        tree(len(seqs[4]), [4], [tuple(range(len(seqs[4])))]),
    ]
    assert seqs[0][:8] == seqs[1][:8]
    assert seqs[2][:6] == seqs[3][:6]
    paths = {0: (0, 0), 1: (0, 1), 2: (1, 0), 3: (1, 1), 4: (2, 0)}
    for row_tokens, budget in ((16, 40), (4096, 4096)):
        ran = run_packed_trees(tiny_lm, trees, budget, row_tokens=row_tokens)
        for s, (t, b) in paths.items():
            prefix, greedy = ran[t][b]
            assert prefix.length == len(seqs[s])
            assert set(greedy) == set(trees[t].keep[b])
            with torch.inference_mode():
                full = tiny_lm.model(input_ids=torch.tensor([seqs[s]])).logits[0].float()
            for i, (token, logprob) in greedy.items():
                assert token == int(full[i].argmax())
                assert logprob == pytest.approx(float(full[i].max() - torch.logsumexp(full[i], -1)), abs=1e-4)
        # Decoding after a cut of a packed path equals greedy decoding of that prompt from scratch.
        cuts = [(1, 10), (3, 9), (4, 3)]
        firsts = [seqs[s][n] for s, n in cuts]
        out = greedy_after_prefixes(
            tiny_lm, [ran[paths[s][0]][paths[s][1]][0].cut(n) for s, n in cuts], firsts, [5, 2, 4]
        )
        for (s, n), first, count, got in zip(cuts, firsts, [5, 2, 4], out):
            assert got == greedy_generate_slow(tiny_lm, seqs[s][:n] + [first], count)
    assert honours_packed_masks(tiny_lm)


def test_packed_and_padded_rendering_passes_give_the_same_probes(tiny_lm):
    """Both ways of running the renderings (packed trees; shared start, then padded rests) give each prompt
    the per-probe path's greedy tokens."""
    config = MCQConfig()
    questions = load_mcq(MMLU, limit=6).questions
    renderings = []
    for group, question in enumerate(questions):
        for version in (question, shuffle_questions([question], seed=group)[0]):
            own = build_probes(tiny_lm, version, config.layout)
            renderings.append(
                RenderingPrompts(
                    group=group,
                    ids=tuple(_ids(tiny_lm, config.layout.render(version)[0])),
                    prompts=tuple(p.context_ids for p in own),
                    counts=tuple(p.n_truth_tokens + 2 for p in own),
                )
            )
    packed = generate_along_renderings(tiny_lm, renderings, packed=True)
    padded = generate_along_renderings(tiny_lm, renderings, packed=False)
    for rendering, *ways in zip(renderings, packed, padded, strict=True):
        per_probe = greedy_generate(tiny_lm, rendering.prompts, list(rendering.counts))
        for generations in ways:
            assert [g.token_ids for g in generations] == [g.token_ids for g in per_probe]
            # the first token's log-prob agrees to rounding (the passes run other shapes)
            assert [g.first_logprob for g in generations] == pytest.approx(
                [g.first_logprob for g in per_probe], abs=1e-4
            )


# --- probes: fast path = per-probe path ---------------------------------------------------------------


def test_renderings_equal_per_probe_on_mmlu_including_cuts_inside_a_token(tiny_lm):
    questions = load_mcq(MMLU, limit=8).questions
    sets = [questions, shuffle_questions(questions, seed=3)]
    probes = [p for q in questions for p in build_probes(tiny_lm, q, PromptLayout())]
    assert {"inside_token", "aligned"} <= {p.boundary for p in probes}
    for config in (MCQConfig(), MCQConfig(cut="words", slack_tokens=0), MCQConfig(token_budget=64)):
        _both_paths(tiny_lm, sets, config)


def test_renderings_equal_per_probe_on_the_chinese_sample(tiny_lm):
    questions = load_mcq(CHINESE).questions
    _both_paths(tiny_lm, [questions, shuffle_questions(questions, seed=1)], MCQConfig())


def test_renderings_follow_the_text_where_the_model_reproduces_it(smollm2):
    """SmolLM2 completes many MMLU options: those probes are read off the rendering's pass (teacher forcing)."""
    questions = load_mcq(MMLU, limit=6).questions
    fast = _both_paths(smollm2, [questions, shuffle_questions(questions, seed=0)], MCQConfig())
    followed = [p for run in fast for r in run.results for p in r.probes if p.next_token_correct]
    assert len(followed) >= 6
    assert any(p.exact for p in followed)


def test_prompts_that_are_not_a_rendering_start_take_the_per_probe_path(tiny_lm):
    """A short context: long renderings do not fit and long prompts are cut, so they run probe by probe."""
    small = dataclasses.replace(tiny_lm, max_context=96)
    questions = load_mcq(MMLU, limit=6).questions
    probes = [p for q in questions for p in build_probes(small, q, PromptLayout())]
    assert any(p.n_context_dropped for p in probes)
    assert any(not p.n_context_dropped for p in probes)
    seen: list[tuple[int, int]] = []
    fast = run_mcq_sets(small, [questions], MCQConfig(), progress=lambda d, t: seen.append((d, t)))
    _assert_same_runs(fast, [run_mcq(small, questions, MCQConfig(), per_probe=True)])
    assert seen[-1] == (24, 24)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_study_progress_counts_every_probe_of_both_sets(tiny_lm):
    questions = load_mcq(MMLU, limit=3).questions
    seen: list[tuple[int, int]] = []
    run_benchmark(tiny_lm, questions, progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (24, 24)
