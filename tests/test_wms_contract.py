"""The shared contract check (docs/architecture.md §3) against the database `wms_schema` builds."""

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
from django.db import connection

CHECK = Path(__file__).resolve().parents[2] / "shared" / "checks" / "wms_contract.py"


@pytest.mark.skipif(not CHECK.exists(), reason=f"contract check not found at {CHECK}")
def test_the_wms_schema_passes_the_shared_contract_check(transactional_db):
    s = connection.settings_dict
    auth = quote(s["USER"]) + (f":{quote(s['PASSWORD'])}" if s["PASSWORD"] else "")
    if s["HOST"].startswith("/"):
        url = f"postgresql://{auth}@/{s['NAME']}?host={s['HOST']}"
    else:
        url = f"postgresql://{auth}@{s['HOST']}:{s['PORT'] or 5432}/{s['NAME']}"
    result = subprocess.run([sys.executable, str(CHECK)], env={**os.environ, "DATABASE_URL": url},
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1].endswith(" 0 failed")
