"""The architecture contract in pyproject.toml ([tool.importlinter]): the recovery core never
imports the console, and the layers inside the core point one way. A broken contract fails the
suite with lint-imports' own report, which names each offending import and its line."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def test_the_import_contracts_hold():
    assert LINT_IMPORTS.exists(), f"{LINT_IMPORTS} is missing: install the dev extra (import-linter)"
    result = subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                            timeout=300)
    report = result.stdout + result.stderr
    assert result.returncode == 0, report
    assert "0 broken" in report, report
