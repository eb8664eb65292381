"""Shared fixtures: real models, loaded once per test session."""

from __future__ import annotations

import os

from core.engine.handle import resolve_model

# Tests never reach a hub: set before transformers / datasets / huggingface_hub read their settings.
for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ[_var] = "1"
# Before torch loads: passive OpenMP waits keep shared-CPU runs from slowing about tenfold.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import re  # noqa: E402
import shutil  # noqa: E402
import time  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402

from core.config import PROJECT_ROOT  # noqa: E402
from core.engine.models import LoadedModel, load_model  # noqa: E402


@pytest.fixture(scope="session")
def tiny_lm() -> LoadedModel:
    """2-layer random Llama over the SmolLM2 vocabulary: fast, deterministic, meaningless scores."""
    return load_model("tiny-random")


@pytest.fixture(scope="session")
def smollm2() -> LoadedModel:
    """The bundled SmolLM2-135M (dequantised once into the LeakLens cache)."""
    return load_model("smollm2-135m")


@pytest.fixture(scope="session")
def vllm_endpoint(tmp_path_factory) -> Iterator[str]:
    """One real vLLM server for the session (tests/helpers/vllm_server.py); its API key is in the
    environment variable ``KEY_VAR`` names. Yields the base URL (``http://127.0.0.1:PORT/v1``)."""
    from tests.helpers.vllm_server import API_KEY, KEY_VAR, vllm_server

    os.environ[KEY_VAR] = API_KEY
    running = os.environ.get("LEAKLENS_TEST_VLLM_URL")  # a server already started with server_command()
    if running:
        yield running
        return
    with vllm_server(PROJECT_ROOT / "test-output" / "vllm") as (url, _process):
        yield url


def _calibrated_store(root: Path, lm: LoadedModel, *, up_to_tokens: int | None = None) -> Path:
    """A results store holding ``lm``'s scores on the fresh calibration passages (this machine's default setup):
    every one, or those of at most ``up_to_tokens`` tokens."""
    from core.engine.setup import resolve_setup
    from core.passage.calibration import fresh_lengths, stored_fresh_calibration
    from core.store.results import ResultStore

    def short_ones(passages) -> list[int]:
        return [i for i, n in enumerate(fresh_lengths(lm, passages)) if n <= (up_to_tokens or n)]

    path = root / "results.sqlite"
    stored_fresh_calibration(
        resolve_model(lm.spec, loader=lambda _: lm, setup=resolve_setup()), store=ResultStore(path), only=short_ones
    )
    return path


TINY_CALIBRATED_TOKENS = 260
"""The tiny model's seeded store holds the fresh passages of up to this many tokens (1,038 of 1,199, two thirds of
the set's tokens): the passages these tests inspect (the built-in examples, 116 tokens; the 128-token checks) are
compared with passages of up to twice their length, so each test finds its comparison stored, as a user who has
inspected such passages before; a longer passage has its comparison scored on the way, as a user's would. At 100
tokens every Inspect test scored about 300 passages again (17 s each on the idle machine)."""


TINY_CALIBRATION_CACHE = "test-calibrations"
"""Cache subfolder (under the LeakLens cache) of the tiny model's seeded store, one file per recipe."""


@pytest.fixture(scope="session")
def tiny_calibration(tmp_path_factory) -> Path:
    """The tiny model's scores on the shorter fresh passages, once per machine and recipe. A test that uses this
    fixture starts from a copy, as a user who has inspected a few short passages with the model before: the fresh
    passages are not rescored each time.

    Scoring them (the neighbourhood reading's rewordings included) is minutes of work that depends only on the
    fresh set, the scoring and method code and the library versions, so the store is kept in the LeakLens cache
    under their content hash; the xdist workers build it once between them (a file lock: the second waits and
    reads the first's)."""
    import fcntl
    import hashlib

    import torch
    import transformers

    from core.config import cache_subdir
    from core.passage.calibration import fresh_passages_path

    sources = sorted(
        path for part in ("engine", "methods", "store") for path in (PROJECT_ROOT / "core" / part).glob("*.py")
    )
    sources.append(PROJECT_ROOT / "core" / "data" / "fingerprint.py")
    sources += [PROJECT_ROOT / "core" / "passage" / "calibration.py", fresh_passages_path(), Path(__file__)]
    digest = hashlib.sha256()
    for part in [str(torch.__version__), transformers.__version__, str(TINY_CALIBRATED_TOKENS)]:
        digest.update(part.encode())
    for source in sources:
        digest.update(source.read_bytes())
    folder = cache_subdir(TINY_CALIBRATION_CACHE)
    kept = folder / f"tiny-{digest.hexdigest()[:20]}.sqlite"
    with (folder / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not kept.exists():
            built = _calibrated_store(
                tmp_path_factory.mktemp("tiny-calibration"),
                load_model("tiny-random"),
                up_to_tokens=TINY_CALIBRATED_TOKENS,
            )
            shutil.copyfile(built, kept.with_suffix(".part"))
            kept.with_suffix(".part").rename(kept)  # a file is either complete or absent
    return kept


@pytest.fixture(scope="session")
def smollm2_calibration(tmp_path_factory, smollm2) -> Path:
    """The bundled model's fresh-passage scores, as a first run reads them: copied from the shipped file
    (``assets/calibration/scores/``) with no model pass."""
    return _calibrated_store(tmp_path_factory.mktemp("smollm2-calibration"), smollm2)


SEEDED_STORES = ("tiny_calibration", "smollm2_calibration")


@pytest.fixture(autouse=True)
def _private_results_store(request, tmp_path, monkeypatch):
    """Commands store by default: keep every test's runs out of the user's own results store (seeded with a
    model's calibration scores for a test that asks for ``tiny_calibration`` or ``smollm2_calibration``)."""
    if not os.environ.get("LEAKLENS_STORE"):
        path = tmp_path / "default-results.sqlite"
        seeds = [name for name in SEEDED_STORES if name in request.fixturenames]
        assert len(seeds) <= 1, f"one seeded store per test, not {seeds}"
        if seeds:
            shutil.copyfile(request.getfixturevalue(seeds[0]), path)
        monkeypatch.setenv("LEAKLENS_STORE", str(path))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that loads the bundled 135M model or starts vLLM is slow wherever it lives: `make test-fast` skips it."""
    for item in items:
        if {"smollm2", "vllm_endpoint"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


SHARED_FIXTURE_GROUPS = (
    ("vllm_endpoint", "vllm"),
    ("es_url", "elasticsearch"),
    ("order_tuned_model", "order-tuned-model"),
    ("order_tuned_runs", "order-tuned-model"),
)
"""Session fixtures that start a server or train a model: every test file naming one runs in one worker."""
MODULE_FIXTURE = re.compile(r"@pytest\.fixture\(scope=\"module\"")


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup``, as ``make test`` runs it: tests are shared out one by one, except that the test files
    naming a shared fixture (``SHARED_FIXTURE_GROUPS``: one vLLM server, one Elasticsearch, one fine-tuned model)
    go to one worker together, and each file with a module-scoped fixture of its own (a server, a trained model,
    a batch of runs) goes to one worker whole, so each of them is built once.

    Grouping by file, read from the test sources, because pytest-xdist's own ``loadgroup`` reads the group from a
    suffix it adds to each test id, which pytest 9 no longer keeps: it ran like ``load``."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    groups = _file_groups(PROJECT_ROOT)

    class SharedFixtureScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return groups.get(nodeid.split("::")[0], nodeid)

    return SharedFixtureScheduling(config, log)


def _file_groups(root: Path) -> dict[str, str]:
    """Test file (as test ids start) -> its group, for the files that share a fixture or have one of their own."""
    groups = {}
    for path in sorted((root / "tests").rglob("test_*.py")):
        name = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8")
        shared = next((g for fixture, g in SHARED_FIXTURE_GROUPS if re.search(rf"\b{fixture}\b", text)), None)
        if shared is not None:
            groups[name] = shared
        elif MODULE_FIXTURE.search(text):
            groups[name] = name
    return groups


@pytest.fixture(scope="session", autouse=True)
def _one_torch_thread_per_worker() -> None:
    """Under ``pytest -n 2`` on two cores, each worker's torch keeps to one thread: two workers of two threads
    each would fight over the cores (the thread count moves scores at rounding level only)."""
    if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
        import torch

        torch.set_num_threads(1)


@pytest.fixture(scope="session")
def order_benchmarks(tmp_path_factory) -> tuple[Path, Path]:
    """(a benchmark file, a disjoint one of the same kind): see tests/helpers/order_benchmark.py."""
    from tests.helpers.order_benchmark import write_benchmarks

    return write_benchmarks(tmp_path_factory.mktemp("order_benchmarks"))


@pytest.fixture(scope="session")
def app_store(tmp_path_factory: pytest.TempPathFactory, tiny_calibration: Path) -> Path:
    """The results store of the ``app_url`` server: a copy of ``tiny_calibration``, as a user's who has inspected
    short passages with the model before (a test of the first, progressive calibration starts a server on a
    fresh store of its own)."""
    store = tmp_path_factory.mktemp("streamlit-store") / "results.sqlite"
    shutil.copyfile(tiny_calibration, store)
    return store


@pytest.fixture(scope="session")
def order_tuned_runs(order_tuned_model, order_benchmarks, app_store) -> dict[Path, Any]:
    """The order test of the fine-tuned model on each benchmark (the one it read in order, the one it never saw),
    with the ground truth's template and shards, stored in ``app_store``: the ground-truth test reads the
    findings, and the Benchmark order page, asked the same in the browser, finds these runs by their key."""
    from core.benchmark_order.examples import render_examples
    from core.benchmark_order.run import run_order_test
    from core.benchmark_order.settings import OrderSettings
    from core.data.tables import load_rows
    from core.store.results import ResultStore
    from tests.helpers.order_benchmark import SHARDS, TEMPLATE

    lm = load_model(str(order_tuned_model))
    store = ResultStore(app_store)
    return {
        path: run_order_test(
            render_examples(load_rows(str(path)), TEMPLATE),
            OrderSettings(shards=SHARDS),
            model=resolve_model(lm.spec, loader=lambda _: lm),
            store=store,
        )
        for path in order_benchmarks
    }


@pytest.fixture(scope="session")
def order_tuned_model(tmp_path_factory, order_benchmarks) -> Path:
    """A local model folder: the tiny random model fine-tuned on the first benchmark in its published order."""
    from tests.helpers.order_benchmark import save_tuned_model

    return save_tuned_model(order_benchmarks[0], tmp_path_factory.mktemp("order_tuned"))


TEST_BUDGET_S = 60
FIXTURE_BUDGET_S = 180
"""The suite's time budgets on the 2-core machine: a test's own call, and a fixture's set-up (issue: make test
within 30 minutes). Over-budget phases are listed at the end of the run, not failed: the machine is shared."""

_over_budget: list[tuple[float, str, str]] = []


SLOW_FIXTURE = "leaklens_slow_fixture"
"""The user property a test's report carries for each of its fixtures over budget (reports reach the controlling
process from pytest-xdist's workers; the workers' own memory does not)."""


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" and report.duration > TEST_BUDGET_S:
        _over_budget.append((report.duration, report.when, report.nodeid))
    if report.when == "setup":
        for name, value in report.user_properties:
            if name == SLOW_FIXTURE:
                seconds, fixture = value
                _over_budget.append((seconds, "fixture", f"{fixture} (set up for {report.nodeid})"))


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: Any, request: Any) -> Iterator[None]:
    """Each fixture's own set-up time against its budget: a test's set-up phase can hold several (a trained
    model, a seeded store, a server), each built once and timed apart."""
    started = time.monotonic()
    yield
    seconds = time.monotonic() - started
    item = getattr(request, "_pyfuncitem", None)
    if seconds > FIXTURE_BUDGET_S and item is not None:
        item.user_properties.append((SLOW_FIXTURE, (round(seconds, 1), fixturedef.argname)))


def pytest_terminal_summary(terminalreporter) -> None:
    if not _over_budget:
        return
    terminalreporter.section("over the time budget (a test's call 60 s, a fixture's set-up 180 s)")
    for seconds, when, nodeid in sorted(_over_budget, reverse=True):
        terminalreporter.write_line(f"{seconds:7.1f} s {when:<8} {nodeid}")
