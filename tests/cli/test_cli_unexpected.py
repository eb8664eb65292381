"""A failure no LeakLens check foresaw (a library's own exception) is still one ``error:`` line, never a
traceback; ``-v`` adds the traceback for a bug report."""

from __future__ import annotations

import pytest

from core.cli import main


def _library_failure(args) -> int:
    raise KeyError("'model.embed_tokens.weight'\nsecond line")


@pytest.fixture()
def failing_report(monkeypatch):
    """The report command's work replaced by one that fails inside a library, as a damaged cache file would."""
    from core.cli import report_cmd

    monkeypatch.setattr(report_cmd, "run", _library_failure)


@pytest.mark.usefixtures("failing_report")
def test_a_library_exception_is_one_error_line_with_its_cause(capsys, tmp_path):
    assert main(["report", "run-id", "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "error: KeyError from a library: \"'model.embed_tokens.weight'\\nsecond line\" (run with -v for the traceback)"
    ]


@pytest.mark.usefixtures("failing_report")
def test_verbose_keeps_the_traceback(capsys, tmp_path):
    assert main(["-v", "report", "run-id", "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err
    assert err.rstrip().splitlines()[-1].startswith("error: KeyError from a library:")


def test_model_and_endpoint_together_are_refused_before_connecting(capsys):
    argv = ["inspect", "--model", "tiny-random", "--endpoint", "http://127.0.0.1:9/v1", "--text", "Four score."]
    assert main([*argv, "--no-store"]) == 2
    err = capsys.readouterr().err
    assert "error: Give the tested model either with --model or with --endpoint, not both." in err


def test_the_recorded_endpoint_never_keeps_a_user_name():
    from core.cli import build_parser
    from core.cli.common import recorded_options

    args = build_parser().parse_args(["inspect", "--endpoint", "http://alice@host:8000/v1/", "--text", "x"])
    assert recorded_options(args)["endpoint"] == "http://host:8000/v1"
    assert "model_default" not in recorded_options(args)
