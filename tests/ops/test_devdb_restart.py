"""The embedded server through a crash and its restart (console/devdb.py), as the reliability
tests and the chaos run use it: the restarted server answers on the same URL, and `devdb.stop`
then stops it, leaving no postmaster behind (it asks pg_ctl, whichever postmaster the server
package remembers)."""

import time
from pathlib import Path

import psycopg

from console import devdb


def _postmasters(data_dir) -> list[int]:
    """The processes serving `data_dir`, read from /proc (no procps needed on a fresh machine)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().split(b"\0")
        except OSError:  # the process ended meanwhile
            continue
        if b"-D" in args and str(data_dir).encode() in args:
            found.append(int(cmdline.parent.name))
    return found


def test_a_server_restarted_after_a_crash_answers_on_its_url_and_stops(tmp_path):
    data_dir = tmp_path / "data"
    url = devdb.start(data_dir)
    try:
        devdb.crash_stop(data_dir)
        time.sleep(0.2)
        devdb.restart_after_crash(data_dir)
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
        assert _postmasters(data_dir), "the restarted postmaster is seen"
        assert devdb.stop(data_dir) is True
        assert _postmasters(data_dir) == []
        assert devdb.stop(data_dir) is False  # nothing left to stop
    finally:
        if _postmasters(data_dir):
            devdb.stop(data_dir)
