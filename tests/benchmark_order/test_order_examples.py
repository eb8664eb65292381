"""Rendering a benchmark's rows as the published file lays them out."""

from __future__ import annotations

import json

import pytest

from core.benchmark_order.examples import SEPARATOR, default_template, render_examples, template_fields
from core.data.tables import load_rows
from core.errors import DataError


def test_default_template_joins_every_column_but_a_row_id():
    assert default_template(["id", "question", "A", "answer"]) == "{question} {A} {answer}"
    examples = render_examples(load_rows("demo:mcq"))
    assert examples.template == "{question} {A} {B} {C} {D} {answer}"
    assert len(examples) == 24 and all(t.endswith(SEPARATOR) for t in examples.texts)


def test_rows_missing_a_field_are_skipped_with_their_line(tmp_path):
    path = tmp_path / "b.jsonl"
    rows = [{"question": "One?", "answer": "a"}, {"question": "Two?"}, {"question": "Three?", "answer": " "}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    examples = render_examples(load_rows(str(path)), "Q: {question} A: {answer}")
    assert examples.texts == ("Q: One? A: a" + SEPARATOR,)
    assert [s.line for s in examples.skipped] == [2, 3]
    assert "2 rows skipped (lines 2, 3" in examples.skipped_summary()


@pytest.mark.parametrize(
    "template",
    [
        "{question",
        "{} {question}",
        "no fields at all",
        "{0}",
        "{question!r}",
        "{question:d}",
        "{question:{answer}}",
        "{question.__class__}",
        "{question[0]}",
    ],
)
def test_a_malformed_template_is_one_clear_error(template):
    with pytest.raises(DataError, match="template"):
        template_fields(template)


def test_a_template_is_filled_literally_and_columns_with_spaces_are_kept(tmp_path):
    path = tmp_path / "b.jsonl"
    path.write_text(json.dumps({"question": "Braces {x} and %s?", "option A": "yes", "answer": "A"}) + "\n")
    table = load_rows(str(path))
    assert default_template(table.columns) == "{question} {option A} {answer}"
    examples = render_examples(table)
    assert examples.texts == ("Braces {x} and %s? yes A" + SEPARATOR,)
    literal = render_examples(load_rows(str(path)), "{{Q}} {question} -> {option A}")
    assert literal.texts == ("{Q} Braces {x} and %s? -> yes" + SEPARATOR,)


def test_a_template_naming_a_missing_column_lists_the_columns():
    with pytest.raises(DataError, match="no column.*'subject'"):
        render_examples(load_rows("demo:mcq"), "{subject}: {question}")


def test_the_fingerprint_follows_the_order():
    examples = render_examples(load_rows("demo:mcq"))
    reordered = render_examples(load_rows("demo:mcq"), "{question} {A} {B} {C} {D} {answer}")
    assert examples.fingerprint == reordered.fingerprint
    swapped = examples.texts[1:] + examples.texts[:1]
    from core.data.fingerprint import fingerprint_rows

    assert fingerprint_rows((t,) for t in swapped) != examples.fingerprint
