"""Hypothesis sends generated hostile requests to every endpoint and form: the WCS API, the paused
list (search included), the locks page, the repair audit filters and CSV, the batch selection,
the proposals list and the repair forms, signed in as an operator. For every request:

- never a 5xx;
- a refused request (4xx) leaves the whole database as it was: every row of every WMS and
  console table is checksummed before and after. The one named exception is the callback
  receipts table, which keeps one row per authenticated refused callback (and counts 401s in
  its per-minute row).

Hostile means: NUL bytes, lone surrogates, control characters, non-ASCII digits, numbers beyond
bigint, deep or huge JSON, wrong types, bytes that are not UTF-8.
"""

import json
import urllib.parse

import pytest
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from console.input_checks import BIGINT_MAX, MAX_JSON_BODY_BYTES
from recovery.engine.cycle import run_cycle
from recovery.engine.evidence import evidence_for_workflow
from recovery.engine.wms_sql import WMS_TABLES
from recovery.models import tidy_job_id
from tests.repair_support import make_user
from tests.wcs_helpers import TOKEN, create

RECEIPTS = "recovery_callbackreceipt"
# What a refused callback may change besides nothing: its receipt, and the counts (and the site's
# labels) of the unknown fields it carried, which a refused request is counted in too.
CALLBACK_RECORDS = frozenset({RECEIPTS, "recovery_callbackfieldtotal", "recovery_callbackfieldlabel"})
FUZZ = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.data_too_large])

# --- checksums of the whole database ----------------------------------------------------------------


def _tables() -> list[str]:
    return sorted(set(WMS_TABLES) | set(connection.introspection.django_table_names(only_existing=True)))


def checksums() -> dict[str, tuple[int, str]]:
    """{table: (rows, md5 of every row's text in order)} for every WMS and console table."""
    out = {}
    with connection.cursor() as cursor:
        for table in _tables():
            schema, _, name = table.rpartition(".")
            quoted = f'"{schema}"."{name}"' if schema else f'"{name}"'
            cursor.execute(f"SELECT count(*), md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) "
                           f"FROM {quoted} AS t")
            out[table] = tuple(cursor.fetchone())
    return out


def changed_tables(before: dict, after: dict) -> dict:
    return {t: (before[t], after[t]) for t in before if before[t] != after[t]}


# --- hostile values ------------------------------------------------------------------------------------

WEIRD_DIGITS = "0123456789²³¹١٢٣۴߁०९٠-"
KNOWN_HOSTILE = [
    "0", "-1", str(BIGINT_MAX), str(BIGINT_MAX + 1), "9" * 20, "253402300800000000-1", "1-1", "²", "²-1", "١٢٣",
    "\x00", "1\x00", "\ud800", "a\udfffb", "\x1b[31m", "\x7f", "\x85", "=HYPERLINK(\"http://x\")", " ", "\u2028",
    "9" * 5000]
hostile_text = st.one_of(
    st.sampled_from(KNOWN_HOSTILE),
    st.text(max_size=30),
    st.text(alphabet=st.characters(codec=None, categories=["Cc", "Cs", "Co", "Zl", "Zp", "Cf"]), min_size=1,
            max_size=10),
    st.text(alphabet=WEIRD_DIGITS, min_size=1, max_size=25),
    st.integers(min_value=-(10**40), max_value=10**40).map(str),
    st.integers(min_value=90, max_value=2000).map(lambda n: "9" * n),
)
hostile_bytes = st.one_of(hostile_text.map(lambda s: s.encode("utf-8", "surrogatepass")), st.binary(max_size=30))


def _query(pairs: list[tuple[str, bytes]]) -> str:
    return "&".join(f"{urllib.parse.quote(name)}={urllib.parse.quote_from_bytes(value)}" for name, value in pairs)


def query_for(names: list[str]):
    return st.lists(st.tuples(st.sampled_from(names), hostile_bytes), min_size=1, max_size=4).map(_query)


def form_for(names: list[str], fixed: dict | None = None):
    """A urlencoded POST body: hostile values for some of `names`, `fixed` values for the rest."""
    def build(pairs):
        given_names = {n for n, _ in pairs}
        rest = [(n, v.encode()) for n, v in (fixed or {}).items() if n not in given_names]
        return _query(pairs + rest)
    return st.lists(st.tuples(st.sampled_from(names), hostile_bytes), min_size=1, max_size=4).map(build)


# --- JSON bodies ---------------------------------------------------------------------------------------

json_scalars = st.one_of(st.none(), st.booleans(), st.floats(allow_nan=False, allow_infinity=False),
                         st.integers(min_value=-(10**30), max_value=10**30), hostile_text)
json_values = st.recursive(json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(hostile_text, inner, max_size=3)), max_leaves=8)


def _as_body(data) -> bytes:
    return json.dumps(data).encode()  # ensure_ascii: a lone surrogate travels as "\ud800"


def api_bodies(job_ids: list[str]):
    field = st.one_of(json_values, st.sampled_from(job_ids))
    shaped = st.fixed_dictionaries({}, optional={
        "job_id": field, "stage": st.one_of(st.sampled_from(["MOVE_FINISHED", "OUTBOUND_FINISHED"]), json_values),
        "status": st.one_of(st.sampled_from([2, 3]), json_values), "event_id": json_values,
        "extra": json_values}).map(_as_body)
    return st.one_of(
        shaped,
        st.binary(max_size=60),
        hostile_text.map(lambda s: s.encode("utf-8", "surrogatepass")),
        st.integers(min_value=30, max_value=6000).map(lambda d: b"[" * d + b"]" * d),
        st.integers(min_value=30, max_value=6000).map(lambda d: b'{"a":' * d + b"1" + b"}" * d),
        st.sampled_from([b"\x00", b"NaN", b'{"job_id": NaN}', b'{"job_id": "TDY-1-1", "status": Infinity}',
                         b'{"job_id": "TDY-1-1", "stage": "MOVE_FINISHED", "event_id": "\\u0000"}',
                         b'{"job_id": "TDY-1-1", "stage": "MOVE_FINISHED", "event_id": "\\ud800"}',
                         b'{"job_id": "TDY-1-1\\u0000", "stage": "MOVE_FINISHED"}',
                         b'{"job_id": "TDY-1-1", "status": 1' + b"0" * 5000 + b"}",
                         b'{"job_id": "TDY-1-1", "stage": "MOVE_FINISHED", "event_id": 1' + b"0" * 30 + b"}",
                         b'{"job_id": "TDY-\xd9\xa1-1", "stage": "MOVE_FINISHED"}',
                         b'{"job_id": "TDY-1-1", "stage": "MOVE_FINISHED"}' + b" " * MAX_JSON_BODY_BYTES]),
    )


# --- the warehouse and the people ------------------------------------------------------------------------


@pytest.fixture
def floor(wms, audit_truncate_allowed, client):
    """A small warehouse (paused and active workflows, a callback receipt, a cycle) and an
    operator signed in."""
    wms.build("job_missing")
    wms.build("finish_not_terminal")
    run_cycle()
    created, _ = create(wms, 2)
    paused = list(connection.cursor().execute(
        "SELECT workflow_id FROM alg.tidy_workflow WHERE status = 'PAUSED_RECOVERY' ORDER BY 1").fetchall())
    client.force_login(make_user("fuzz-operator", "operator"))
    return {"client": client, "paused": [p[0] for p in paused], "active_job": created.first_job_id,
            "jobs": [created.first_job_id, tidy_job_id(created.workflow_id, created.step_ids[1]), "TDY-1-1"]}


def _assert_no_server_error(response, what: str) -> None:
    assert response.status_code < 500, f"{what} -> {response.status_code}: {response.content[:500]!r}"


def _assert_refusal_changed_nothing(response, before: dict, what: str, *, allowed: frozenset = frozenset()):
    if 400 <= response.status_code < 500:
        changed = changed_tables(before, checksums())
        assert set(changed) <= allowed, f"{what} -> {response.status_code} changed {changed}"


# --- the WCS API -----------------------------------------------------------------------------------------


def _check_callback(client, endpoint: str, body: bytes, *, content_type="application/json",
                    authenticated=True) -> None:
    before = checksums()
    headers = {"HTTP_AUTHORIZATION": f"Bearer {TOKEN}"} if authenticated else {}
    response = client.post(f"/api/wcs/{endpoint}", data=body, content_type=content_type, **headers)
    what = f"POST {endpoint} {body[:200]!r} ({content_type})"
    _assert_no_server_error(response, what)
    _assert_refusal_changed_nothing(response, before, what, allowed=CALLBACK_RECORDS)
    if 400 <= response.status_code < 500:
        added = checksums()[RECEIPTS][0] - before[RECEIPTS][0]
        assert added <= 1, f"{what}: {added} receipts for one request"
        if authenticated:
            assert added == 1, f"{what}: an authenticated refusal was not recorded"
        payload = response.json()
        assert payload.get("error") or payload.get("outcome"), payload
        if response.status_code == 400:
            assert "field" in payload and payload["message"], payload


def _json_known(value: str):
    """A known hostile value as JSON: the text itself, and as a number where it is one."""
    yield value
    digits = value.removeprefix("-")
    if digits.isascii() and digits.isdigit() and len(digits) < 4000:
        yield int(value)


@pytest.mark.parametrize("endpoint", ["job-finish", "job-status"])
@pytest.mark.slow
def test_every_known_hostile_value_in_every_callback_field_is_refused_without_a_trace(floor, endpoint):
    client = floor["client"]
    valid = {"job_id": floor["active_job"], "stage": "MOVE_FINISHED", "event_id": "sweep"} if endpoint == "job-finish" \
        else {"job_id": floor["active_job"], "status": 3, "event_id": "sweep"}
    for field in [*valid, "extra"]:
        for raw in KNOWN_HOSTILE:
            for value in _json_known(raw):
                _check_callback(client, endpoint, _as_body({**valid, field: value}))
    for raw in (b"\x00", b"", b"[]", b"null", b"[" * 5000 + b"]" * 5000, b'{"a":' * 5000 + b"1" + b"}" * 5000,
                b'{"job_id": "TDY-1-1", "stage": "MOVE_FINISHED", "event_id": "\\ud800"}',
                b'{"job_id": "TDY-1-1", "stage": "MOVE_FINISHED", "event_id": "\\u0000"}',
                b'{"job_id": "TDY-1-1", "status": NaN}', b'{"job_id": "TDY-1-1", "status": 1' + b"0" * 5000 + b"}",
                b"\xff\xfe", b'{"job_id": "x"}' + b" " * MAX_JSON_BODY_BYTES):
        _check_callback(client, endpoint, raw)
        _check_callback(client, endpoint, raw, authenticated=False)


@pytest.mark.parametrize("endpoint", ["job-finish", "job-status"])
@pytest.mark.slow
def test_hostile_callbacks_never_get_a_5xx_and_a_refusal_changes_nothing_but_its_receipt(floor, endpoint):
    client = floor["client"]
    cases = {"n": 0}

    @FUZZ
    @given(body=api_bodies(floor["jobs"]), content_type=st.sampled_from(
        ["application/json", "application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded"]),
        authenticated=st.booleans())
    def run(body, content_type, authenticated):
        cases["n"] += 1
        _check_callback(client, endpoint, body, content_type=content_type, authenticated=authenticated)

    run()
    assert cases["n"] >= 60


# --- console pages (GET) ----------------------------------------------------------------------------------

CONSOLE_QUERIES = {
    "/paused/": ["reason", "origin", "age", "q", "sort", "after", "before"],
    "/locks/": ["q", "after"],
}
REPAIR_QUERIES = {
    "/repair/audit/": ["user", "action", "reason_code", "outcome", "workflow", "batch", "since", "until", "before"],
    "/repair/audit.csv": ["user", "action", "reason_code", "outcome", "workflow", "batch", "since", "until"],
    "/repair/batch/": ["reason", "origin", "age", "q"],
    "/repair/proposals/": ["after", "before", "page"],
}


def _sweep_pages(client, pages: dict) -> int:
    """Every known hostile value in every parameter of every page, one at a time."""
    before = checksums()
    n = 0
    for path, names in sorted(pages.items()):
        for name in names:
            for value in KNOWN_HOSTILE:
                query = _query([(name, value.encode("utf-8", "surrogatepass"))])
                response = client.get(path, QUERY_STRING=query)
                if hasattr(response, "streaming_content"):
                    b"".join(response.streaming_content)
                _assert_no_server_error(response, f"GET {path}?{query}")
                n += 1
    assert changed_tables(before, checksums()) == {}, f"GET requests to {sorted(pages)} changed the database"
    return n


def _fuzz_pages(floor, pages: dict) -> int:
    client = floor["client"]
    cases = {"n": _sweep_pages(client, pages)}
    paths = sorted(pages)

    @FUZZ
    @given(data=st.data())
    def run(data):
        path = data.draw(st.sampled_from(paths), label="path")
        query = data.draw(query_for(pages[path]), label="query")
        cases["n"] += 1
        before = checksums()
        response = client.get(path, QUERY_STRING=query)
        if hasattr(response, "streaming_content"):
            b"".join(response.streaming_content)
        what = f"GET {path}?{query}"
        _assert_no_server_error(response, what)
        assert changed_tables(before, checksums()) == {}, f"{what} changed the database"

    run()
    return cases["n"]


@pytest.mark.slow
def test_hostile_console_queries_never_get_a_5xx_and_change_nothing(floor):
    assert _fuzz_pages(floor, CONSOLE_QUERIES) >= 60 + 9 * len(KNOWN_HOSTILE)


@pytest.mark.slow
def test_hostile_repair_queries_never_get_a_5xx_and_change_nothing(floor):
    _fuzz_pages(floor, REPAIR_QUERIES)


# --- repair forms (POST, as an operator) -----------------------------------------------------------------


def test_hostile_repair_forms_never_get_a_5xx_and_a_refusal_changes_nothing_but_its_audit(floor):
    client = floor["client"]
    workflow_id = floor["paused"][0]
    fingerprint = evidence_for_workflow(workflow_id).fingerprint
    reason = {"reason_code": "JOB_LOST_AT_RESTART", "reason_text": "The job was lost when the WMS restarted.",
              "fingerprint": fingerprint}
    forms = {
        f"/repair/workflow/{workflow_id}/reissue/preview": (["reason_code", "reason_text"], reason),
        f"/repair/workflow/{workflow_id}/reissue/apply": (["reason_code", "reason_text", "fingerprint",
                                                           "idempotency_key"], reason),
        f"/repair/workflow/{workflow_id}/reconcile-source/preview": (
            ["reason_code", "reason_text", "tray_code", "space_code"], reason),
        "/repair/batch/preview": (["workflow", "all_matching", "reason", "origin", "age", "q"], {}),
        "/repair/batch/apply": (["workflow", "reason_code", "reason_text", "idempotency_key"],
                                {"workflow": f"{workflow_id}:{fingerprint}", "reason_code": "WMS_RECORDS_FIXED",
                                 "reason_text": "The records were fixed on the floor."}),
    }
    paths = sorted(forms)

    @FUZZ
    @given(data=st.data())
    def run(data):
        path = data.draw(st.sampled_from(paths), label="path")
        names, fixed = forms[path]
        body = data.draw(form_for(names, fixed), label="body")
        before = checksums()
        response = client.post(path, data=body, content_type="application/x-www-form-urlencoded")
        what = f"POST {path} {body[:300]}"
        _assert_no_server_error(response, what)
        _assert_refusal_changed_nothing(response, before, what, allowed=frozenset({"console_repairaudit"}))

    run()


def test_hostile_repair_input_is_refused_naming_the_field_before_anything_is_written(floor):
    """A well-formed refusal is audited; hostile input is refused before that: not even the audit
    gains a row, and the 400 names the field."""
    client = floor["client"]
    workflow_id = floor["paused"][0]
    fingerprint = evidence_for_workflow(workflow_id).fingerprint
    reason = {"reason_code": "JOB_LOST_AT_RESTART", "reason_text": "The job was lost when the WMS restarted.",
              "fingerprint": fingerprint, "idempotency_key": "k" * 32}
    batch = {"workflow": f"{workflow_id}:{fingerprint}", "reason_code": "WMS_RECORDS_FIXED",
             "reason_text": "The records were fixed on the floor.", "idempotency_key": "b" * 32}
    reissue, reconcile = (f"/repair/workflow/{workflow_id}/{slug}" for slug in ("reissue", "reconcile-source"))
    cases = [
        (f"{reissue}/preview", {**reason, "reason_text": "The job was lost\x00 at restart."}, "reason_text"),
        (f"{reissue}/preview", {**reason, "reason_code": "JOB_LOST\x1b[31m"}, "reason_code"),
        (f"{reissue}/apply", {**reason, "reason_text": "The job was lost \x07 at the restart."}, "reason_text"),
        (f"{reissue}/apply", {**reason, "fingerprint": "\x85" + fingerprint}, "fingerprint"),
        (f"{reconcile}/preview", {**reason, "tray_code": "T\x00", "space_code": "S1"}, "tray_code"),
        (f"{reconcile}/apply", {**reason, "tray_code": "T1", "space_code": "S\x1b"}, "space_code"),
        ("/repair/batch/preview", {"workflow": "²"}, "workflow"),
        ("/repair/batch/preview", {"workflow": "9" * 20}, "workflow"),
        ("/repair/batch/preview", {"all_matching": "1", "q": "x\x00"}, "q"),
        ("/repair/batch/apply", {**batch, "workflow": "²:fp"}, "workflow"),
        ("/repair/batch/apply", {**batch, "workflow": "\x01:fp"}, "workflow"),
        ("/repair/batch/apply", {**batch, "reason_text": "The records were fixed\x00 on the floor."}, "reason_text"),
    ]
    before = checksums()
    for path, data, field in cases:
        response = client.post(path, data=_query([(k, v.encode("utf-8", "surrogatepass")) for k, v in data.items()]),
                               content_type="application/x-www-form-urlencoded")
        assert response.status_code == 400, (path, data, response.status_code)
        assert field in response.content.decode(), (path, data)
        assert changed_tables(before, checksums()) == {}, (path, data)
    for path, field in (("/repair/audit/?before=²", "before"), ("/repair/audit/?workflow=١٢٣", "workflow"),
                        ("/repair/audit.csv?batch=" + "9" * 20, "batch"), ("/repair/batch/?q=T%00", "NUL byte")):
        response = client.get(path)
        assert response.status_code == 400 and field in response.content.decode(), path
    big = "9" * 20
    for path in (f"/repair/workflow/{big}/", f"/repair/proposals/{big}/", f"/repair/audit/{big}/",
                 f"/repair/batch/{big}/"):
        assert client.get(path).status_code == 404, path
    assert client.post(f"/repair/workflow/{big}/reissue/apply", data=reason).status_code == 404
    assert changed_tables(before, checksums()) == {}
