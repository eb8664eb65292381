"""``python -m core overlap``: index, list, search with report and decontamination, delete, errors."""

from __future__ import annotations

import csv
import json

import pytest

from core.cli import main
from core.overlap.sources import TrainingReader
from core.overlap.tokenize import word_tokens
from tests.overlap.brute import brute_coverage
from tests.overlap.conftest import training_sources


def test_cli_index_search_decontaminate_list_delete(corpus, tmp_path, capsys):
    root = str(tmp_path / "idx")
    assert main(["overlap", "index", "--index-dir", root, "--name", "plain", "--dataset", str(corpus.plain_path)]) == 0
    out = capsys.readouterr()
    assert "index plain (embedded, text)" in out.out
    assert f"lines {corpus.malformed_line}" in out.err  # the malformed line is reported
    assert (
        main(
            [
                "overlap",
                "index",
                "--index-dir",
                root,
                "--name",
                "chat",
                "--dataset",
                str(corpus.chat_path),
                "--messages-field",
                "messages",
                "--query-filter",
                "role:user",
                "--query-field",
                "content",
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["overlap", "list", "--index-dir", root]) == 0
    listing = capsys.readouterr().out
    assert "plain\ttext" in listing
    assert "chat\ttext\t60 docs" in listing

    out_dir = tmp_path / "out"
    code = main(
        [
            "overlap",
            "search",
            "--index-dir",
            root,
            "--index",
            "plain,chat",
            "--dataset",
            str(corpus.test_path),
            "--field",
            "question",
            "--id-field",
            "id",
            "--output-dir",
            str(out_dir),
            "--decontaminate",
            "--match-threshold",
            "0.5",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "eval_dataset" in printed
    assert "train_chat: removed 4 of 60 rows" in printed

    # The report equals the mean of 0/1 brute-force scores per training set.
    with (out_dir / "contamination_report.tsv").open() as handle:
        rows = list(csv.reader(handle, delimiter="\t"))
    assert rows[0] == ["eval_dataset", "plain", "chat"]
    tests = [word_tokens(json.loads(x)["question"]) for x in corpus.test_path.read_text().splitlines()]
    for column, source in zip(rows[0][1:], training_sources(corpus)):
        docs = [word_tokens(d.text) for d in TrainingReader(source).documents()]
        hits = [max(brute_coverage(t, d, 8) for d in docs) >= 0.5 for t in tests]
        assert float(rows[1][rows[0].index(column)]) == round(sum(hits) / len(tests), 4)

    per_instance = [json.loads(x) for x in (out_dir / "eval_mmlu__plain.jsonl").read_text().splitlines()]
    assert len(per_instance) == len(tests)
    first = next(r for r in per_instance if r["test_id"] == f"q{corpus.exact_in_plain[0]}")
    assert first["score"] == 1.0
    assert first["best_doc_text"]
    assert first["test_spans"]
    assert (out_dir / "plain.decontaminated.jsonl").is_file()

    assert main(["overlap", "delete", "--index-dir", root, "--name", "chat"]) == 0
    capsys.readouterr()
    assert main(["overlap", "delete", "--index-dir", root, "--name", "chat"]) == 2
    assert "Existing indexes: plain" in capsys.readouterr().err


def test_cli_reports_missing_field_and_unreachable_server(corpus, tmp_path, capsys):
    code = main(
        [
            "overlap",
            "index",
            "--index-dir",
            str(tmp_path),
            "--name",
            "x",
            "--dataset",
            str(corpus.plain_path),
            "--text-field",
            "body",
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "body" in err
    assert "text" in err
    assert "source" in err  # names the missing field and lists the fields
    code = main(["overlap", "list", "--backend", "elasticsearch", "--es-url", "http://user:secret@127.0.0.1:9"])
    assert code == 2
    err = capsys.readouterr().err
    assert "unreachable at http://127.0.0.1:9" in err
    assert "secret" not in err


@pytest.mark.slow
def test_cli_on_elasticsearch_matches_embedded(es_url, corpus, tmp_path, capsys, index_name):
    common = ["--dataset", str(corpus.chat_path), "--messages-field", "messages", "--query-filter", "role:user"]
    search = [
        "--dataset",
        str(corpus.test_path),
        "--field",
        "question",
        "--id-field",
        "id",
        "--match-threshold",
        "0.5",
        "--decontaminate",
    ]
    embedded = ["--index-dir", str(tmp_path / "idx")]
    elastic = ["--backend", "elasticsearch", "--es-url", es_url]
    try:
        for where in (embedded, elastic):
            assert main(["overlap", "index", *where, "--name", index_name, *common]) == 0
        capsys.readouterr()
        outputs = {}
        for label, where in (("embedded", embedded), ("elastic", elastic)):
            out_dir = tmp_path / label
            args = ["overlap", "search", *where, "--index", index_name, *search, "--output-dir", str(out_dir)]
            assert main(args) == 0
            outputs[label] = (out_dir, capsys.readouterr().out)
        assert "re-check: 0 test instances still match" in outputs["elastic"][1]
        assert "re-check" not in outputs["embedded"][1]
        names = ("contamination_report.tsv", f"eval_mmlu__{index_name}.jsonl", f"{index_name}.decontaminated.jsonl")
        for name in names:
            assert (outputs["embedded"][0] / name).read_text() == (outputs["elastic"][0] / name).read_text()
    finally:
        main(["overlap", "delete", *elastic, "--name", index_name])
