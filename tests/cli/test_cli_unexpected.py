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


def _cuts_fourteen_passages(args) -> int:
    import warnings

    from core.engine.scoring import TruncationWarning

    for row in range(14):
        warnings.warn(
            f"Passage {row + 1} of 14 has 90 tokens but at most 64 fit; the last 26 tokens were dropped.",
            TruncationWarning,
            stacklevel=2,
        )
    warnings.warn("an unrelated warning", UserWarning, stacklevel=2)
    return 0


def test_passages_cut_to_a_small_context_are_one_warning_line(monkeypatch, capsys, tmp_path):
    """A server with a tiny context cuts every passage: one line says how many and names the first few, where
    there was one raw warning per passage; other warnings are left as they are."""
    from core.cli import report_cmd

    monkeypatch.setattr(report_cmd, "run", _cuts_fourteen_passages)
    with pytest.warns(UserWarning, match="an unrelated warning"):  # passed on as it came
        assert main(["report", "run-id", "--out", str(tmp_path / "r.html")]) == 0
    err = capsys.readouterr().err
    cut = [line for line in err.splitlines() if "were dropped" in line]
    assert cut == [
        "warning: 14 passages were longer than the model's context and were cut: Passage 1 of 14 has 90 tokens but "
        "at most 64 fit; the last 26 tokens were dropped. Passage 2 of 14 has 90 tokens but at most 64 fit; the "
        "last 26 tokens were dropped. Passage 3 of 14 has 90 tokens but at most 64 fit; the last 26 tokens were "
        "dropped. (and 11 more passages cut the same way)"
    ]
