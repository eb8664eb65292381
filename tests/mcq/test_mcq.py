"""Multiple-choice memorisation: data loading, cuts, token boundaries, matching, shuffling,
generation and the option-order test, each checked against hand values or a slow path."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from core.config import SHARED_DATA_DIR
from core.data.questions import MCQColumns, MCQuestion, PromptLayout, load_mcq, to_jsonl, write_jsonl
from core.engine.generation import (
    greedy_generate,
    sequence_logprobs,
    sequence_logprobs_shared_prefix,
    shared_prefix_length,
)
from core.errors import DataError, InputTextError
from core.mcq.completion import MCQConfig
from core.mcq.match import edit_similarity, highlight_html, matching_mask, rouge_l, units
from core.mcq.permutation import PermutationResult, QuestionOrders, order_texts, permutation_test
from core.mcq.probes import build_probes, continuation_text, cut_offset, option_prefixes
from core.mcq.shuffle import all_orders, apply_permutation, shuffle_order, shuffle_questions
from tests.helpers.generation import greedy_generate_slow
from tests.helpers.mcq import levenshtein, run_mcq

DATA = SHARED_DATA_DIR
MMLU = str(DATA / "mmlu_sample.jsonl")
CHINESE = str(DATA / "chinese_mcq_sample.jsonl")

BIRDS = MCQuestion(
    index=0,
    question="Which process changes gene pools by chance?",
    options=("Directed mutation", "Genetic drift", "Adaptive radiation", "Disruptive selection"),
    answer="B",
)


# --- data -------------------------------------------------------------------------------------


def test_load_mmlu_sample_columns_and_answers():
    ds = load_mcq(MMLU, limit=5)
    assert len(ds) == 5
    assert ds.n_options == 4
    first = ds.questions[0]
    assert first.options == ("Smoking habit", "Social class/position", "Physical activity", "Age")
    assert first.answer == "D"
    assert [q.index for q in ds.questions] == list(range(5))


def test_load_chinese_sample_multi_answer():
    ds = load_mcq(CHINESE)
    assert len(ds) == 15
    assert ds.questions[0].options[0] == "成本价格"
    multi = [q for q in ds.questions if q.is_multi_answer]
    assert multi
    assert all(len(q.answer) > 1 for q in multi)
    assert ds.questions[4].answer == "ABCD"


def test_choices_list_layout_and_integer_answers(tmp_path):
    path = tmp_path / "hub_like.jsonl"
    rows = [
        {"question": "2+2?", "choices": ["3", "4", "5", "6"], "answer": 1},
        {"question": "bad", "choices": ["only", "three", "here"], "answer": 0},
        {"question": "Sky?", "choices": ["blue", "red", "green", "grey"], "answer": "0"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ds = load_mcq(str(path))
    assert [q.answer for q in ds.questions] == ["B", "A"]
    assert ds.questions[0].options == ("3", "4", "5", "6")
    assert len(ds.skipped) == 1
    assert "3" in ds.skipped[0].reason


def test_answers_outside_the_options_are_skipped_by_file_line_never_kept_as_none(tmp_path):
    """`E`, `Z`, `7` on 4-option questions: reported by 1-based line (with the row's id), never answer None."""
    rows = [
        {"id": "q1", "question": "Ok?", "A": "a", "B": "b", "C": "c", "D": "d", "answer": "B"},
        {"id": "q2", "question": "E?", "A": "a", "B": "b", "C": "c", "D": "d", "answer": "E"},
        {"id": "q3", "question": "Z?", "A": "a", "B": "b", "C": "c", "D": "d", "answer": "Z"},
        {"question": "Seven?", "A": "a", "B": "b", "C": "c", "D": "d", "answer": 7},
        {"question": "No answer given", "A": "a", "B": "b", "C": "c", "D": "d", "answer": ""},
        {"question": "Index 3", "A": "a", "B": "b", "C": "c", "D": "d", "answer": "3"},
    ]
    path = tmp_path / "bad_answers.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ds = load_mcq(str(path))
    assert [q.question for q in ds.questions] == ["Ok?", "No answer given", "Index 3"]
    assert [q.answer for q in ds.questions] == ["B", None, "D"]
    assert [(s.line, s.row_id) for s in ds.skipped] == [(2, "q2"), (3, "q3"), (4, None)]
    assert "answer 'E' is not one of the options (A-D or 0-3)" in ds.skipped[0].reason
    assert "3 rows skipped (lines 2 (id q2), 3 (id q3), 4: " in ds.skipped_summary()


def test_skipped_questions_are_numbered_by_file_line_from_one(tmp_path):
    """Two bad rows at the top of a file are lines 1 and 2 (they were reported as "lines 0, 1")."""
    rows = [
        {"question": "", "A": "a", "B": "b", "C": "c", "D": "d", "answer": "A"},
        {"question": "No D?", "A": "a", "B": "b", "C": "c", "D": "", "answer": "A"},
        {"question": "Fine", "A": "a", "B": "b", "C": "c", "D": "d", "answer": "A"},
    ]
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    ds = load_mcq(str(path))
    assert [s.line for s in ds.skipped] == [1, 2]
    assert "lines 1, 2:" in ds.skipped_summary()
    csv_path = tmp_path / "q.csv"  # header on line 1, a quoted question spanning two lines above the bad row
    csv_path.write_text('question,A,B,C,D,answer\n"Two\nlines",a,b,c,d,A\nBad,a,b,c,d,E\n')
    (skipped,) = load_mcq(str(csv_path)).skipped
    assert skipped.line == 4


def test_missing_columns_and_empty_options_are_clear_errors(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps({"q": "?", "A": "a"}) + "\n")
    with pytest.raises(DataError, match="question"):
        load_mcq(str(path))
    path.write_text(json.dumps({"question": "?", "A": "a", "B": "", "C": "c", "D": "d"}) + "\n")
    with pytest.raises(DataError, match="no usable"):
        load_mcq(str(path))
    custom = load_mcq(str(path), columns=MCQColumns(options=("A", "C", "D")))
    assert custom.questions[0].options == ("a", "c", "d")


def test_export_round_trip(tmp_path):
    questions = load_mcq(CHINESE).questions
    path = write_jsonl(shuffle_questions(questions, seed=1), tmp_path / "shuffled.jsonl")
    again = load_mcq(str(path)).questions
    assert [q.options for q in again] == [q.options for q in shuffle_questions(questions, seed=1)]
    assert [q.answer for q in again] == [q.answer for q in shuffle_questions(questions, seed=1)]
    assert to_jsonl(questions[:1]).count("\n") == 1
    assert "成本价格" in to_jsonl(questions[:1])


# --- layout and cuts --------------------------------------------------------------------------


def test_layout_renders_default_text_and_spans():
    text, spans = PromptLayout().render(BIRDS)
    assert text == (
        "Which process changes gene pools by chance?\nA. Directed mutation\nB. Genetic drift\n"
        "C. Adaptive radiation\nD. Disruptive selection"
    )
    assert [text[s:e] for s, e in spans] == list(BIRDS.options)
    custom = PromptLayout(question_template="Q: {question}", option_template="({letter}) {text};", separator=" ")
    text, spans = custom.render(BIRDS)
    assert text.startswith("Q: Which")
    assert "(B) Genetic drift; (C)" in text
    assert [text[s:e] for s, e in spans] == list(BIRDS.options)
    with pytest.raises(DataError):
        PromptLayout(option_template="{letter}")
    with pytest.raises(DataError):
        PromptLayout(option_template="{text} {oops}")


def test_cut_offsets_by_hand():
    assert cut_offset("Genetic drift") == 6  # 13 characters -> "Geneti|c drift"
    assert cut_offset("Age") == 1
    assert cut_offset("Genetic drift", "words") == 7  # "Genetic| drift"
    assert cut_offset("the cat sat on mats", "words") == 7  # 5 words -> after 2: "the cat| sat on mats"
    assert cut_offset("把权力关进制度的笼子里") == 5  # 11 characters -> "把权力关进|制度的笼子里"
    with pytest.raises(InputTextError):
        cut_offset("Genetic drift", "syllables")  # type: ignore[arg-type]


def test_option_prefixes_cover_the_text():
    text, spans = PromptLayout().render(BIRDS)
    pairs = option_prefixes(BIRDS, PromptLayout(), "chars")
    for (prefix, truth), (start, end) in zip(pairs, spans):
        assert prefix + truth == text[:end]
        assert len(prefix) - start == (end - start) // 2
    assert pairs[1][0].endswith("B. Geneti")
    assert pairs[1][1] == "c drift"


# --- token boundary ---------------------------------------------------------------------------


def test_probe_cut_inside_a_word(tiny_lm):
    """ "Geneti|c drift": the in-context tokenization has one token " Genetic" across the cut."""
    tok = tiny_lm.tokenizer
    probe = build_probes(tiny_lm, BIRDS, PromptLayout())[1]
    prefix, truth = probe.prefix, probe.ground_truth
    assert truth == "c drift"
    full_ids = tok(prefix + truth, add_special_tokens=False)["input_ids"]
    pieces = tok.convert_ids_to_tokens(full_ids)
    genetic = pieces.index("ĠGenetic")
    # Expected token: the one spanning the cut; context: everything before it, after the start token.
    assert probe.expected_id == full_ids[genetic]
    assert list(probe.context_ids) == [tiny_lm.start_token_id] + full_ids[:genetic]
    assert probe.head == " Geneti"
    assert probe.boundary == "inside_token"
    assert probe.n_truth_tokens == len(full_ids) - genetic
    # Tokenizing the prefix alone would give a different, unnatural split at its end.
    alone = tok(prefix, add_special_tokens=False)["input_ids"]
    assert alone[:genetic] == full_ids[:genetic]
    assert alone[genetic:] != [full_ids[genetic]]


def test_probe_cut_on_a_token_boundary(tiny_lm):
    tok = tiny_lm.tokenizer
    probe = build_probes(tiny_lm, BIRDS, PromptLayout(), "words")[0]  # "A. Directed| mutation"
    assert probe.ground_truth == " mutation"
    assert probe.head == ""
    assert probe.boundary == "aligned"
    assert tok.convert_ids_to_tokens([probe.expected_id]) == ["Ġmutation"]
    assert tok.decode(list(probe.context_ids[1:])) == probe.prefix


def test_probe_on_chinese_characters(tiny_lm):
    question = load_mcq(CHINESE).questions[1]
    probes = build_probes(tiny_lm, question, PromptLayout())
    third = probes[2]
    assert question.options[2] == "把权力关进制度的笼子里"
    assert third.prefix.endswith("C. 把权力关进")
    assert third.ground_truth == "制度的笼子里"
    # Context + head spells the prefix; the expected token starts the ground truth's bytes.
    tok = tiny_lm.tokenizer
    spelled = tok.decode(list(third.context_ids[1:]))
    assert spelled + third.head == third.prefix
    full = tok(third.prefix + third.ground_truth, add_special_tokens=False)["input_ids"]
    assert full[len(third.context_ids) - 1] == third.expected_id
    assert tok.decode(full[len(third.context_ids) - 1 :]) == third.head + third.ground_truth


# --- matching ---------------------------------------------------------------------------------


def test_similarity_by_hand():
    assert units("The cat, sat") == ["the", "cat", ",", "sat"]
    assert units("制度 的笼") == ["制", "度", "的", "笼"]
    # reference 4 units, candidate 3 units, LCS 3 -> P=1, R=3/4, F=6/7
    assert rouge_l("the cat sat down", "the cat down") == pytest.approx(6 / 7)
    assert rouge_l("abc", "xyz") == 0.0
    assert rouge_l("same words", "same words") == 1.0
    assert levenshtein("kitten", "sitting") == 3
    assert edit_similarity("kitten", "sitting") == pytest.approx(1 - 3 / 7)
    assert rouge_l("制度的笼子里", "制度的笼子") == pytest.approx(2 * 1 * (5 / 6) / (1 + 5 / 6))


def test_highlight_escapes_html():
    ref_mask, cand_mask = matching_mask("<b>drift", "<b>draft")
    html_out = highlight_html("<b>draft", cand_mask)
    assert "<b>" not in html_out
    assert "&lt;b&gt;dr" in html_out
    assert html_out.startswith('<mark class="match">&lt;b&gt;dr</mark>a')
    assert ref_mask == [True] * 5 + [False] + [True] * 2  # "<b>dr" and "ft" agree, "i" does not


# --- shuffling --------------------------------------------------------------------------------


def test_apply_permutation_remaps_answers():
    moved = apply_permutation(BIRDS, (1, 0, 3, 2))
    assert moved.options == ("Genetic drift", "Directed mutation", "Disruptive selection", "Adaptive radiation")
    assert moved.answer == "A"
    multi = MCQuestion(index=3, question="?", options=("a", "b", "c", "d"), answer="ACD")
    assert apply_permutation(multi, (3, 2, 1, 0)).answer == "ABD"
    with pytest.raises(ValueError):
        apply_permutation(BIRDS, (0, 0, 1, 2))


def test_shuffle_is_seeded_and_never_identity():
    questions = load_mcq(MMLU, limit=30).questions
    first, again = shuffle_questions(questions, seed=7), shuffle_questions(questions, seed=7)
    assert first == again
    assert first != shuffle_questions(questions, seed=8)
    for before, after in zip(questions, first):
        assert after.options != before.options or len(set(before.options)) < 4
        assert sorted(after.options) == sorted(before.options)
        assert after.options[LETTER(after.answer)] == before.options[LETTER(before.answer)]
    assert shuffle_order(4, 7, 0) != (0, 1, 2, 3)
    orders = all_orders(4)
    assert len(orders) == 24 == len(set(orders))
    assert orders[0] == (0, 1, 2, 3)


def LETTER(answer: str) -> int:
    return "ABCD".index(answer)


# --- generation -------------------------------------------------------------------------------


def test_batched_generation_equals_unbatched(tiny_lm):
    tok = tiny_lm.tokenizer
    texts = ["The capital of France is", "A", "Genetic drift in small populations of birds on an island", "制度的"]
    prompts = [[tiny_lm.start_token_id] + tok(t, add_special_tokens=False)["input_ids"] for t in texts]
    counts = [5, 3, 7, 4]
    batched = greedy_generate(tiny_lm, prompts, counts)
    one_by_one = [greedy_generate(tiny_lm, [p], [c])[0] for p, c in zip(prompts, counts)]
    for b, single, prompt, count in zip(batched, one_by_one, prompts, counts):
        assert b.token_ids == single.token_ids == greedy_generate_slow(tiny_lm, prompt, count)
        assert len(b.token_ids) == count
        assert b.first_logprob == pytest.approx(single.first_logprob, abs=1e-4)
        with torch.inference_mode():
            logits = tiny_lm.model(input_ids=torch.tensor([prompt])).logits[0, -1].float()
        assert b.first_logprob == pytest.approx(float(torch.log_softmax(logits, -1).max()), abs=1e-4)
    done = []
    greedy_generate(tiny_lm, prompts, counts, token_budget=40, progress=lambda d, t: done.append((d, t)))
    assert done[-1] == (4, 4)
    assert len(done) > 1


def test_sequence_logprobs_match_a_slow_sum(tiny_lm):
    tok = tiny_lm.tokenizer
    seqs = [
        [tiny_lm.start_token_id] + tok(t, add_special_tokens=False)["input_ids"] for t in ("a b c", "hello there world")
    ]
    totals = sequence_logprobs(tiny_lm, seqs)
    for seq, total in zip(seqs, totals):
        with torch.inference_mode():
            logp = torch.log_softmax(tiny_lm.model(input_ids=torch.tensor([seq])).logits[0].double(), -1)
        slow = sum(float(logp[i, seq[i + 1]]) for i in range(len(seq) - 1))
        assert total == pytest.approx(slow, abs=1e-3)


def test_shared_prefix_length():
    assert shared_prefix_length([[1, 2, 3, 4], [1, 2, 5], [1, 2, 3]]) == 2
    assert shared_prefix_length([[1, 2], [3, 2]]) == 0
    assert shared_prefix_length([[1, 2, 3]]) == 3


def test_shared_prefix_logprobs_equal_the_plain_path(tiny_lm):
    tok = tiny_lm.tokenizer
    start = [tiny_lm.start_token_id] + tok("Which of these is a prime number?", add_special_tokens=False)["input_ids"]
    tails = ["\nA. 4\nB. 7", "\nA. 7\nB. 4 and some more words here", "!", "\nA. 9"]
    seqs = [start + tok(t, add_special_tokens=False)["input_ids"] for t in tails]
    assert shared_prefix_length(seqs) >= len(start) >= 3
    plain = sequence_logprobs(tiny_lm, seqs)
    for budget in (4096, 7):  # one batch, then one tail per batch
        shared = sequence_logprobs_shared_prefix(tiny_lm, seqs, token_budget=budget)
        assert shared == pytest.approx(plain, abs=1e-3)
    # one sequence is the shared start itself plus one token: the start stops one token short of it
    short = [start + [seqs[0][len(start)]], seqs[1]]
    assert sequence_logprobs_shared_prefix(tiny_lm, short) == pytest.approx(sequence_logprobs(tiny_lm, short), abs=1e-3)
    # identical sequences, and sequences with nothing in common past the start token
    assert sequence_logprobs_shared_prefix(tiny_lm, [seqs[0], seqs[0]]) == pytest.approx([plain[0]] * 2, abs=1e-3)
    other = [[tiny_lm.start_token_id, 5, 6], [tiny_lm.start_token_id, 7, 8, 9]]
    assert sequence_logprobs_shared_prefix(tiny_lm, other) == pytest.approx(sequence_logprobs(tiny_lm, other), abs=1e-3)
    with pytest.raises(ValueError):
        sequence_logprobs_shared_prefix(tiny_lm, [[tiny_lm.start_token_id]])


# --- probes end to end ------------------------------------------------------------------------


def test_run_mcq_judges_against_slow_generation(tiny_lm):
    questions = load_mcq(MMLU, limit=2).questions
    config = MCQConfig(slack_tokens=1)
    run = run_mcq(tiny_lm, questions, config)
    assert len(run.results) == 2
    assert all(len(r.probes) == 4 for r in run.results)
    for result in run.results:
        for judged in result.probes:
            probe = judged.probe
            slow = greedy_generate_slow(tiny_lm, probe.context_ids, probe.n_truth_tokens + 1)
            assert judged.predicted_id == slow[0]
            assert judged.next_token_correct == (slow[0] == probe.expected_id)
            assert judged.continuation == continuation_text(tiny_lm, probe, slow)
            assert judged.exact == (judged.completion == probe.ground_truth)
    dist = run.summary("completion").distribution
    assert sum(dist) == 2
    assert len(dist) == 5
    assert run.summary("next_token").mean == pytest.approx(sum(r.score("next_token") for r in run.results) / 2)
    with pytest.raises(InputTextError):
        MCQConfig(threshold=0)
    with pytest.raises(InputTextError):
        run_mcq(tiny_lm, [])


# --- option-order test ------------------------------------------------------------------------


def test_rank_and_percentile_by_hand():
    q = QuestionOrders(index=0, logprobs=(-5.0, -7.0, -5.0, -4.0, -9.0))
    assert q.rank == 3  # -4 beats it, the tie counts against it
    assert q.percentile == pytest.approx((2 + 0.5) / 4)
    top = QuestionOrders(index=1, logprobs=(-1.0, -2.0, -3.0, -4.0, -5.0))
    result = PermutationResult(questions=(q, top), n_orders=5)
    assert result.mean_percentile == pytest.approx((0.625 + 1.0) / 2)
    assert result.top1_fraction == 0.5
    # exact: percentiles are k/4 with k uniform on 0..4; observed k-sum 2.5 + 4 = 6.5, so P(k1 + k2 >= 7):
    # (3, 4), (4, 3), (4, 4) of 25 pairs
    assert result.p_value_percentile == pytest.approx(3 / 25)
    # binomial: P(X >= 1), X ~ Bin(2, 1/5)
    assert result.p_value_top1 == pytest.approx(1 - 0.8**2)


def test_order_test_p_value_is_exact_for_few_questions():
    """3 two-option questions, each in its original order ranked first: exactly (1/2)^3, not the normal 0.042."""
    first = QuestionOrders(index=0, logprobs=(-1.0, -2.0))
    result = PermutationResult(questions=(first,) * 3, n_orders=2)
    assert result.mean_percentile == 1.0
    assert result.p_value_percentile == pytest.approx(0.125, abs=1e-12)
    last = QuestionOrders(index=1, logprobs=(-3.0, -2.0))
    assert PermutationResult(questions=(last,) * 3, n_orders=2).p_value_percentile == pytest.approx(1.0)
    # 6 orders, 2 questions: P(k1 + k2 >= 9) with k uniform on 0..5 = (4,5), (5,4), (5,5) of 36
    a = QuestionOrders(index=0, logprobs=(-1.0, -2.0, -3.0, -4.0, -5.0, -0.5))  # k = 4
    b = QuestionOrders(index=1, logprobs=(-1.0, -2.0, -3.0, -4.0, -5.0, -6.0))  # k = 5
    assert PermutationResult(questions=(a, b), n_orders=6).p_value_percentile == pytest.approx(3 / 36)


def test_order_test_p_value_is_normal_for_many_questions_and_close_to_exact_there():
    from core.mcq.permutation import EXACT_PERCENTILE_CELLS, exact_percentile_p_value

    rng = np.random.default_rng(0)
    m = 24
    n = EXACT_PERCENTILE_CELLS // (m - 1) + 1
    questions = tuple(QuestionOrders(index=i, logprobs=(0.0, *rng.normal(-0.05, 1, m - 1))) for i in range(n))
    result = PermutationResult(questions=questions, n_orders=m)
    sd = math.sqrt((m + 1) / (12 * (m - 1)) / n)
    normal = 0.5 * math.erfc((result.mean_percentile - 0.5) / sd / math.sqrt(2))
    assert result.p_value_percentile == pytest.approx(normal)
    exact = exact_percentile_p_value([q.percentile for q in questions], m)
    assert result.p_value_percentile == pytest.approx(exact, rel=0.05)


def test_permutation_test_scores_every_order(tiny_lm):
    questions = load_mcq(MMLU, limit=2).questions
    texts = order_texts(questions[0], PromptLayout())
    assert len(texts) == 24
    assert texts[0] == PromptLayout().render(questions[0])[0]
    result = permutation_test(tiny_lm, questions)
    assert result.n_orders == 24
    assert len(result.questions) == 2
    tok = tiny_lm.tokenizer
    spot = [tiny_lm.start_token_id] + tok(texts[5], add_special_tokens=False)["input_ids"]
    assert result.questions[0].logprobs[5] == pytest.approx(sequence_logprobs(tiny_lm, [spot])[0], abs=1e-3)
    assert 1 <= result.questions[1].rank <= 24


def _levenshtein_slow(a: str, b: str) -> int:
    """Independent textbook dynamic programme over the full table."""
    table = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
    return table[-1][-1]


def _real_text_pairs() -> list[tuple[str, str]]:
    """Option and question pairs from the MMLU and Chinese samples (CJK included)."""
    pairs = []
    for name in ("mmlu_sample.jsonl", "chinese_mcq_sample.jsonl"):
        questions = load_mcq(str(DATA / name), limit=60).questions
        for q, other in zip(questions, questions[1:]):
            pairs += [(q.options[i], q.options[(i + 1) % len(q.options)]) for i in range(len(q.options))]
            pairs.append((q.question, other.question))
            pairs.append((q.question, q.question[: len(q.question) // 2]))
    return pairs


def test_edit_distance_from_rapidfuzz_equals_the_textbook_programme_on_real_text():
    pairs = _real_text_pairs()
    assert len(pairs) > 300
    for a, b in pairs:
        a, b = a[:120], b[:120]
        assert levenshtein(a, b) == _levenshtein_slow(a, b)
        assert edit_similarity(a, b) == pytest.approx(1 - _levenshtein_slow(a, b) / max(len(a), len(b), 1))


def test_rouge_l_equals_rouge_score_with_the_same_units_on_real_text():
    from rouge_score import rouge_scorer

    class Units:
        def tokenize(self, text: str) -> list[str]:
            return units(text)

    scorer = rouge_scorer.RougeScorer(["rougeL"], tokenizer=Units())
    for a, b in _real_text_pairs():
        assert rouge_l(a, b) == pytest.approx(scorer.score(a, b)["rougeL"].fmeasure, abs=1e-12)
