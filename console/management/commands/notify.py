"""`manage.py notify --once`: one notification run (evaluate, then deliver what is due) exactly
as the `tidy-notifications` schedule runs it in the qcluster, for operations and tests
(docs/user-guide.md "Notifications"). It exits non-zero when the run itself failed (the database
unreachable, the evaluation raising); a delivery that failed is recorded and retried like any
other and does not make the run fail."""

import logging

from django.core.management.base import BaseCommand, CommandError

from console.notifications.tasks import run_notifications

log = logging.getLogger(__name__)


class Command(BaseCommand):
    help = "Evaluate and deliver notifications once, as the schedule does (--once)."

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true",
                            help="run one evaluation and one delivery run, then exit (the schedule does this "
                                 "every minute)")

    def handle(self, *args, **options):
        if not options["once"]:
            raise CommandError("say --once: the schedule runs notifications every minute; this runs them once")
        try:
            result = run_notifications()
        except Exception as exc:  # the run itself failed: say what, exit non-zero
            log.exception("notification run failed")
            raise CommandError(f"notification run failed: {type(exc).__name__}: {exc}") from exc
        summary = "  ".join(f"{key} {value}" for key, value in result.items())
        self.stdout.write(f"notifications: {summary}")
