"""The WCS API contract (docs/wcs-api.openapi.json): served as is at /api/wcs/openapi.json, valid
OpenAPI 3, and honoured by the live endpoints under schemathesis with every check it offers."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import schemathesis
from django.conf import settings

from console.api.contract import CONTRACT
from tests.wcs_helpers import create

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")
MAX_EXAMPLES = 40  # per operation and phase: the run stays well under a minute


def test_the_served_document_is_the_file_and_valid_openapi_3(client):
    response = client.get("/api/wcs/openapi.json")  # no sign-in, no token
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.content == CONTRACT.read_bytes()
    document = json.loads(response.content)
    assert document["openapi"].startswith("3.")
    schema = schemathesis.openapi.from_dict(document)
    schema.validate()  # raises on any violation of the OpenAPI 3 meta-schema
    operations = sorted(op.ok().label for op in schema.get_all_operations())
    assert operations == ["POST /api/wcs/job-finish", "POST /api/wcs/job-status"]
    assert client.post("/api/wcs/openapi.json").status_code == 405


def test_the_contract_names_every_field_limit_and_answer():
    document = json.loads(CONTRACT.read_text())
    schemas = document["components"]["schemas"]
    assert schemas["JobId"]["pattern"] == "^TDY-[1-9][0-9]{0,17}-[1-9][0-9]{0,17}$"
    assert schemas["JobFinishRequest"]["properties"]["stage"]["enum"] == ["MOVE_FINISHED", "OUTBOUND_FINISHED"]
    assert schemas["JobStatusRequest"]["properties"]["status"]["enum"] == [2, 3]
    for path in ("/api/wcs/job-finish", "/api/wcs/job-status"):
        answers = document["paths"][path]["post"]["responses"]
        assert sorted(answers) == ["200", "400", "401", "404", "405", "409", "413", "415", "503"]
    assert document["components"]["securitySchemes"]["wcsBearer"] == {
        "type": "http", "scheme": "bearer", "description": document["components"]["securitySchemes"]["wcsBearer"][
            "description"]}


@pytest.mark.slow
def test_schemathesis_finds_nothing_against_the_live_endpoints(wms, live_server, tmp_path):
    for _ in range(3):  # jobs the fuzzer may hit: the contract's examples name TDY-1-1 and TDY-2-3
        create(wms, 2)
    report = tmp_path / "schemathesis.json"
    command = [
        str(SCHEMATHESIS), "run", f"{live_server.url}/api/wcs/openapi.json", "--url", live_server.url,
        "--checks", "all", "--mode", "all", "--phases", "examples,coverage,fuzzing,stateful",
        "--max-examples", str(MAX_EXAMPLES), "--seed", "20261201", "--workers", "1",
        "--header", f"Authorization: Bearer {settings.WCS_CALLBACK_TOKEN}",
        "--request-timeout", "10", "--suppress-health-check", "all",
        "--report", "json", "--report-json-path", str(report), "--no-color",
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    summary = json.loads(report.read_text())
    cases = summary["test_cases"]
    print(f"schemathesis: {cases['generated']} cases, {cases['with_failures']} with failures, "
          f"{summary['running_time']:.1f} s")
    assert summary["complete"] and cases["with_failures"] == 0 and cases["errored"] == 0
    assert summary["operations"]["tested"] == 2
    assert cases["generated"] >= 150, cases  # all phases ran, not a handful of examples
    for phase in ("examples", "coverage", "fuzzing"):
        assert summary["phases"][phase]["status"] == "success", summary["phases"]
