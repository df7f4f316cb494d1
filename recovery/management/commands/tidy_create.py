"""Create a tidy workflow from the shell (the same service the WMS and the simulator use)."""

from django.core.management.base import BaseCommand, CommandError

from recovery.engine.creation import CreationRefused, TidyMove, create_tidy_workflow
from recovery.models import TidyWorkflow


class Command(BaseCommand):
    help = ("Create a tidy workflow: one step per --move, every space locked, step 1's job "
            "TDY-<workflowId>-<stepId> created. MANUAL first checks the WCS vehicle snapshot.")

    def add_arguments(self, parser):
        parser.add_argument("--origin", choices=TidyWorkflow.Origin.values, default=TidyWorkflow.Origin.AUTOMATIC)
        parser.add_argument("--move", nargs=3, action="append", metavar=("TRAY", "SOURCE", "TARGET"), default=[],
                            help="a step, in order; repeat for more steps")

    def handle(self, *args, **options):
        if not options["move"]:
            raise CommandError("give at least one --move TRAY SOURCE TARGET")
        moves = [TidyMove(*m) for m in options["move"]]
        try:
            created = create_tidy_workflow(origin=options["origin"], moves=moves)
        except CreationRefused as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(self.style.SUCCESS(
            f"workflow {created.workflow_id} ({created.origin}) created: {len(created.step_ids)} step(s), "
            f"job {created.first_job_id} dispatched, {len(created.locked_spaces)} space(s) locked"))
        if created.vehicles_available is not None:
            self.stdout.write(f"  WCS reported {created.vehicles_available} free vehicle(s)")
        for no, (step_id, mv) in enumerate(zip(created.step_ids, moves, strict=True), start=1):
            self.stdout.write(f"  step {no} (id {step_id}): tray {mv.tray_code} {mv.source} -> {mv.target}")
