"""Shared start-up for benchmarks: a private embedded database in /tmp unless DATABASE_URL is set."""

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def django_on_private_database(name: str) -> None:
    sys.path.insert(0, str(ROOT))
    if not os.environ.get("DATABASE_URL"):
        os.environ.pop("EMBEDDED_DATABASE_URL", None)
        os.environ["EMBEDDED_DB_DIR"] = os.path.join(tempfile.gettempdir(), f"tidy-bench-{name}")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)
    call_command("wms_schema", verbosity=0)


def stop_private_database() -> None:
    from django.conf import settings

    if settings.EMBEDDED_DATABASE:
        from console import devdb

        devdb.stop(settings.EMBEDDED_DB_DIR)


def postmaster_process(data_dir):
    """The PostgreSQL postmaster of `data_dir` (its backends are its children) as a psutil
    Process, or None without psutil or a running server."""
    try:
        import psutil
    except ImportError:
        return None
    pid_file = Path(data_dir) / "postmaster.pid"
    return psutil.Process(int(pid_file.read_text().split()[0])) if pid_file.exists() else None


def tree_cpu_seconds(proc) -> float:
    """CPU seconds of a psutil Process and its children (0.0 for None); children that end while
    being read are skipped."""
    if proc is None:
        return 0.0
    import psutil

    total = 0.0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total
