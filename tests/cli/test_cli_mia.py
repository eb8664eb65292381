"""``python -m core mia``: the printed AUROC table, the --out JSON, reuse of a stored run, and errors."""

from __future__ import annotations

import json
import re

import pytest

from core.cli import main
from core.config import PROJECT_ROOT, SHARED_DATA_DIR
from core.engine.handle import resolve_model
from core.store.results import FINISHED, ResultStore

DATA = SHARED_DATA_DIR


def test_mia_prints_table_writes_json_and_reuses_store(tmp_path, capsys, tiny_lm):
    store_path = tmp_path / "results.sqlite"
    out = tmp_path / "out" / "results.json"
    args = [
        "mia",
        "--dataset",
        str(DATA / "booktection_sample.csv"),
        "--model",
        "tiny-random",
        "--limit",
        "12",
        "--sample",
        "--methods",
        "loss",
        "zlib",
        "--store",
        str(store_path),
        "--out",
        str(out),
    ]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "text column 'Example_A', label column 'Label'" in printed  # DE-COP format detected
    assert "12 texts scored" in printed
    row_start = re.compile(r"^(loss|zlib|blind_baseline|ensemble) ")
    table = {line.split()[0]: line for line in printed.splitlines() if row_start.match(line)}
    assert set(table) == {"loss", "zlib", "blind_baseline", "ensemble"}

    doc = json.loads(out.read_text())
    assert doc["dataset"] == "booktection_sample.csv"
    assert doc["model"] == "tiny-random"
    assert doc["n"] == 12
    # the notes under the table are in the document too
    assert doc["notes"] == [line.removeprefix("note: ") for line in printed.splitlines() if line.startswith("note: ")]
    assert sorted(s["label"] for s in doc["samples"]).count(1) == 6
    for name in ("loss", "zlib"):
        entry = doc["methods"][name]
        # the printed row carries the same numbers, rounded to three decimals
        assert f"{entry['auroc']:.3f}" in table[name]
        assert f"[{entry['ci'][0]:.3f}, {entry['ci'][1]:.3f}]" in table[name]
    assert f"{doc['blind_baseline']['auroc']:.3f}" in table["blind_baseline"]

    (run,) = ResultStore(store_path).list_runs("mia")
    assert run.status == FINISHED
    assert run.n_done == 12
    assert run.dataset == "booktection_sample.csv"

    out.unlink()
    assert main(args) == 0
    again = capsys.readouterr().out
    assert "from the store" in again
    assert "texts scored" not in again
    assert json.loads(out.read_text()) == doc


def test_mia_errors_are_clear(tmp_path, capsys):
    store = str(tmp_path / "results.sqlite")
    assert main(["mia", "--dataset", str(tmp_path / "missing.csv"), "--model", "tiny-random", "--store", store]) == 2
    assert "error:" in capsys.readouterr().err
    assert (
        main(
            [
                "mia",
                "--dataset",
                str(DATA / "booktection_sample.csv"),
                "--model",
                "tiny-random",
                "--limit",
                "1",
                "--store",
                store,
            ]
        )
        == 2
    )
    assert "--limit must be at least 2" in capsys.readouterr().err
    bad = tmp_path / "bad.csv"
    bad.write_text("text,label\nhello there,1\ngeneral kenobi,2\n")
    assert main(["mia", "--dataset", str(bad), "--model", "tiny-random", "--store", store]) == 2
    assert "error:" in capsys.readouterr().err


@pytest.mark.slow
def test_killed_run_resumes_where_it_stopped(tmp_path):
    """A real `python -m core mia` process killed with SIGKILL mid-run: the next identical command scores
    only the texts that were not stored yet, and ends with the same scores as an uninterrupted run."""
    import os
    import signal
    import subprocess
    import sys
    import time

    store_path = tmp_path / "results.sqlite"
    repo = PROJECT_ROOT
    args = [
        sys.executable,
        "-m",
        "core",
        "mia",
        "--dataset",
        str(DATA / "wikimia_length128.parquet"),
        "--model",
        "tiny-random",
        "--limit",
        "30",
        "--sample",
        "--batch-size",
        "2",
        "--store",
        str(store_path),
    ]
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    child = subprocess.Popen(args, cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    store = ResultStore(store_path)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and child.poll() is None:
        runs = store.list_runs("mia") if store_path.exists() else []
        if runs and runs[0].n_done >= 6:
            child.send_signal(signal.SIGKILL)
            break
        time.sleep(0.02)
    child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL, child.stderr.read().decode()[-2000:]
    (run,) = store.list_runs("mia")
    n_done = run.n_done
    assert run.status == "interrupted"
    assert 6 <= n_done < 30
    assert n_done % 2 == 0  # whole batches only

    resumed = subprocess.run(
        args + ["--out", str(tmp_path / "resumed.json")], cwd=repo, env=env, capture_output=True, text=True, timeout=600
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"{30 - n_done} texts scored" in resumed.stdout
    (run,) = store.list_runs("mia")
    assert run.status == FINISHED
    assert run.n_done == 30

    fresh_store = tmp_path / "fresh.sqlite"
    fresh_args = [a if a != str(store_path) else str(fresh_store) for a in args]
    fresh = subprocess.run(
        fresh_args + ["--out", str(tmp_path / "fresh.json")],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert fresh.returncode == 0, fresh.stderr[-2000:]
    got = json.loads((tmp_path / "resumed.json").read_text())["samples"]
    want = json.loads((tmp_path / "fresh.json").read_text())["samples"]
    assert [s["id"] for s in got] == [s["id"] for s in want]
    for a, b in zip(got, want, strict=True):
        for key, value in b["scores"].items():
            assert a["scores"][key] == pytest.approx(value, rel=1e-4, abs=1e-5), (a["id"], key)


def test_resuming_under_another_dtype_is_refused(tmp_path, capsys):
    """A run started in float32 and resumed in bfloat16 would mix precisions under one run id: refused."""
    store_path = tmp_path / "results.sqlite"
    args = [
        "mia",
        "--dataset",
        "demo:famous-vs-fresh",
        "--model",
        "tiny-random",
        "--limit",
        "6",
        "--sample",
        "--methods",
        "loss",
        "--batch-size",
        "2",
        "--store",
        str(store_path),
    ]

    class Stop(Exception):
        pass

    from core.data.labelled import load_labelled_dataset
    from core.engine.setup import resolve_setup
    from core.membership.benchmark import run_membership_benchmark
    from core.methods import parse_methods

    dataset = load_labelled_dataset("demo:famous-vs-fresh", limit=6)

    def stop_after_first_batch(done, total):
        if 0 < done < total:
            raise Stop

    with pytest.raises(Stop):
        run_membership_benchmark(
            dataset,
            resolve_model("tiny-random", setup=resolve_setup("cpu", "float32")),
            parse_methods(["loss"]),
            store=ResultStore(store_path),
            batch_size=2,
            progress=stop_after_first_batch,
        )
    (run,) = ResultStore(store_path).list_runs("mia")
    assert not run.finished
    assert run.n_done == 2
    assert run.meta["setup"]["dtype"] == "float32"

    assert main([*args, "--dtype", "bfloat16"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:")
    assert "dtype float32 (asked for now: bfloat16)" in err
    assert "--dtype float32" in err
    assert "Traceback" not in err
    assert ResultStore(store_path).list_runs("mia")[0].n_done == 2  # nothing was added under the other dtype

    assert main([*args, "--dtype", "float32", "--out", str(tmp_path / "r.json")]) == 0
    finished = json.loads((tmp_path / "r.json").read_text())
    assert finished["provenance"]["setup"] == {"device": "cpu", "dtype": "float32", "revision": None}
    assert finished["provenance"]["leaklens"]
    assert finished["provenance"]["versions"]["torch"]


def test_every_subcommand_help_shows_the_shared_options(capsys):
    expected = {
        ("inspect",): ["--model", "--device", "--dtype", "--revision", "--trust-remote-code", "--out", "--json"],
        ("mia",): [
            "--model",
            "--device",
            "--dtype",
            "--revision",
            "--dataset",
            "--split",
            "--config",
            "--limit",
            "--sample",
            "--text-col",
            "--label-col",
            "--out",
            "--json",
            "--store",
            "--no-store",
        ],
        ("mcq",): [
            "--model",
            "--device",
            "--dtype",
            "--revision",
            "--dataset",
            "--split",
            "--config",
            "--limit",
            "--question-col",
            "--option-cols",
            "--answer-col",
            "--out",
            "--json",
            "--store",
            "--no-store",
        ],
        ("delta",): [
            "--model",
            "--device",
            "--dtype",
            "--revision",
            "--split",
            "--config",
            "--limit",
            "--id-col",
            "--prompt-col",
            "--solution-col",
            "--out",
            "--json",
            "--store",
            "--no-store",
        ],
        ("overlap", "index"): ["--dataset", "--split", "--text-col", "--out", "--json"],
        ("overlap", "search"): ["--dataset", "--split", "--text-col", "--id-col", "--out", "--json"],
        ("overlap", "list"): ["--out", "--json"],
        ("overlap", "delete"): ["--out", "--json"],
    }
    for command, options in expected.items():
        with pytest.raises(SystemExit) as exit_info:
            main([*command, "--help"])
        assert exit_info.value.code == 0
        text = capsys.readouterr().out
        for option in options:
            assert option in text, f"{' '.join(command)} --help lacks {option}"


def test_mia_zlib_compresses_the_scored_tokens_of_truncated_texts(tmp_path, capsys, tiny_lm):
    """`mia --max-tokens`: each stored zlib score is the loss over the compressed size of the scored tokens."""
    import zlib

    from core.data.labelled import load_labelled_dataset

    source = str(DATA / "booktection_sample.csv")
    assert (
        main(
            [
                "mia",
                "--dataset",
                source,
                "--model",
                "tiny-random",
                "--limit",
                "6",
                "--sample",
                "--methods",
                "loss",
                "zlib",
                "--max-tokens",
                "10",
                "--no-store",
                "--json",
            ]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    dataset = load_labelled_dataset(source)
    texts = dict(zip(dataset.ids, dataset.texts))
    for sample in doc["samples"]:
        ids = tiny_lm.tokenizer(texts[sample["id"]], add_special_tokens=False)["input_ids"]
        assert len(ids) > 10
        scored = tiny_lm.tokenizer.decode(ids[:10])
        expected = sample["scores"]["loss"] / len(zlib.compress(scored.encode("utf-8")))
        assert sample["scores"]["zlib"] == pytest.approx(expected, rel=1e-9)


@pytest.mark.slow
def test_two_identical_runs_at_once_share_the_work(tmp_path):
    """Two `python -m core mia` processes started together on one store: one scores, the other waits for
    it and reads the finished results back; both exit 0 with the same numbers and nothing is scored twice."""
    import os
    import subprocess
    import sys

    store_path = tmp_path / "results.sqlite"
    repo = PROJECT_ROOT
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "OMP_NUM_THREADS": "1"}

    def start(name: str) -> subprocess.Popen:
        args = [
            sys.executable,
            "-m",
            "core",
            "mia",
            "--dataset",
            str(DATA / "wikimia_length128.parquet"),
            "--model",
            "tiny-random",
            "--limit",
            "30",
            "--sample",
            "--batch-size",
            "1",
            "--store",
            str(store_path),
            "--out",
            str(tmp_path / f"{name}.json"),
        ]
        return subprocess.Popen(args, cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    children = [start("a"), start("b")]
    outputs = [child.communicate(timeout=300) for child in children]
    for child, (_, err) in zip(children, outputs):
        assert child.returncode == 0, err
        assert "Traceback" not in err
        assert "cannot change" not in err
    printed = sorted(out for out, _ in outputs)
    assert sum("30 texts scored" in out for out in printed) == 1
    assert sum("from the store" in out for out in printed) == 1
    waiter = next(err for out, err in outputs if "from the store" in out)
    assert "being computed by another process" in waiter
    docs = [json.loads((tmp_path / f"{name}.json").read_text()) for name in ("a", "b")]
    assert docs[0]["methods"] == docs[1]["methods"]
    assert docs[0]["samples"] == docs[1]["samples"]
    (run,) = ResultStore(store_path).list_runs("mia")
    assert run.status == FINISHED
    assert run.n_done == 30
