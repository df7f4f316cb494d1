"""`manage.py cluster_status`: the qclusters seen through the shared database cache."""

import io
import re
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone
from django_q.brokers import get_broker
from django_q.signing import SignedPackage
from django_q.status import Stat, Status

from recovery.models import RecoveryCycle
from recovery.runtime.retention import ensure_retention_schedule

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")


def test_it_lists_a_cluster_another_process_reported(transactional_db):
    # What a qcluster's monitor writes every few seconds, written here the same way.
    status = Status(pid=4242, cluster_id="cluster-on-another-machine")
    status.host, status.status, status.workers, status.tob = "node-2", "Idle", [1, 2], timezone.now()
    get_broker().set_stat(Stat.get_key(status.cluster_id), SignedPackage.dumps(status, True), 30)
    ensure_retention_schedule()
    RecoveryCycle.objects.create(started_at=timezone.now() - timedelta(seconds=5),
                                 finished_at=timezone.now() - timedelta(seconds=4), outcome="SUCCEEDED")
    out = io.StringIO()
    call_command("cluster_status", stdout=out)
    text = out.getvalue()
    assert "clusters: 1" in text
    assert "cluster-on-another-machine  host node-2  Idle  workers 2" in text
    assert "tidy-journal-retention  recovery.retention.journal_retention_run" in text
    assert re.search(r"recovery: last success [4-9] s ago\n", text) and "STALE" not in text
