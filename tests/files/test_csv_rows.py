"""The one CSV writer: columns, empty cells and formula-looking text, by hand."""

from __future__ import annotations

from core.files.csv_rows import rows_csv, safe_cell


def test_rows_become_csv_with_every_key_in_order_of_first_appearance():
    rows = [{"a": 1, "b": None}, {"c": "x, y", "a": 2.5}]
    assert rows_csv(rows) == 'a,b,c\n1,,\n2.5,,"x, y"\n'
    assert rows_csv(rows, ["c", "a"]) == 'c,a\n,1\n"x, y",2.5\n'
    assert rows_csv([], ["a"]) == "a\n"


def test_text_a_spreadsheet_would_run_is_made_inert():
    assert safe_cell("=HYPERLINK(1)") == "'=HYPERLINK(1)"
    assert safe_cell("+1") == "'+1"
    assert safe_cell("@SUM") == "'@SUM"
    assert safe_cell("-0.5") == "-0.5"  # a negative number written as text stays a number
    assert safe_cell("-2+3+cmd|' /C calc'!A0") == "'-2+3+cmd|' /C calc'!A0"
    assert safe_cell("-SUM(A1)") == "'-SUM(A1)"
    assert safe_cell("-inf") == "'-inf"  # float() reads it, a spreadsheet does not: text, made inert
    assert safe_cell("\rx") == "'\rx"
    assert safe_cell(-0.5) == -0.5
    assert safe_cell(None) == ""
    assert rows_csv([{"passage": "=cmd"}]) == "passage\n'=cmd\n"
