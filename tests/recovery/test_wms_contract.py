"""The shared contract check (docs/architecture.md §3) against the database `wms_schema` builds."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from console.replay.processes import database_url

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

CHECK = Path(__file__).resolve().parents[3] / "shared" / "checks" / "wms_contract.py"


@pytest.mark.skipif(not CHECK.exists(), reason=f"contract check not found at {CHECK}")
def test_the_wms_schema_passes_the_shared_contract_check(transactional_db):
    url = database_url("tidy-contract-check")
    result = subprocess.run([sys.executable, str(CHECK)], env={**os.environ, "DATABASE_URL": url},
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1].endswith(" 0 failed")
