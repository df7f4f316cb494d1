from django.core.management.base import BaseCommand, CommandError
from django.db import OperationalError

from recovery.engine.cycle import run_cycle
from recovery.engine.schema import missing_tables, procedure_exists
from recovery.models import RecoveryCycle


class Command(BaseCommand):
    help = "Run recovery cycles from the shell; exits non-zero when a cycle as a whole failed."

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true", help="run one cycle and exit (the default)")

    def handle(self, *args, **options):
        try:
            missing = missing_tables()
        except OperationalError as exc:
            raise CommandError(f"cannot reach the database: {exc}".strip()) from None
        if missing:
            raise CommandError(f"WMS table missing: {', '.join(missing)} (run `python manage.py wms_schema`)")
        if not procedure_exists():
            raise CommandError("WMS procedure alg.usp_complete_move_job is missing "
                               "(run `python manage.py wms_schema`)")
        report = run_cycle(trigger=RecoveryCycle.Trigger.MANUAL)
        self.stdout.write(report.summary())
        for reason, count in sorted(report.reasons.items()):
            self.stdout.write(f"  paused {reason}: {count}")
        if not report.succeeded:
            raise CommandError(f"recovery cycle failed: {report.error_text}")
