"""Scoring identity: one start-token rule for every model spec, and stored scores tied to their weights."""

from __future__ import annotations

import json

import pytest
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from tokenizers.pre_tokenizers import Whitespace
from transformers import PreTrainedTokenizerFast

from core.cli import main
from core.engine.bundled import BUNDLED_MODELS, bundled_tokenizer, tiny_random_model
from core.engine.models import load_model, planned_start_token
from core.engine.scoring import score_texts
from core.engine.start_token import choose_start_token, is_chat_role_token
from core.errors import ModelLoadError

TEXTS = [
    "Four score and seven years ago our fathers brought forth on this continent a new nation.",
    "A freshly written sentence about a lighthouse keeper who collects umbrellas.",
]


def _family_tokenizer(bos: str | None, eos: str | None, extra: tuple[str, ...] = ()) -> PreTrainedTokenizerFast:
    """A real fast tokenizer whose special tokens are set as a model family's tokenizer config sets them."""
    specials = [t for t in (bos, eos, *extra) if t]
    vocab = {token: i for i, token in enumerate(dict.fromkeys(["[UNK]", *specials, "hello", "world"]))}
    core = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    core.pre_tokenizer = Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=core, bos_token=bos, eos_token=eos, unk_token="[UNK]")


@pytest.mark.parametrize(
    ("family", "bos", "eos", "extra", "expected"),
    [
        ("EleutherAI/pythia-160m", "<|endoftext|>", "<|endoftext|>", (), "<|endoftext|>"),
        ("meta-llama/Llama-2-7b-hf", "<s>", "</s>", (), "<s>"),
        (
            "meta-llama/Llama-3.1-8B-Instruct",
            "<|begin_of_text|>",
            "<|eot_id|>",
            ("<|start_header_id|>",),
            "<|begin_of_text|>",
        ),
        ("Qwen/Qwen2.5-0.5B", None, "<|endoftext|>", ("<|im_start|>", "<|im_end|>"), "<|endoftext|>"),
        ("Qwen/Qwen2.5-0.5B-Instruct", None, "<|im_end|>", ("<|endoftext|>", "<|im_start|>"), "<|endoftext|>"),
        ("HuggingFaceTB/SmolLM2-135M-Instruct", "<|im_start|>", "<|im_end|>", ("<|endoftext|>",), "<|endoftext|>"),
        ("google/gemma-3-270m", "<bos>", "<eos>", ("<start_of_turn>",), "<bos>"),
    ],
)
def test_rule_picks_a_plain_text_start_for_each_family(family, bos, eos, extra, expected):
    assert choose_start_token(_family_tokenizer(bos, eos, extra), family) == expected


def test_rule_never_picks_a_chat_role_token_and_says_what_to_do():
    assert is_chat_role_token("<|im_start|>")
    assert is_chat_role_token("<start_of_turn>")
    assert not is_chat_role_token("<|endoftext|>")
    assert not is_chat_role_token("<s>")
    with pytest.raises(ModelLoadError, match="--start-token"):
        choose_start_token(_family_tokenizer("<|im_start|>", "<|im_end|>"), "chat-only")
    with pytest.raises(ModelLoadError, match="no token"):
        choose_start_token(_family_tokenizer("<s>", "</s>"), "m", override="<not-there>")


def test_bundled_models_declare_what_the_rule_picks():
    tokenizer = bundled_tokenizer()
    assert tokenizer.bos_token == "<|im_start|>"  # the chat tokenizer's bos: exactly what must not be used
    assert choose_start_token(tokenizer, "smollm2-135m") == BUNDLED_MODELS["smollm2-135m"].start_token
    assert planned_start_token("smollm2-135m") == planned_start_token("tiny-random") == "<|endoftext|>"


def test_saved_copy_with_a_chat_bos_scores_exactly_like_the_original(tiny_lm, tmp_path):
    folder = tmp_path / "tiny-checkpoint"
    tiny_lm.model.save_pretrained(folder)
    tiny_lm.tokenizer.save_pretrained(folder)
    copy = load_model(str(folder))
    assert copy.tokenizer.bos_token == "<|im_start|>"
    assert copy.start_token == tiny_lm.start_token == "<|endoftext|>"
    assert copy.start_token_id == tiny_lm.start_token_id
    assert "start token <|endoftext|>" in copy.describe()
    assert planned_start_token(str(folder)) == "<|endoftext|>"
    for original, saved in zip(score_texts(tiny_lm, TEXTS), score_texts(copy, TEXTS), strict=True):
        assert saved.loss == pytest.approx(original.loss, abs=1e-6)


def _mia(store, *extra):
    return [
        "mia",
        "--dataset",
        "demo:famous-vs-fresh",
        "--limit",
        "6",
        "--sample",
        "--methods",
        "loss",
        "--store",
        str(store),
        *extra,
    ]


def test_start_token_option_changes_scores_and_run_key(tmp_path, capsys):
    store = tmp_path / "results.sqlite"
    default_out, chat_out = tmp_path / "default.json", tmp_path / "chat.json"
    assert main(_mia(store, "--model", "tiny-random", "--out", str(default_out))) == 0
    assert main(_mia(store, "--model", "tiny-random", "--start-token", "<|im_start|>", "--out", str(chat_out))) == 0
    capsys.readouterr()
    default, chat = json.loads(default_out.read_text()), json.loads(chat_out.read_text())
    assert default["run_id"] != chat["run_id"]
    assert chat["provenance"]["models"]["model"]["start_token"] == "<|im_start|>"
    assert default["provenance"]["models"]["model"]["start_token"] == "<|endoftext|>"
    changed = [a["scores"]["loss"] != b["scores"]["loss"] for a, b in zip(default["samples"], chat["samples"])]
    assert all(changed)


def _write_tiny_checkpoint(folder, seed: int) -> None:
    tokenizer = bundled_tokenizer()
    tiny_random_model(tokenizer, seed=seed).save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def test_new_weights_in_the_same_folder_are_scored_again_for_mia(tmp_path, capsys):
    folder, store = tmp_path / "checkpoint", tmp_path / "results.sqlite"
    _write_tiny_checkpoint(folder, seed=1)
    assert main(_mia(store, "--model", str(folder))) == 0
    assert "6 texts scored" in capsys.readouterr().out
    assert main(_mia(store, "--model", str(folder))) == 0
    assert "from the store" in capsys.readouterr().out
    _write_tiny_checkpoint(folder, seed=2)  # new weights, same path
    assert main(_mia(store, "--model", str(folder))) == 0
    printed = capsys.readouterr().out
    assert "6 texts scored" in printed
    assert "from the store" not in printed
    assert "weights behind" in printed
    assert "changed since stored run" in printed


def test_new_weights_in_the_same_folder_are_scored_again_for_delta(tmp_path, capsys):
    folder, store = tmp_path / "checkpoint", tmp_path / "results.sqlite"
    _write_tiny_checkpoint(folder, seed=1)
    args = [
        "delta",
        "--test",
        "builtin",
        "--reference",
        "builtin",
        "--limit",
        "3",
        "--model",
        str(folder),
        "--store",
        str(store),
        "--json",
    ]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    _write_tiny_checkpoint(folder, seed=2)
    assert main(args) == 0
    captured = capsys.readouterr()
    second = json.loads(captured.out)
    assert "warning: The weights behind" in captured.err
    assert first["models"][0]["l_test"] != second["models"][0]["l_test"]
