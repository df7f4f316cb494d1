"""The embedded server through a crash and its restart (console/devdb.py), as the reliability
tests and the chaos run use it: the restarted server answers on the same URL, and `devdb.stop`
then stops it, leaving no postmaster behind (it asks pg_ctl, whichever postmaster the server
package remembers)."""

import subprocess
import time

import psycopg

from console import devdb


def _postmasters(data_dir) -> str:
    return subprocess.run(["pgrep", "-f", f"-D {data_dir}"], capture_output=True, text=True).stdout.strip()


def test_a_server_restarted_after_a_crash_answers_on_its_url_and_stops(tmp_path):
    data_dir = tmp_path / "data"
    url = devdb.start(data_dir)
    try:
        devdb.crash_stop(data_dir)
        time.sleep(0.2)
        devdb.restart_after_crash(data_dir)
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
        assert devdb.stop(data_dir) is True
        assert _postmasters(data_dir) == ""
        assert devdb.stop(data_dir) is False  # nothing left to stop
    finally:
        if _postmasters(data_dir):
            devdb.stop(data_dir)
