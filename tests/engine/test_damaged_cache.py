"""A cached copy of the bundled model or its tokenizer whose files no longer load (a file overwritten, cut
short) is LeakLens's own derived data: it is rebuilt from the package, not a ``KeyError`` on every later load."""

from __future__ import annotations

import shutil

import pytest

from core.config import CACHE_ENV_VAR, cache_subdir
from core.engine.bundled import bundled_tokenizer
from core.engine.models import load_model

DAMAGE = b'{"version": "1.0", "truncation": null'  # a tokenizer.json cut short


def _copy_cached(name: str, monkeypatch, tmp_path):
    """A copy of this machine's cached ``models/<name>`` in a cache of the test's own; returns the copy."""
    source = cache_subdir("models") / name
    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path / "cache"))
    copy = cache_subdir("models") / name
    shutil.copytree(source, copy)
    return copy


@pytest.mark.slow
def test_a_damaged_cached_tokenizer_is_rebuilt(monkeypatch, tmp_path, caplog, smollm2):
    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path / "cache"))
    bundled_tokenizer()  # a cache of the test's own, holding the tokenizer alone (built from the package)
    cached = cache_subdir("models") / "smollm2-135m-tokenizer"
    (cached / "tokenizer.json").write_bytes(DAMAGE)
    tokenizer = bundled_tokenizer()
    assert (
        tokenizer("Four score and seven years ago")["input_ids"]
        == smollm2.tokenizer("Four score and seven years ago")["input_ids"]
    )
    assert (cached / "tokenizer.json").read_bytes() != DAMAGE
    assert "could not be loaded" in caplog.text


@pytest.mark.slow
def test_a_damaged_cached_model_is_rebuilt_and_scores_as_before(monkeypatch, tmp_path, caplog, smollm2):
    cached = _copy_cached("smollm2-135m", monkeypatch, tmp_path)
    (cached / "tokenizer.json").write_bytes(DAMAGE)
    lm = load_model("smollm2-135m", device="cpu", dtype="float32")
    assert (cached / "tokenizer.json").read_bytes() != DAMAGE
    assert "rebuilding it from the package" in caplog.text
    ids = smollm2.tokenizer("Four score and seven years ago")["input_ids"]
    assert lm.tokenizer("Four score and seven years ago")["input_ids"] == ids
    for (name, ours), (_, theirs) in zip(lm.model.state_dict().items(), smollm2.model.state_dict().items()):
        assert ours.equal(theirs), name
