from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from console import devdb


class Command(BaseCommand):
    help = "Start, stop or show the embedded PostgreSQL used when DATABASE_URL is not set."

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["start", "stop", "status", "url"])

    def handle(self, *args, action, **options):
        if not settings.EMBEDDED_DATABASE:
            raise CommandError("DATABASE_URL is set: the embedded database is not in use")
        data_dir = settings.EMBEDDED_DB_DIR
        if action == "stop":
            stopped = devdb.stop(data_dir)
            self.stdout.write(f"embedded database {'stopped' if stopped else 'was not running'} ({data_dir})")
        elif action == "status":
            running = devdb.is_running(data_dir)
            self.stdout.write(f"embedded database {'running' if running else 'stopped'} ({data_dir})")
        else:
            # Loading the settings already started it; print where it listens.
            self.stdout.write(settings.DATABASES["default"]["HOST"] if action == "url" else
                              f"embedded database running ({data_dir})")
