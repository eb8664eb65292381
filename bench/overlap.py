"""Overlap search benchmark: the embedded index and both Elasticsearch paths on a synthetic corpus with
planted copies, side by side in one run.

100k training documents of random words; 1k test instances, of which some are copied verbatim into
training documents and some copied with every 12th word replaced (near-copies). Measures indexing and
search speed per backend, recall of the planted copies, and agreement of the n-gram scores with a
brute-force computation (a sample of test instances against every document). Elasticsearch runs twice on
the same server: the n-gram keyword path (one query per test instance over the ``grams`` field), and the
previous path, one ``match_phrase`` query per n-gram, which is what an index without ``grams`` (built before
that field existed) still gets. Each backend first searches ``--warmup-rounds`` sets of other instances, as
a long-running server would have; the first of them gives the cold-server rate (``*_first_search``).

Usage: .venv/bin/python bench/overlap.py [--docs 100000] [--tests 1000] [--warmup-rounds 5]
       [--es-url URL | --no-es] [--no-previous]
Without --es-url (or ES_URL) it starts the local server with scripts/es_start.sh and stops it after.
Results go to bench/results/overlap-<timestamp>.json; its ``summary`` holds ``es_vs_embedded_search`` (ratio
of instances/s), ``identical_scores`` (every instance's score equal on both backends) and the recalls.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from core.files.outputs import write_atomic  # noqa: E402
from core.overlap.backends import get_backend  # noqa: E402
from core.overlap.backends.elastic import ElasticsearchBackend  # noqa: E402
from core.overlap.indexing import build_index  # noqa: E402
from core.overlap.matching import SearchSettings, ngram_coverage, search  # noqa: E402
from core.overlap.sources import TrainingSource, load_eval_set  # noqa: E402
from core.overlap.tokenize import word_tokens  # noqa: E402

NGRAM = 8


class PreviousElasticsearch(ElasticsearchBackend):
    """The Elasticsearch path before n-gram keywords: documents are indexed without ``grams`` and the
    index's ``_meta`` has no n-gram size, so every search takes the ``match_phrase`` fallback that indexes
    built before the field existed still get."""

    def create(self, name, index_type, **kwargs):
        writer = super().create(name, index_type, **kwargs)
        writer.ngram_size = sys.maxsize  # no document is that long: none gets n-gram keywords
        writer.meta["leaklens"]["ngram_size"] = None
        return writer


def make_corpus(folder: Path, n_docs: int, n_tests: int, seed: int = 0, warmup_rounds: int = 1) -> dict:
    """Writes train.jsonl and test.jsonl; returns which test ids were planted where."""
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(20000)]
    tests = [" ".join(rng.choices(vocab, k=rng.randint(12, 40))) for _ in range(n_tests)]
    docs = [" ".join(rng.choices(vocab, k=rng.randint(30, 90))) for _ in range(n_docs)]
    order = list(range(n_tests))
    rng.shuffle(order)
    exact, near = order[: n_tests * 3 // 10], order[n_tests * 3 // 10 : n_tests * 6 // 10]
    slots = rng.sample(range(n_docs), len(exact) + len(near))
    planted: dict[int, int] = {}
    for t, slot in zip(exact + near, slots):
        words = tests[t].split()
        if t in near:
            words = [f"x{rng.randint(0, 99999)}" if i % 12 == 11 else w for i, w in enumerate(words)]
        head = " ".join(rng.choices(vocab, k=rng.randint(0, 20)))
        tail = " ".join(rng.choices(vocab, k=rng.randint(0, 20)))
        docs[slot] = f"{head} {' '.join(words)} {tail}".strip()
        planted[t] = slot
    with (folder / "train.jsonl").open("w") as f:
        for i, d in enumerate(docs):
            f.write(json.dumps({"id": i, "text": d}) + "\n")
    with (folder / "test.jsonl").open("w") as f:
        for i, t in enumerate(tests):
            f.write(json.dumps({"id": str(i), "question": t}) + "\n")
    # Other instances of the same shape, searched first, a set per warm-up round: a server's first queries
    # after start-up run slower (JIT, caches), and repeating the measured ones would let a cache answer them.
    warm = random.Random(seed + 1)
    for round_ in range(warmup_rounds):
        with (folder / f"warmup-{round_}.jsonl").open("w") as f:
            for i in range(n_tests):
                text = " ".join(warm.choices(vocab, k=warm.randint(12, 40)))
                f.write(json.dumps({"id": str(i), "question": text}) + "\n")
    return {"exact": exact, "near": near, "planted": planted, "docs": docs, "tests": tests}


def brute_force(sample: list[int], corpus: dict) -> dict[str, float]:
    """Best coverage of each sampled test instance over every document, by direct comparison."""
    doc_tokens = [word_tokens(d) for d in corpus["docs"]]
    doc_sets = [set(t) for t in doc_tokens]
    out = {}
    for t in sample:
        test = word_tokens(corpus["tests"][t])
        first = set(test)
        best = 0.0
        for tokens, words in zip(doc_tokens, doc_sets):
            if len(first & words) < min(NGRAM, len(test)):
                continue  # cannot share an n-gram: fewer than N distinct common words
            best = max(best, ngram_coverage(test, tokens, NGRAM).value)
        out[str(t)] = best
    return out


def run_backend(backend, folder: Path, corpus: dict, brute: dict[str, float]) -> dict:
    """Index the training file, search every test instance, and measure both against the planted copies."""
    source = TrainingSource(str(folder / "train.jsonl"), name="train", text_field="text")
    start = time.perf_counter()
    build_index(backend, "bench", [source], overwrite=True)
    index_s = time.perf_counter() - start
    info = backend.info("bench")
    tests = load_eval_set(str(folder / "test.jsonl"), "question", name="test", id_field="id")
    settings = SearchSettings(mode="ngram", ngram_size=NGRAM, search_size=100)
    warmup_rates = []
    for path in sorted(folder.glob("warmup-*.jsonl"), key=lambda p: int(p.stem.split("-")[1])):
        warmup = load_eval_set(str(path), "question", name="warmup", id_field="id")
        start = time.perf_counter()
        search(backend, ["bench"], [warmup], settings)
        warmup_rates.append(round(len(warmup) / (time.perf_counter() - start), 1))
    start = time.perf_counter()
    matches = search(backend, ["bench"], [tests], settings)
    search_s = time.perf_counter() - start
    by_id = {m.test_id: m for m in matches}
    exact_found = sum(by_id[str(t)].value == 1.0 for t in corpus["exact"])
    near_found = sum(by_id[str(t)].value >= 0.5 for t in corpus["near"])
    agree = sum(abs(by_id[k].value - v) < 1e-9 for k, v in brute.items())
    backend.delete("bench")
    return {
        "n_docs": info.n_docs,
        "index_seconds": round(index_s, 2),
        "docs_per_second": round(info.n_docs / index_s, 1),
        "index_size_mb": round(info.size_bytes / 2**20, 1),
        "search_seconds": round(search_s, 2),
        "tests_per_second": round(len(tests) / search_s, 1),
        "warmup_tests_per_second": warmup_rates[0],
        "warmup_rounds_tests_per_second": warmup_rates,
        "exact_copy_recall": exact_found / len(corpus["exact"]),
        "near_copy_recall_at_0.5": near_found / len(corpus["near"]),
        "brute_force_agreement": f"{agree}/{len(brute)}",
        "values": {m.test_id: m.value for m in matches},
    }


def _shown(result: dict) -> dict:
    return {k: v for k, v in result.items() if k != "values"}


def summary(results: dict) -> dict:
    """The headline numbers: Elasticsearch's n-gram search speed against the embedded index's, whether
    every score agrees (also for the previous path), and the recall of planted copies."""
    embedded, es = results["embedded"], results["elasticsearch"]
    previous = results.get("elasticsearch_previous")

    def same(other: dict) -> int:
        return sum(abs(other["values"][k] - v) < 1e-9 for k, v in embedded["values"].items())

    out = {
        "es_vs_embedded_search": round(es["tests_per_second"] / embedded["tests_per_second"], 3),
        "es_vs_embedded_first_search": round(es["warmup_tests_per_second"] / embedded["warmup_tests_per_second"], 3),
        "identical_scores": same(es) == len(embedded["values"]),
        "identical_scores_count": f"{same(es)}/{len(embedded['values'])}",
        "es_exact_copy_recall": es["exact_copy_recall"],
        "es_near_copy_recall_at_0.5": es["near_copy_recall_at_0.5"],
        "embedded_exact_copy_recall": embedded["exact_copy_recall"],
        "embedded_near_copy_recall_at_0.5": embedded["near_copy_recall_at_0.5"],
    }
    if previous:
        out["previous_es_vs_embedded_search"] = round(previous["tests_per_second"] / embedded["tests_per_second"], 4)
        out["es_speedup_vs_previous_es"] = round(es["tests_per_second"] / previous["tests_per_second"], 1)
        out["previous_identical_scores"] = same(previous) == len(embedded["values"])
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--tests", type=int, default=1_000)
    parser.add_argument("--brute-sample", type=int, default=200)
    parser.add_argument(
        "--warmup-rounds",
        type=int,
        default=5,
        help="searches of fresh instances before the measured one (a long-running server is warm)",
    )
    parser.add_argument("--es-url", default=os.environ.get("ES_URL"))
    parser.add_argument("--no-es", action="store_true")
    parser.add_argument("--no-previous", action="store_true", help="skip the previous Elasticsearch path")
    args = parser.parse_args()
    results: dict = {
        "docs": args.docs,
        "tests": args.tests,
        "ngram_size": NGRAM,
        "machine": platform.platform(),
        "cpus": os.cpu_count(),
        "gpu": None,
    }
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        corpus = make_corpus(folder, args.docs, args.tests, warmup_rounds=max(1, args.warmup_rounds))
        rng = random.Random(1)
        sample = sorted(
            rng.sample(corpus["exact"], 50)
            + rng.sample(corpus["near"], 50)
            + rng.sample(range(args.tests), args.brute_sample - 100)
        )
        start = time.perf_counter()
        brute = brute_force(sample, corpus)
        results["brute_force_seconds"] = round(time.perf_counter() - start, 1)
        print("brute force done", results["brute_force_seconds"], "s", flush=True)
        results["embedded"] = run_backend(get_backend("embedded", root=folder / "indexes"), folder, corpus, brute)
        print("embedded", {k: v for k, v in results["embedded"].items() if k != "values"}, flush=True)
        if not args.no_es:
            workdir = None
            url = args.es_url
            if not url:
                started = subprocess.run(
                    ["bash", str(REPO / "scripts" / "es_start.sh")],
                    capture_output=True,
                    text=True,
                    timeout=300,
                    check=True,
                )
                values = dict(line.split("=", 1) for line in started.stdout.split() if "=" in line)
                url, workdir = values["ES_URL"], values["ES_WORKDIR"]
            try:
                backend = get_backend("elasticsearch", es_url=url)
                results["elasticsearch_version"] = backend.version
                results["elasticsearch"] = run_backend(backend, folder, corpus, brute)
                print("elasticsearch", _shown(results["elasticsearch"]), flush=True)
                if not args.no_previous:
                    previous = PreviousElasticsearch(url)
                    results["elasticsearch_previous"] = run_backend(previous, folder, corpus, brute)
                    print("elasticsearch (previous path)", _shown(results["elasticsearch_previous"]), flush=True)
            finally:
                if workdir:
                    subprocess.run(["bash", str(REPO / "scripts" / "es_stop.sh"), workdir], timeout=120)
            results["summary"] = summary(results)
        for key in ("embedded", "elasticsearch", "elasticsearch_previous"):
            results.get(key, {}).pop("values", None)
    out = REPO / "bench" / "results" / f"overlap-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.json"
    write_atomic(out, json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
