from django.core.management.base import BaseCommand, CommandError
from django.db import OperationalError

from recovery.engine.schema import SchemaShapeError, apply_wms_schema


class Command(BaseCommand):
    help = ("Create the WMS tables and alg.usp_complete_move_job for development, tests "
            "and the demo. Idempotent; refuses tables that exist in another shape.")

    def handle(self, *args, **options):
        try:
            created = apply_wms_schema()
        except SchemaShapeError as exc:
            lines = "\n".join(f"  - {d}" for d in exc.differences)
            raise CommandError(f"WMS tables exist in another shape; nothing was changed:\n{lines}") from None
        except OperationalError as exc:
            raise CommandError(f"cannot reach the database; nothing was changed: {exc}".strip()) from None
        if options["verbosity"] == 0:
            return
        if created:
            self.stdout.write(f"created: {', '.join(created)}; procedure alg.usp_complete_move_job in place")
        else:
            self.stdout.write("WMS schema already in place; procedure alg.usp_complete_move_job refreshed")
