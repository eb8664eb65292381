"""Served-model pieces that need no server: token placement, URLs, capabilities, refusals before connecting."""

from __future__ import annotations

import pytest

from core.cli import main
from core.engine.bundled import bundled_tokenizer
from core.engine.capabilities import DISTRIBUTION, GENERATION, TARGET_LOGPROBS, split_supported
from core.engine.served import Endpoint, connect, public_url
from core.engine.served_tokens import token_offsets
from core.errors import LeakLensError
from core.methods import default_methods
from tests.helpers.vllm_server import free_port

TEXTS = [
    "Four score and seven years ago",
    "naïve café — «quoted» 你好 🙂\n\tend",
    "  leading spaces and trailing  ",
    "x",
]


@pytest.mark.parametrize("text", TEXTS)
def test_byte_level_token_strings_place_tokens_exactly_where_the_tokenizer_does(text):
    tokenizer = bundled_tokenizer()
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    strings = tokenizer.convert_ids_to_tokens(encoded["input_ids"])
    assert token_offsets(text, strings) == [tuple(span) for span in encoded["offset_mapping"]]


def test_sentencepiece_token_strings_with_raw_bytes_and_the_added_space():
    # "ö" is two UTF-8 bytes, spelled as two raw-byte tokens; SentencePiece adds a space before the first word.
    strings = ["\u2581Hello", "\u2581w", "<0xC3>", "<0xB6>", "rld"]
    assert token_offsets("Hello wörld", strings) == [(0, 5), (5, 7), (7, 8), (7, 8), (8, 11)]


def test_token_strings_that_do_not_spell_the_text_place_nothing():
    assert token_offsets("Hello world", ["Hello", "Ġplanet"]) is None


def test_recorded_url_drops_credentials_query_and_trailing_slash():
    assert public_url("https://user:secret@host:8000/v1/?token=x#f") == "https://host:8000/v1"


def test_a_source_without_the_full_distribution_leaves_min_k_plus_plus_out_with_the_reason():
    kept, notes = split_supported(default_methods(), {TARGET_LOGPROBS, GENERATION}, "the server at http://h/v1")
    assert "min_k_pp_20" not in [m.key for m in kept]
    assert len(kept) == len(default_methods()) - 1
    assert notes == [
        "Min-K%++ needs the full next-token distribution, which the server at http://h/v1 does not return: left out."
    ]
    everything, none = split_supported(default_methods(), {TARGET_LOGPROBS, DISTRIBUTION, GENERATION}, "here")
    assert len(everything) == len(default_methods())
    assert none == []


def test_nothing_listening_is_one_error_at_once():
    with pytest.raises(LeakLensError, match=r"Cannot reach the server at http://127\.0\.0\.1:\d+/v1"):
        connect(Endpoint(f"http://127.0.0.1:{free_port()}/v1"))


def test_bad_endpoint_options_are_refused_before_connecting():
    with pytest.raises(LeakLensError, match="http"):
        connect(Endpoint("ftp://host/v1"))
    with pytest.raises(LeakLensError, match="--api-key-env"):
        connect(Endpoint("http://user:pw@127.0.0.1:9/v1"))
    with pytest.raises(LeakLensError, match="--concurrency"):
        connect(Endpoint("http://127.0.0.1:9/v1", concurrency=0))


def test_every_command_with_a_model_takes_an_endpoint_and_says_in_one_line_when_it_is_down(capsys):
    url = f"http://127.0.0.1:{free_port()}/v1"
    for command in (["mcq", "--dataset", "demo:mcq"], ["inspect", "--text", "Four score and seven years ago"]):
        code = main([*command, "--endpoint", url, "--timeout", "2"])
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2
        assert len(err) == 1
        assert err[0].startswith("error: ")
        assert url in err[0]


def test_a_missing_key_variable_is_named(monkeypatch, capsys):
    monkeypatch.delenv("LEAKLENS_NO_SUCH_KEY", raising=False)
    with pytest.raises(LeakLensError, match="LEAKLENS_NO_SUCH_KEY.*not set"):
        connect(Endpoint(f"http://127.0.0.1:{free_port()}/v1", api_key_env="LEAKLENS_NO_SUCH_KEY"))


def test_min_k_plus_plus_refuses_records_without_the_distribution_instead_of_reading_them_as_flat():
    import numpy as np

    from core.engine.records import TokenRecords
    from core.methods.base import MethodConfigError
    from core.methods.min_k_plus_plus import MinKPlusPlus

    n = 4
    missing = np.full(n, np.nan)
    records = TokenRecords(
        text="abcd",
        token_ids=np.arange(n),
        offsets=np.array([[i, i + 1] for i in range(n)]),
        logprobs=np.full(n, -2.0),
        mean_logprob=missing,
        std_logprob=missing,
        entropy=missing,
        rank=np.ones(n, dtype=np.int64),
        kgram_logprobs=None,
    )
    with pytest.raises(MethodConfigError, match="full next-token distribution"):
        MinKPlusPlus(20).score(records)
