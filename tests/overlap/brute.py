"""Brute-force n-gram scores: every test instance against every training document by plain substring
search, sharing nothing with the index code but the tokenizer."""

from __future__ import annotations

from core.overlap.sources import Document, EvalSet, TrainingReader, TrainingSource
from core.overlap.tokenize import word_tokens


def brute_coverage(test: list[str], doc: list[str], n: int) -> float:
    if not test:
        return 0.0
    haystack = " " + " ".join(doc) + " "
    if len(test) < n:
        return 1.0 if " " + " ".join(test) + " " in haystack else 0.0
    covered = [False] * len(test)
    for i in range(len(test) - n + 1):
        if " " + " ".join(test[i : i + n]) + " " in haystack:
            covered[i : i + n] = [True] * n
    return sum(covered) / len(test)


def all_documents(sources: list[TrainingSource]) -> list[Document]:
    return [doc for s in sources for doc in TrainingReader(s).documents()]


def brute_best(test_set: EvalSet, docs: list[Document], n: int) -> dict[tuple[str, str], tuple[float, int | None]]:
    """(test id, training set) -> (best coverage, best doc id); doc ids count documents in order."""
    tokens = [word_tokens(d.text) for d in docs]
    datasets = list(dict.fromkeys(d.dataset for d in docs))
    out = {}
    for inst in test_set.instances:
        t = word_tokens(inst.text)
        for dataset in datasets:
            best, best_id = 0.0, None
            for doc_id, (doc, dt) in enumerate(zip(docs, tokens)):
                if doc.dataset != dataset:
                    continue
                value = brute_coverage(t, dt, n)
                if value > best:
                    best, best_id = value, doc_id
            out[(inst.id, dataset)] = (best, best_id)
    return out
