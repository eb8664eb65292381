"""MCQ memorisation probes: today's path against the one-pass-per-rendering path, side by side in one run.

The first 200 questions of the MMLU sample, both probes (next token and completion) on the original and on
the shuffled options (1,600 probes). Two comparisons, each measured in this one run:

- **The command users run** (``python -m core mcq --dataset ... --limit 200`` with a fresh store), as the
  MCQ path stood before this work (the code of ``--previous-commit``, extracted with ``git archive`` into a
  temporary folder) and as it stands now, alternating which goes first. Both include starting Python and
  loading the model. Every stored probe (predicted token, continuation, completion, similarity) must be
  identical. This is what "today's path" took, and the headline ``speedup_vs_previous``.
- **The engine alone**, in this process: every probe prefilling its own prompt (``run_mcq_sets(...,
  per_probe=True)``, with this commit's decoding) against ``run_mcq_sets`` on both sets together (one pass
  per rendering, the question text once per question, decoding only where the greedy tokens leave the
  rendering); and the plain forward pass over the same renderings (``bench/scoring.py``'s
  ``bare_forward``), so the renderings path's time can be set against the forward-pass rate.

    .venv/bin/python bench/mcq.py [--questions 200] [--model smollm2-135m] [--cli-rounds 2]
                                  [--engine-rounds 1] [--previous-commit d79c5c5] [--quick] [--out DIR]

``--quick`` is a smoke run (3 questions, the tiny random model, one round of each). Without the previous
commit (a shallow clone) the command comparison is skipped and said so. Results go to
bench/results/mcq-<timestamp>.json; its ``summary`` holds ``speedup_vs_previous`` and ``identical_results``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from scoring import bare_forward, machine, timed, write_result  # noqa: E402

from core.data.questions import load_mcq  # noqa: E402
from core.engine.models import load_model  # noqa: E402
from core.mcq.completion import MCQConfig, MCQRun, run_mcq_sets  # noqa: E402
from core.mcq.shuffle import shuffle_questions  # noqa: E402
from core.store.results import ResultStore  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "mmlu_sample.jsonl"
SHUFFLE_SEED = 0
PREVIOUS_COMMIT = "d79c5c5"
"""The last commit before the one-pass-per-rendering path: every probe prefilled its own prompt, and the
stored command probed 4 questions per batch, the original options and then the shuffled ones."""


def per_probe_path(lm, sets, config) -> list[MCQRun]:
    return run_mcq_sets(lm, sets, config, per_probe=True)


def renderings_path(lm, sets, config) -> list[MCQRun]:
    return run_mcq_sets(lm, sets, config)


def differing_probes(a: list[MCQRun], b: list[MCQRun]) -> int:
    """Probes whose judged result (every field) differs between two runs of the same sets."""
    return sum(
        pa != pb
        for ra, rb in zip(a, b, strict=True)
        for qa, qb in zip(ra.results, rb.results, strict=True)
        for pa, pb in zip(qa.probes, qb.probes, strict=True)
    )


def extract_commit(commit: str, folder: Path) -> bool:
    """The commit's ``core`` and ``assets`` under ``folder``; False when this clone does not have it."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit, "core", "assets"], capture_output=True)
    if archive.returncode != 0:
        return False
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return True


def command_run(
    root: Path, model: str, n_questions: int, store: Path, extra_env: dict[str, str] | None = None
) -> float:
    """Seconds the ``mcq`` command of the code under ``root`` takes, from start to exit, with a fresh store."""
    env = {**os.environ, "PYTHONPATH": str(root), "HF_HUB_OFFLINE": "1", **(extra_env or {})}
    command = [
        sys.executable,
        "-m",
        "core",
        "mcq",
        "--model",
        model,
        "--dataset",
        str(DATA),
        "--limit",
        str(n_questions),
        "--shuffle-seed",
        str(SHUFFLE_SEED),
        "--store",
        str(store),
        "--json",
    ]
    (_, seconds) = timed(lambda: subprocess.run(command, cwd=root, env=env, check=True, capture_output=True))
    return seconds


def stored_probes(store: Path) -> list:
    """Every stored probe of the store's one MCQ run, question by question (original, then shuffled)."""
    (run,) = ResultStore(store).list_runs("mcq")
    samples = sorted(ResultStore(store).load_samples(run.run_id), key=lambda s: int(s.sample_id))
    return [(s.summary["original"], s.summary["shuffled"]) for s in samples]


def compare_commands(model: str, n_questions: int, rounds: int, commit: str) -> dict:
    """The ``mcq`` command before and now, alternating which goes first; their stored probes compared."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        previous_root = folder / "previous"
        previous_root.mkdir()
        if not extract_commit(commit, previous_root):
            return {"skipped": f"commit {commit} is not in this clone"}
        # now_default_allocator: this code with glibc handing freed memory back (core/engine/memory.py)
        roots = {"previous": previous_root, "now": REPO, "now_default_allocator": REPO}
        envs = {"now_default_allocator": {"LEAKLENS_KEEP_FREED_MEMORY": "0"}}
        seconds: dict[str, list[float]] = {name: [] for name in roots}
        identical = True
        for repeat in range(rounds):
            order = list(roots) if repeat % 2 == 0 else list(roots)[::-1]
            stores = {}
            for name in order:
                stores[name] = folder / f"{name}-{repeat}.sqlite"
                seconds[name].append(command_run(roots[name], model, n_questions, stores[name], envs.get(name)))
                print(f"command round {repeat + 1}: {name} {seconds[name][-1]:.1f} s", flush=True)
            before = stored_probes(stores["previous"])
            identical = (
                identical
                and len(before) == n_questions
                and all(stored_probes(stores[name]) == before for name in ("now", "now_default_allocator"))
            )
    return {
        "previous_commit": commit,
        "seconds": seconds,
        "speedup_per_round": [p / n for p, n in zip(seconds["previous"], seconds["now"], strict=True)],
        "speedup": min(seconds["previous"]) / min(seconds["now"]),
        "identical_stored_probes": identical,
    }


def compare_engines(lm, sets, config, rounds: int) -> dict:
    """Per-probe prompts against one pass per rendering, in this process, alternating which goes first."""
    paths = [("per_probe", per_probe_path), ("renderings", renderings_path)]
    results, differing = [], 0
    runs: dict[str, list[MCQRun]] = {}
    for repeat in range(rounds):
        seconds = {}
        for name, fn in paths if repeat % 2 == 0 else paths[::-1]:
            runs[name], seconds[name] = timed(lambda fn=fn: fn(lm, sets, config))
            print(f"engine round {repeat + 1}: {name} {seconds[name]:.1f} s", flush=True)
        differing = max(differing, differing_probes(runs["per_probe"], runs["renderings"]))
        results.append({**seconds, "speedup": seconds["per_probe"] / seconds["renderings"]})
    best = {name: min(r[name] for r in results) for name, _ in paths}
    return {"rounds": results, "best": best, "differing_probes": differing, "runs": runs["renderings"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--cli-rounds", type=int, default=2, help="rounds of the mcq command, before and now")
    parser.add_argument("--engine-rounds", type=int, default=1, help="side-by-side rounds of the engine paths")
    parser.add_argument("--previous-commit", default=PREVIOUS_COMMIT)
    parser.add_argument("--quick", action="store_true", help="smoke run: 3 questions, tiny random model")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = parser.parse_args(argv)
    if args.quick:
        args.model, args.questions, args.cli_rounds, args.engine_rounds = "tiny-random", 3, 1, 1

    info = machine()
    commands = (
        compare_commands(args.model, args.questions, args.cli_rounds, args.previous_commit)
        if args.cli_rounds > 0
        else {"skipped": "--cli-rounds 0"}
    )

    lm = load_model(args.model)
    questions = load_mcq(str(DATA), limit=args.questions).questions
    sets = [questions, shuffle_questions(questions, SHUFFLE_SEED)]
    config = MCQConfig()
    n_probes = sum(len(q.options) for s in sets for q in s)
    texts = [config.layout.render(q)[0] for s in sets for q in s]
    print(f"{len(questions)} questions, {n_probes} probes, model {lm.describe()}", flush=True)
    # Warm-up so one-time costs (allocator, kernels) are billed to neither engine path.
    warm = [s[:2] for s in sets]
    per_probe_path(lm, warm, config), renderings_path(lm, warm, config)
    n_tokens, t_forward = timed(lambda: bare_forward(lm, texts))
    print(f"plain forward pass over the renderings: {n_tokens} tokens in {t_forward:.1f} s", flush=True)
    engines = compare_engines(lm, sets, config, max(1, args.engine_rounds))
    original, shuffled = engines.pop("runs")

    measured = "skipped" not in commands
    identical = engines["differing_probes"] == 0 and (commands.get("identical_stored_probes", True))
    result = {
        "benchmark": "mcq",
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {**info, "load_average_at_end": os.getloadavg()[0]},
        "model": lm.describe(),
        "questions": len(questions),
        "probes": n_probes,
        "shuffle_seed": SHUFFLE_SEED,
        "command": commands,
        "engine": engines,
        "plain_forward": {"tokens": n_tokens, "seconds": t_forward, "tokens_per_s": n_tokens / t_forward},
        "scores": {"original": original.to_dict(), "shuffled": shuffled.to_dict()},
        "summary": {
            "speedup_vs_previous": commands["speedup"]
            if measured
            else engines["best"]["per_probe"] / engines["best"]["renderings"],
            "speedup_vs_previous_measures": (
                f"the mcq command at {args.previous_commit} against now"
                if measured
                else "the per-probe engine path against the renderings path (" + commands["skipped"] + ")"
            ),
            "identical_results": identical,
            "command_speedup_per_round": commands.get("speedup_per_round"),
            "command_seconds_previous": commands.get("seconds", {}).get("previous"),
            "command_seconds_now": commands.get("seconds", {}).get("now"),
            "engine_speedup_vs_per_probe": engines["best"]["per_probe"] / engines["best"]["renderings"],
            "engine_differing_probes": engines["differing_probes"],
            "engine_per_probe_seconds": engines["best"]["per_probe"],
            "engine_renderings_seconds": engines["best"]["renderings"],
            "plain_forward_seconds_over_renderings": t_forward,
            "renderings_seconds_over_plain_forward": engines["best"]["renderings"] / t_forward,
        },
    }
    write_result(args.out, "mcq", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
