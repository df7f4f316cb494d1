"""The classification streams the active set from an ordinary statement a chunk at a time: rows
across chunk boundaries are read in full and in order, an empty set yields nothing, and a reader
that stops early leaves its connection idle and usable (the query cancelled, the transaction
rolled back)."""

import pytest
from django.db import connection

from recovery.demo.warehouse import EXPECTED
from recovery.engine import evidence as evidence_module
from recovery.engine.evidence import ClassificationEvidence, evidence_for_workflow, stream_classification


def _active_ids() -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT workflow_id FROM alg.tidy_workflow WHERE status = 'ACTIVE' ORDER BY workflow_id")
        return [row[0] for row in cursor.fetchall()]


def test_rows_across_chunks_are_read_whole_and_in_order(wms, monkeypatch):
    for kind in EXPECTED:
        wms.build(kind)
    monkeypatch.setattr(evidence_module, "_STREAM_CHUNK", 2)
    streamed = list(stream_classification())
    assert len(streamed) > 2 * 2  # more than two chunks
    assert [e.workflow_id for e in streamed] == _active_ids()
    for evidence in streamed:
        assert evidence == ClassificationEvidence.of(evidence_for_workflow(evidence.workflow_id)), evidence.workflow_id


@pytest.mark.usefixtures("committed_db")
def test_an_empty_active_set_yields_nothing(wms):
    assert list(stream_classification()) == []
    assert not connection.in_atomic_block


@pytest.mark.usefixtures("committed_db")
def test_a_reader_stopping_early_leaves_the_connection_usable(wms, monkeypatch):
    for kind in EXPECTED:
        wms.build(kind)
    monkeypatch.setattr(evidence_module, "_STREAM_CHUNK", 2)
    rows = stream_classification()
    first = next(rows)
    assert connection.in_atomic_block
    rows.close()
    assert not connection.in_atomic_block
    assert first.workflow_id == _active_ids()[0]
    assert [e.workflow_id for e in stream_classification()] == _active_ids()
