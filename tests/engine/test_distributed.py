"""Scoring across processes: real ``torchrun --nproc-per-node 2`` jobs on the gloo backend (CPU).

Two processes must give exactly what one process gives (the same --out numbers, the same stored rows in
the same order), resume from what the store already holds, stop together when one rank fails, and refuse
ranks that were given different data. ``--device-map auto`` must work on a CPU-only machine too.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from core.cli import main
from core.config import PROJECT_ROOT, SHARED_DATA_DIR
from core.data.labelled import load_labelled_dataset
from core.engine.bundled import bundled_tokenizer, tiny_random_model
from core.engine.handle import resolve_model
from core.engine.models import load_model
from core.engine.scoring import score_texts
from core.errors import ModelLoadError
from core.membership.benchmark import KIND, run_membership_benchmark
from core.methods import parse_methods
from core.store.results import FINISHED, INTERRUPTED, ResultStore

REPO = PROJECT_ROOT
DATA = SHARED_DATA_DIR
BOOKS = str(DATA / "booktection_sample.csv")
WORKER = Path(__file__).with_name("distributed_worker.py")
MIA = [
    "mia",
    "--dataset",
    BOOKS,
    "--model",
    "tiny-random",
    "--limit",
    "12",
    "--sample",
    "--methods",
    "loss",
    "zlib",
    "--batch-size",
    "5",
]
RUN_DEPENDENT = ("provenance", "elapsed_s", "seconds")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def torchrun(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    """``torchrun --nproc-per-node 2`` on a free port, from the repository root."""
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        "2",
        "--master-addr",
        "127.0.0.1",
        "--master-port",
        str(free_port()),
        *args,
    ]
    return subprocess.run(
        command, cwd=REPO, capture_output=True, text=True, timeout=timeout, env={**os.environ, "OMP_NUM_THREADS": "1"}
    )


def torchrun_core(*args: str) -> subprocess.CompletedProcess:
    done = torchrun("-m", "core", *args)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def same_result(path_a: Path, path_b: Path) -> dict:
    """Two --out documents equal in everything but timing and provenance; returns the first."""
    docs = [json.loads(p.read_text()) for p in (path_a, path_b)]
    for doc in docs:
        for key in RUN_DEPENDENT:
            doc.pop(key, None)
    assert docs[0] == docs[1]
    return docs[0]


def stored_rows(path: Path, kind: str) -> list[list]:
    store = ResultStore(path)
    rows = []
    for run in sorted(store.list_runs(kind), key=lambda r: r.run_id):
        assert run.status == FINISHED
        rows.append(
            [
                run.run_id,
                run.summary,
                [(s.sample_id, s.label, s.scores, s.summary) for s in store.load_samples(run.run_id)],
            ]
        )
    return rows


@pytest.mark.slow
def test_mia_on_two_processes_equals_one_process(tmp_path, capsys, tiny_lm):
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    assert main([*MIA, "--store", str(tmp_path / "one.sqlite"), "--out", str(one)]) == 0
    capsys.readouterr()
    done = torchrun_core(*MIA, "--store", str(tmp_path / "two.sqlite"), "--out", str(two))
    assert done.stdout.count("12 texts scored") == 1  # rank 0 alone prints
    assert done.stdout.count("finding (") == 1
    doc = same_result(one, two)
    assert doc["n"] == 12
    assert stored_rows(tmp_path / "one.sqlite", KIND) == stored_rows(tmp_path / "two.sqlite", KIND)
    provenance = json.loads(two.read_text())["provenance"]
    assert provenance["options"]["processes"] == {"world_size": 2, "backend": "gloo"}


@pytest.mark.slow
def test_two_processes_resume_a_stored_run_and_score_only_the_rest(tmp_path, capsys, tiny_lm):
    dataset = load_labelled_dataset(BOOKS, limit=12, sample=True, seed=0)

    def stop_after_first_batch(done: int, total: int) -> None:
        if done >= 4:
            raise KeyboardInterrupt

    partial = tmp_path / "partial.sqlite"
    with pytest.raises(KeyboardInterrupt):
        run_membership_benchmark(
            dataset,
            resolve_model("tiny-random", loader=lambda spec: tiny_lm),
            parse_methods(["loss", "zlib"]),
            store=ResultStore(partial),
            batch_size=4,
            progress=stop_after_first_batch,
        )
    (run,) = ResultStore(partial).list_runs(KIND)
    assert run.status == INTERRUPTED
    assert run.n_done == 4
    for name in ("one.sqlite", "two.sqlite"):
        shutil.copy(partial, tmp_path / name)

    one, two = tmp_path / "one.json", tmp_path / "two.json"
    assert main([*MIA, "--store", str(tmp_path / "one.sqlite"), "--out", str(one)]) == 0
    assert "8 texts scored" in capsys.readouterr().out
    done = torchrun_core(*MIA, "--store", str(tmp_path / "two.sqlite"), "--out", str(two))
    assert "8 texts scored" in done.stdout
    same_result(one, two)
    assert stored_rows(tmp_path / "one.sqlite", KIND) == stored_rows(tmp_path / "two.sqlite", KIND)

    again = torchrun_core(*MIA, "--store", str(tmp_path / "two.sqlite"), "--out", str(two))
    assert "from the store" in again.stdout
    same_result(one, two)


@pytest.mark.slow
def test_delta_on_two_processes_equals_one_process(tmp_path, capsys, tiny_lm):
    args = ["delta", "--test", "builtin", "--reference", "builtin", "--model", "tiny-random", "--limit", "7"]
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    assert main([*args, "--store", str(tmp_path / "one.sqlite"), "--out", str(one)]) == 0
    capsys.readouterr()
    torchrun_core(*args, "--store", str(tmp_path / "two.sqlite"), "--out", str(two))
    same_result(one, two)
    assert stored_rows(tmp_path / "one.sqlite", "delta") == stored_rows(tmp_path / "two.sqlite", "delta")


@pytest.mark.slow
def test_mcq_on_two_processes_equals_one_process(tmp_path, capsys, tiny_lm):
    args = ["mcq", "--dataset", "demo:mcq", "--model", "tiny-random", "--limit", "5"]
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    assert main([*args, "--store", str(tmp_path / "one.sqlite"), "--out", str(one)]) == 0
    capsys.readouterr()
    torchrun_core(
        *args,
        "--store",
        str(tmp_path / "two.sqlite"),
        "--out",
        str(two),
        "--export-shuffled",
        str(tmp_path / "shuffled.jsonl"),
    )
    same_result(one, two)
    assert stored_rows(tmp_path / "one.sqlite", "mcq") == stored_rows(tmp_path / "two.sqlite", "mcq")
    assert len((tmp_path / "shuffled.jsonl").read_text().splitlines()) == 5  # written once, by rank 0


def run_worker(tmp_path: Path, mode: str) -> tuple[subprocess.CompletedProcess, list[dict]]:
    done = torchrun(str(WORKER), str(tmp_path / "r.sqlite"), str(tmp_path), mode, timeout=120)
    return done, [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]


def test_run_loop_shares_batches_and_only_rank_0_writes_the_store(tmp_path):
    _, ranks = run_worker(tmp_path, "ok")
    assert ranks[0]["calls"] == [[0, 1], [4, 5], [8, 9]]
    assert ranks[1]["calls"] == [[2, 3], [6, 7]]
    assert ranks[0] == {**ranks[1], "calls": ranks[0]["calls"]}  # every rank returns the same outcome
    assert ranks[0]["ids"] == [f"s{i}" for i in range(10)]
    assert ranks[0]["n_computed"] == 10
    assert len(ranks[0]["pids"]) == 2
    assert ranks[0]["summary"] == {"n": 10}
    store = ResultStore(tmp_path / "r.sqlite")
    (run,) = store.list_runs()
    assert run.finished
    assert [s.sample_id for s in store.load_samples(run.run_id)] == ranks[0]["ids"]


@pytest.mark.slow
def test_a_failing_rank_stops_every_rank_and_leaves_the_run_resumable(tmp_path):
    done, ranks = run_worker(tmp_path, "fail")
    assert done.returncode == 0  # the worker reports errors in its files
    assert ranks[1]["error"] == "RuntimeError"
    assert ranks[1]["message"] == "planted failure"
    assert ranks[0]["error"] == "RankFailedError"
    assert "Rank 1 failed: RuntimeError: planted failure" in ranks[0]["message"]
    (run,) = ResultStore(tmp_path / "r.sqlite").list_runs()
    assert run.status == INTERRUPTED
    assert run.n_done == 4  # the first step's 2 × 2 samples were stored

    _, ranks = run_worker(tmp_path, "ok")
    assert ranks[0]["n_computed"] == 6
    assert ranks[0]["calls"] == [[4, 5], [8, 9]]


@pytest.mark.slow
def test_ranks_given_different_data_are_refused(tmp_path):
    _, ranks = run_worker(tmp_path, "other-data")
    for result in ranks:
        assert result["error"] == "LeakLensError"
        assert "every rank needs the same data" in result["message"]
    assert ResultStore(tmp_path / "r.sqlite").list_runs() == []


def test_commands_that_cannot_share_work_refuse_torchrun(monkeypatch, capsys):
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert main(["report", "no-such-run", "--out", "never.html"]) == 2
    err = capsys.readouterr().err
    assert "'report' runs as one process" in err
    assert "only mia, delta and mcq" in err


@pytest.mark.slow
def test_device_map_auto_works_on_cpu_and_scores_like_a_plain_load(tmp_path, capsys, tiny_lm):
    folder = tmp_path / "checkpoint"
    tokenizer = bundled_tokenizer()
    tiny_random_model(tokenizer).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    texts = ["The quick brown fox jumps over the lazy dog.", "Four score and seven years ago our fathers"]
    plain, mapped = load_model(str(folder)), load_model(str(folder), device_map="auto")
    assert mapped.device.type == "cpu"
    assert mapped.model.hf_device_map  # placed by accelerate
    assert [r.loss for r in score_texts(plain, texts)] == [r.loss for r in score_texts(mapped, texts)]

    one, two = tmp_path / "one.json", tmp_path / "two.json"
    assert main([*MIA, "--no-store", "--out", str(one)]) == 0
    assert main([*MIA, "--no-store", "--device-map", "auto", "--out", str(two)]) == 0
    capsys.readouterr()
    same_result(one, two)
    assert json.loads(two.read_text())["provenance"]["options"]["device_map"] == "auto"


def test_unknown_device_map_is_refused(capsys):
    with pytest.raises(ModelLoadError, match="Unknown device map 'balanced'; use auto"):
        load_model("tiny-random", device_map="balanced")
    with pytest.raises(SystemExit):
        main([*MIA, "--no-store", "--device-map", "balanced"])
    assert "invalid choice: 'balanced'" in capsys.readouterr().err
