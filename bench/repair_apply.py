#!/usr/bin/env python
"""Benchmark: how long an operator repair takes (preview and apply, through the services).

Loads the demo warehouse plus N extra workflows missing their job, runs one recovery cycle to
pause them, then previews and applies, for every paused workflow, the gentlest action the
evidence allows (re-check, re-issue, reconcile). Prints medians and p95 of the preview and of
the apply (lock, re-read, fingerprint check, mutation, row snapshots, audit row), and how many
ended consistent. Uses a private embedded database in /tmp unless DATABASE_URL is set (then it
TRUNCATES the WMS tables there: never point it at a real WMS).

    .venv/bin/python bench/repair_apply.py [--extra 300]
"""

import argparse
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench._setup import django_on_private_database, stop_private_database  # noqa: E402


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extra", type=int, default=300, help="extra paused workflows (job missing)")
    args = parser.parse_args()
    django_on_private_database("repair")
    try:
        run(args.extra)
    finally:
        stop_private_database()


def run(extra: int) -> None:
    from django.contrib.auth.models import Group, User
    from django.db import transaction

    from console import repair
    from console.repair import RepairAction as A
    from console.roles import OPERATOR
    from recovery.demo.warehouse import WarehouseBuilder, truncate_wms_tables
    from recovery.engine.cycle import run_cycle
    from recovery.management.commands.wms_demo import load_demo
    from recovery.models import TidyWorkflow

    with transaction.atomic():
        truncate_wms_tables()
        load_demo()
        wh = WarehouseBuilder(prefix="X")
        for _ in range(extra):
            wh.build("job_missing")
    run_cycle()
    user, _ = User.objects.get_or_create(username="bench-operator")
    user.groups.add(Group.objects.get_or_create(name=OPERATOR)[0])
    paused = list(TidyWorkflow.objects.filter(status="PAUSED_RECOVERY").values_list("workflow_id", "pause_reason"))
    print(f"{len(paused)} paused workflows")
    order = (A.RECHECK, A.REISSUE, A.RECONCILE_SOURCE, A.RECONCILE_TARGET)
    previews, applies, per_action, consistent = [], [], {}, 0
    for wid, reason in paused:
        ctx, offers = repair.repair_offers(user=user, workflow_id=wid)
        action = next(a for a in order if any(o.action == a and o.available for o in offers))
        code = repair.codes_for(action, reason)[0].code
        tray = space = ""
        if action in repair.RECONCILE or action == A.REISSUE:  # the codes read on the floor
            tray = ctx.subject.tray_code
            space = ctx.subject.target_cargo_space_id if action == A.RECONCILE_TARGET else ctx.subject.cargo_space_id
        req = repair.RepairRequest(action, wid, code, "benchmark: checked on the floor", tray, space)
        t0 = time.perf_counter()
        preview = repair.repair_preview(user=user, request=req)
        t1 = time.perf_counter()
        audit = repair.repair_apply(user=user, request=req, previewed_fingerprint=preview.fingerprint,
                                    idempotency_key=uuid.uuid4().hex)
        t2 = time.perf_counter()
        previews.append((t1 - t0) * 1000)
        applies.append((t2 - t1) * 1000)
        per_action[action] = per_action.get(action, 0) + 1
        consistent += audit.consistent_after
    print("actions used:", {str(k): v for k, v in per_action.items()})
    print(f"preview ms: median {statistics.median(previews):.1f}, p95 {pct(previews, 95):.1f}, "
          f"max {max(previews):.1f}")
    print(f"apply   ms: median {statistics.median(applies):.1f}, p95 {pct(applies, 95):.1f}, "
          f"max {max(applies):.1f}  (service call incl. the audit row)")
    print(f"consistent afterwards: {consistent}/{len(paused)}")


if __name__ == "__main__":
    main()
