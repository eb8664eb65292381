"""Small training and test sets with planted copies of MMLU questions, written fresh for each session."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from core.config import SHARED_DATA_DIR
from core.overlap.tokenize import word_tokens

SHARED_DATA = SHARED_DATA_DIR
MMLU = SHARED_DATA / "mmlu_sample.jsonl"
N_TEST = 40


@dataclass(frozen=True)
class Corpus:
    test_path: Path
    plain_path: Path
    chat_path: Path
    mixer_path: Path
    questions: list[str]
    exact_in_plain: list[int]
    """Test rows copied verbatim into the plain set."""
    near_in_plain: list[int]
    """Test rows copied with a changed word in the middle."""
    user_in_chat: list[int]
    """Test rows copied into user turns of the chat set."""
    assistant_in_chat: list[int]
    """Test rows copied into assistant turns only (filtered out by role:user)."""
    malformed_line: int
    """1-based line number of the malformed line in the plain set."""


def mmlu_questions() -> list[str]:
    with MMLU.open(encoding="utf-8") as handle:
        return [json.loads(line)["question"] for line in handle]


def _filler(rng: random.Random, vocab: list[str], n_words: int) -> str:
    return " ".join(rng.choice(vocab) for _ in range(n_words)).capitalize() + "."


def write_corpus(root: Path, seed: int = 7) -> Corpus:
    rng = random.Random(seed)
    questions = mmlu_questions()
    tests = [q for q in questions if len(word_tokens(q)) >= 12][:N_TEST]
    vocab = sorted({t for q in questions[600:] for t in word_tokens(q) if t.isalpha()})
    exact = list(range(0, 8))
    near = list(range(8, 14))
    user = list(range(14, 18))
    assistant = list(range(18, 21))
    # Two short test items (< 8 tokens) so the whole-text path runs too.
    tests += ["What is the capital of France?", "Name the largest planet."]
    short_planted = N_TEST  # the first short one is planted verbatim

    root.mkdir(parents=True, exist_ok=True)
    test_path = root / "eval_mmlu.jsonl"
    with test_path.open("w", encoding="utf-8") as handle:
        for i, q in enumerate(tests):
            handle.write(json.dumps({"id": f"q{i}", "question": q}) + "\n")

    docs = [_filler(rng, vocab, rng.randint(20, 60)) for _ in range(160)]
    for i in exact:
        docs.insert(rng.randrange(len(docs)), f"{_filler(rng, vocab, 5)} {tests[i]} {_filler(rng, vocab, 5)}")
    for i in near:
        words = tests[i].split()
        mid = len(words) // 2
        words[mid] = "zzplanted"
        docs.insert(rng.randrange(len(docs)), " ".join(words))
    docs.insert(rng.randrange(len(docs)), f"Quiz: {tests[short_planted]} Paris.")
    plain_path = root / "train_plain.jsonl"
    lines = [json.dumps({"text": d, "source": "web"}) for d in docs]
    malformed_at = 37
    lines.insert(malformed_at - 1, '{"text": "broken line without an end')
    plain_path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    chat_path = root / "train_chat.jsonl"
    with chat_path.open("w", encoding="utf-8") as handle:
        for k in range(60):
            turns = [
                {"role": "system", "content": "You are a helpful assistant."},
                {"role": "user", "content": _filler(rng, vocab, 15)},
                {"role": "assistant", "content": _filler(rng, vocab, 25)},
            ]
            if k < len(user):
                turns[1]["content"] = f"Please answer: {tests[user[k]]}"
            elif k - len(user) < len(assistant):
                turns[2]["content"] = f"Sure. {tests[assistant[k - len(user)]]}"
            handle.write(json.dumps({"messages": turns, "id": k}) + "\n")

    mixer_path = root / "mixer.yaml"
    mixer_path.write_text("dataset_mixer:\n  train_plain.jsonl: 1.0\n  train_chat.jsonl: 0.5\n", encoding="utf-8")
    return Corpus(test_path, plain_path, chat_path, mixer_path, tests, exact, near, user, assistant, malformed_at)
