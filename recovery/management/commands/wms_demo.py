from collections import Counter

from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction

from recovery.demo import sql as demo_sql
from recovery.demo.warehouse import CASES, EXPECTED, WarehouseBuilder, truncate_wms_tables
from recovery.engine.cordons import cordon_create
from recovery.engine.decisions import PAUSE_REASONS, Rule
from recovery.engine.schema import missing_tables
from recovery.models import Cordon

# How many workflows of each kind the demo warehouse holds: every kind the warehouse builder
# writes (recovery.demo.warehouse.CASES: every rule of docs/architecture.md §5 at least once), one
# each unless said here, plus flowing work and history.
DEMO_COUNTS = {
    "healthy": 12, "all_completed": 2, "active_not_pre_move": 2, "finish_terminal": 3, "finish_terminal_last": 2,
    "active_mismatch": 2, "finish_not_terminal": 2, "job_missing": 3, "paused": len(PAUSE_REASONS), "completed": 20,
}
DEMO_MIX = {kind: DEMO_COUNTS.get(kind, 1) for kind in CASES}
# One healthy workflow's job has not moved for this long: the demo's stalled workflow (a
# vehicle fault; run_console's simulator leaves it alone). Recovery still leaves it running.
STALLED_DEMO_MINUTES = 95
RESTING_TRAYS = 180
SPARE_SPACES = 220
# The demo's cordon: one spare space closed to new tidy work (the rack map draws it, /cordons/
# lists it). Cordons are append-only, so a --reset keeps the first one instead of adding another.
DEMO_CORDON_REASON = "Rack upright damaged by a forklift; inspection booked."


class Command(BaseCommand):
    help = "Load a demo warehouse whose workflows hit every row of the recovery decision table."

    def add_arguments(self, parser):
        parser.add_argument("--if-empty", action="store_true", help="do nothing when workflows already exist")
        parser.add_argument("--reset", action="store_true", help="empty the WMS tables first")

    def handle(self, *args, **options):
        if missing := missing_tables():
            raise CommandError(f"WMS table missing: {', '.join(missing)} (run `python manage.py wms_schema`)")
        with connection.cursor() as cursor:
            cursor.execute(demo_sql.COUNT_WORKFLOWS)
            existing = cursor.fetchone()[0]
        if existing and options["if_empty"]:
            self.stdout.write(f"demo data already present ({existing} workflows); left as it is")
            return
        if existing and not options["reset"]:
            raise CommandError(f"{existing} workflows already exist; use --reset to replace them or --if-empty")
        with transaction.atomic():
            if options["reset"]:
                truncate_wms_tables()
            counts = load_demo()
        expected = Counter()
        for kind, n in DEMO_MIX.items():
            action, reason = EXPECTED[kind]
            if CASES[kind] is Rule.NOT_ACTIVE:  # paused or finished: not examined
                continue
            expected[f"{action} {reason}" if reason else action] += n
        self.stdout.write(f"demo warehouse: {counts['spaces']} cargo spaces, {counts['trays']} trays, "
                          f"{counts['stock']} stock rows, {sum(DEMO_MIX.values())} workflows")
        self.stdout.write("the next recovery cycle should decide:")
        for key, n in sorted(expected.items()):
            self.stdout.write(f"  {key}: {n}")


def load_demo() -> dict[str, int]:
    wh = WarehouseBuilder()
    for i in range(RESTING_TRAYS):
        wh.stocked_tray(sku_count=2 + i % 4)
    spare = [wh.add_space(None) for _ in range(SPARE_SPACES)]
    if not Cordon.objects.exists():
        cordon_create(scope=Cordon.Scope.SPACE, place=spare[-1], reason=DEMO_CORDON_REASON, ends_at=None,
                      username="shiftlead")
    n = 0
    for kind, count in DEMO_MIX.items():
        for i in range(count):
            n += 1
            kw = {"origin": "MANUAL" if n % 3 == 0 else "AUTOMATIC", "age_minutes": 5 + (n * 37) % 600}
            if kind == "paused":
                kw["reason"] = PAUSE_REASONS[i % len(PAUSE_REASONS)].value
            if kind == "healthy":
                kw["job_status"] = 1 + i % 3
            built = wh.build(kind, **kw)
            if kind == "healthy" and i == 0:
                with connection.cursor() as cursor:
                    cursor.execute(demo_sql.DEMO_STALL_JOB, {"workflow_id": built.workflow_id,
                                                           "minutes": STALLED_DEMO_MINUTES})
    with connection.cursor() as cursor:
        cursor.execute(demo_sql.DEMO_WAREHOUSE_SIZE)
        spaces, trays, stock = cursor.fetchone()
    return {"spaces": spaces, "trays": trays, "stock": stock}
