"""Vector indexes (all-MiniLM-L6-v2 from the offline package) on both backends vs a numpy brute force."""

import numpy as np
import pytest

from core.overlap.backends import get_backend
from core.overlap.embeddings import load_embedder
from core.overlap.indexing import build_index
from core.overlap.matching import SearchSettings, search
from core.overlap.sources import EvalSet, TrainingReader, TrainingSource

pytestmark = pytest.mark.slow
VECTOR_INDEX = "corpus-vector"


@pytest.fixture(scope="module")
def plain(corpus, tmp_path_factory):
    """Six verbatim copies of test questions among eight unrelated rows of the plain set."""
    import json

    path = tmp_path_factory.mktemp("vector-data") / "vector_train.jsonl"
    filler = [json.loads(line)["text"] for line in corpus.plain_path.read_text().splitlines()[100:108]]
    texts = filler[:4] + [corpus.questions[i] for i in range(6)] + filler[4:]
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    return TrainingSource(str(path))


@pytest.fixture(scope="module")
def eval_set(test_set):
    return EvalSet("eval_mmlu", test_set.instances[:10] + test_set.instances[-2:], test_set.source)


@pytest.fixture(scope="module")
def vector_backends(tmp_path_factory, plain, es_url):
    embedded = get_backend("embedded", root=tmp_path_factory.mktemp("vector-indexes"))
    elastic = get_backend("elasticsearch", es_url=es_url)
    built = build_index(embedded, VECTOR_INDEX, [plain], index_type="vector")
    assert built.info.model == "all-MiniLM-L6-v2"
    assert built.info.n_docs == 14
    build_index(elastic, VECTOR_INDEX, [plain], index_type="vector", overwrite=True)
    yield embedded, elastic
    elastic.delete(VECTOR_INDEX)


def test_vector_scores_match_brute_force_on_both_backends(vector_backends, plain, eval_set):
    embedded, elastic = vector_backends
    docs = list(TrainingReader(plain).documents())
    model = load_embedder("all-MiniLM-L6-v2")
    d = model.encode([x.text for x in docs], normalize_embeddings=True)
    q = model.encode([i.text for i in eval_set.instances], normalize_embeddings=True)
    sims = q @ d.T
    settings = SearchSettings(mode="vector", match_threshold=0.8)
    ours = search(embedded, [VECTOR_INDEX], [eval_set], settings)
    theirs = search(elastic, [VECTOR_INDEX], [eval_set], settings)
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert a.best.doc_id == b.best.doc_id == int(np.argmax(sims[k]))
        assert a.value == pytest.approx(float(sims[k].max()), abs=1e-4)
        assert b.value == pytest.approx(a.value, abs=1e-5)
        assert a.score == b.score == (1.0 if a.value >= 0.8 else 0.0)
        assert [r.doc_id for r in a.matched_docs] == [r.doc_id for r in b.matched_docs]
        assert [r.doc_id for r in a.matched_docs] == [int(j) for j in np.flatnonzero(sims[k] >= 0.8)]
    # The six verbatim copies (rows 4-9) are found with a cosine of 1; the other questions are not copies.
    for k in range(6):
        assert ours[k].best.row == 4 + k
        assert ours[k].value == pytest.approx(1.0, abs=1e-4)
    assert [m.score for m in ours[6:]] == [0.0] * (len(ours) - 6)


def test_text_search_on_vector_index_is_refused(vector_backends, eval_set):
    from core.errors import DataError

    embedded, _ = vector_backends
    with pytest.raises(DataError, match="needs a text index"):
        search(embedded, [VECTOR_INDEX], [eval_set], SearchSettings(mode="ngram"))
