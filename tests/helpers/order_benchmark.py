"""A benchmark file and a model that trained on it in its published order, for the benchmark-order test.

The file: short MMLU-sample questions with their answer text (``question``, ``answer``), one example per
row. The model: the tiny random Llama fine-tuned on the file as a language model reads a pre-training corpus,
the examples run together and cut into overlapping pieces at word boundaries (never at an example's start, so
no example is learnt as "the first after the start token" and the shards' own first examples get no edge).
"""

from __future__ import annotations

import json
from pathlib import Path

from core.benchmark_order.examples import SEPARATOR
from core.config import SHARED_DATA_DIR
from core.engine.bundled import bundled_tokenizer
from core.engine.models import load_model
from tests.helpers.fine_tune import tuned_tiny_model

TEMPLATE = "Q: {question} Answer: {answer}"
BENCHMARK_ROWS = 120
"""Rows per benchmark: 30 shards of 4 examples (every one of a shard's 24 orders scored)."""
SHARDS = 30
MAX_EXAMPLE_CHARS = 200
PIECE_CHARS = 600
"""Characters per training piece (about four examples); pieces overlap by half."""
EPOCHS, LEARNING_RATE, BATCH = 20, 1e-2, 4


def short_questions() -> list[dict[str, str]]:
    """MMLU-sample questions whose example is short, with the answer's text (not its letter)."""
    rows = [json.loads(line) for line in (SHARED_DATA_DIR / "mmlu_sample.jsonl").read_text().splitlines()]
    picked = [{"question": r["question"], "answer": r[r["answer"]]} for r in rows]
    return [r for r in picked if len(TEMPLATE.format(**r)) < MAX_EXAMPLE_CHARS]


def write_benchmark(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    return path


def write_benchmarks(folder: Path) -> tuple[Path, Path]:
    """(the benchmark the model trains on, one of the same kind it never sees): disjoint runs of rows."""
    rows = short_questions()
    trained = write_benchmark(folder / "trained.jsonl", rows[:BENCHMARK_ROWS])
    unseen = write_benchmark(folder / "unseen.jsonl", rows[BENCHMARK_ROWS : 2 * BENCHMARK_ROWS])
    return trained, unseen


def training_pieces(rows: list[dict[str, str]], *, overlap: bool = True) -> list[str]:
    """The file's text cut into pieces that start just after a space: overlapping by half (every boundary
    between two examples lies inside some piece), or end to end (each token read once per epoch)."""
    text = "".join(TEMPLATE.format(**row) + SEPARATOR for row in rows)
    if overlap:  # no piece starts at an example's start, not even the file's first
        starts = [text.index(" ", i) + 1 for i in range(0, len(text) - PIECE_CHARS, PIECE_CHARS // 2)]
        return [text[start : start + PIECE_CHARS] for start in starts]
    starts = [0] + [text.index(" ", i) + 1 for i in range(PIECE_CHARS, len(text) - PIECE_CHARS // 2, PIECE_CHARS)]
    return [text[start:end] for start, end in zip(starts, [*starts[1:], len(text)], strict=True)]


def save_tuned_model(benchmark: Path, folder: Path) -> Path:
    """Fine-tune the tiny random model on ``benchmark`` in its published order and save it to ``folder``."""
    rows = [json.loads(line) for line in benchmark.read_text().splitlines()]
    tokenizer = bundled_tokenizer()
    start_id = load_model("tiny-random").start_token_id
    model, _ = tuned_tiny_model(
        training_pieces(rows), start_id=start_id, steps=EPOCHS, lr=LEARNING_RATE, batch_size=BATCH
    )
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
