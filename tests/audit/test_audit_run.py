"""One audit run: the model loaded once for every part, a cancelled audit resuming from its stored parts, each
part the stored run its own command makes, and expected times for the plan."""

from __future__ import annotations

import json
import shutil

import pytest

from core.audit.estimates import LOAD_S, plan_with_estimates
from core.audit.plan import plan_audit
from core.audit.run import audit_from_run, run_audit
from core.benchmark_order.run import KIND as ORDER_KIND
from core.cli import main
from core.data.tables import load_rows
from core.engine.handle import resolve_model
from core.store.results import ResultStore


class Stop(Exception):
    pass


@pytest.fixture()
def store(tmp_path, tiny_calibration) -> ResultStore:
    path = tmp_path / "store.sqlite"
    shutil.copyfile(tiny_calibration, path)
    return ResultStore(path)


def test_every_part_reads_the_one_model_it_was_given(tiny_lm, store):
    loads = []

    def loader(spec: str):
        loads.append(spec)
        return tiny_lm

    audit = run_audit(load_rows("demo:mcq"), resolve_model("tiny-random", loader=loader), store=store)
    assert len(audit.parts) == 4
    assert loads == ["tiny-random"]


def test_a_cancelled_audit_resumes_from_the_parts_it_stored(tiny_lm, store):
    model = resolve_model("tiny-random", loader=lambda _: tiny_lm)
    table = load_rows("demo:mcq")

    def stop_at_the_second_test(label: str):
        if label.startswith("Multiple-choice memorisation"):
            raise Stop
        return None

    with pytest.raises(Stop):
        run_audit(table, model, store=store, progress=stop_at_the_second_test)
    (order,) = store.list_runs(ORDER_KIND)
    assert order.finished
    assert store.list_runs("audit") == []  # the audit is stored once every part has run
    audit = run_audit(table, model, store=store)
    assert audit.part("benchmark-order").run_id == order.run_id
    again = store.get_run(order.run_id)
    assert again is not None and again.updated_at == order.updated_at  # read back, not scored again
    reopened = audit_from_run(store, store.get_run(audit.run_id))
    assert reopened.finding == audit.finding
    assert [p.to_dict() for p in reopened.parts] == [p.to_dict() for p in audit.parts]


def test_each_part_is_the_run_its_own_command_makes(tiny_lm, store, tmp_path):
    """The order test the audit ran is the stored run ``order-test`` asks for with the same file and shards."""
    audit = run_audit(load_rows("demo:mcq"), resolve_model("tiny-random", loader=lambda _: tiny_lm), store=store)
    argv = ["order-test", "--model", "tiny-random", "--dataset", "demo:mcq", "--store", str(store.path)]
    out = tmp_path / "order.json"
    assert main([*argv, "--out", str(out)]) == 0
    assert json.loads(out.read_text())["run_id"] == audit.part("benchmark-order").run_id


def test_the_plan_carries_an_expected_time_for_every_test_it_runs():
    table = load_rows("demo:mcq")
    plan = plan_with_estimates(plan_audit(table), resolve_model("smollm2-135m"), table)
    times = [p.estimate_s for p in plan.to_run]
    assert all(t is not None and t > 0 for t in times)
    assert times[0] is not None and times[0] > LOAD_S  # the first test loads the model
    assert all(p.estimate_s is None for p in plan.left_out)
