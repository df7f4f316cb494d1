"""/recovery/processes/ and `manage.py cluster_status`: every qcluster seen in the last 10 minutes
(host, pid, started, last heartbeat) through the heartbeats recovery's processes write, the shards
each holds now and each shard's last cycle; for operators and shift leads; a live fragment."""

import io
import os
import socket
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from console.readers.processes import cluster_status
from recovery.engine.cycle import worker_name
from recovery.models import ProcessHeartbeat, RecoveryCycle
from recovery.runtime.processes import Heartbeat, beat
from recovery.runtime.tasks import cluster_key, run_recovery_runner, run_startup_cycle

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

URL = "/recovery/processes/"


def heartbeat(worker: str, cluster: str, host: str, pid: int, *, started_ago: int, seen_ago: int, shards=(),
              shard_count: int = 2) -> ProcessHeartbeat:
    now = timezone.now()
    return ProcessHeartbeat.objects.create(worker=worker, cluster=cluster, host=host, cluster_pid=pid,
                                           started_at=now - timedelta(seconds=started_ago),
                                           last_seen_at=now - timedelta(seconds=seen_ago), shards=list(shards),
                                           shard_count=shard_count)


def cycle(shard, *, ago: int, worker: str, outcome: str = "SUCCEEDED") -> RecoveryCycle:
    now = timezone.now()
    return RecoveryCycle.objects.create(started_at=now - timedelta(seconds=ago),
                                        finished_at=now - timedelta(seconds=ago - 1), outcome=outcome,
                                        worker=worker, shard=shard, shard_count=2, duration_ms=120)


@pytest.fixture
def two_nodes(transactional_db, settings):
    settings.RECOVERY_SHARDS = 2
    heartbeat("node-1:101", "node-1:cluster-100", "node-1", 100, started_ago=3600, seen_ago=4, shards=[0])
    heartbeat("node-1:102", "node-1:cluster-100", "node-1", 100, started_ago=3000, seen_ago=200)  # a past runner
    heartbeat("node-2:201", "node-2:cluster-200", "node-2", 200, started_ago=1800, seen_ago=6, shards=[1])
    heartbeat("node-3:301", "node-3:cluster-300", "node-3", 300, started_ago=7200, seen_ago=540, shards=[0, 1])
    heartbeat("node-4:401", "node-4:cluster-400", "node-4", 400, started_ago=9000, seen_ago=900)  # gone
    cycle(0, ago=30, worker="node-1:101", outcome="FAILED")
    cycle(0, ago=5, worker="node-1:101")
    cycle(1, ago=8, worker="node-2:201")
    cycle(None, ago=4000, worker="node-3:cluster-300")


def test_it_lists_each_cluster_seen_in_ten_minutes_its_shards_and_each_shards_last_cycle(two_nodes):
    status = cluster_status()
    assert [(c.host, c.pid, c.shards, c.workers) for c in status.clusters] == [
        ("node-1", 100, (0,), ("node-1:101", "node-1:102")),
        ("node-2", 200, (1,), ("node-2:201",)),
        ("node-3", 300, (), ("node-3:301",)),  # seen 9 minutes ago: holds nothing now
    ]
    node1 = status.clusters[0]
    assert timezone.now() - node1.started_at >= timedelta(seconds=3600)
    assert timedelta(seconds=3) <= timezone.now() - node1.last_heartbeat < timedelta(seconds=10)
    assert [(s.shard, s.held_by, s.outcome, s.worker) for s in status.shards] == [
        (0, "node-1:cluster-100", "SUCCEEDED", "node-1:101"), (1, "node-2:cluster-200", "SUCCEEDED", "node-2:201")]
    assert status.unheld == ()


def test_a_shard_nobody_holds_is_named(two_nodes):
    ProcessHeartbeat.objects.filter(worker="node-2:201").update(last_seen_at=timezone.now() - timedelta(minutes=3))
    status = cluster_status()
    assert status.unheld == (1,)
    assert [s.held_by for s in status.shards] == ["node-1:cluster-100", None]


def test_cluster_status_prints_the_same(two_nodes):
    out = io.StringIO()
    call_command("cluster_status", stdout=out)
    text = out.getvalue()
    assert "recovery processes seen in the last 10 min: 3 cluster(s)" in text
    assert "node-1:cluster-100  host node-1  pid 100  started " in text and "shards 0\n" in text
    assert "  shard 0  held by node-1:cluster-100  last cycle #" in text
    assert "  shard 1  held by node-2:cluster-200  last cycle #" in text and "node-4" not in text


@pytest.mark.parametrize("who", ["operator", "shiftlead"])
def test_operators_and_shift_leads_see_the_page(two_nodes, client, personas, who):
    client.force_login(personas[who])
    html = client.get(URL).content.decode()
    assert 'id="clusters"' in html and "node-1" in html and "node-2" in html and "node-4" not in html
    assert 'id="shards"' in html and "node-2:cluster-200" in html
    assert 'href="/recovery/processes/"' in client.get("/recovery/").content.decode()  # offered on the recovery page


@pytest.mark.parametrize("who", ["supervisor", "norole"])
def test_other_roles_are_refused_and_not_offered_it(two_nodes, client, personas, who):
    client.force_login(personas[who])
    assert client.get(URL).status_code == 403
    if who == "supervisor":
        assert 'href="/recovery/processes/"' not in client.get("/recovery/").content.decode()


def test_anonymous_is_sent_to_sign_in_and_post_is_refused(two_nodes, client, personas):
    assert client.get(URL).status_code == 302
    client.force_login(personas["operator"])
    assert client.post(URL).status_code == 405


def test_htmx_refresh_gets_the_fragment_and_the_queries_do_not_grow_with_rows(two_nodes, client, personas):
    client.force_login(personas["operator"])
    html = client.get(URL, headers={"HX-Request": "true"}).content.decode()
    assert html.lstrip().startswith('<div id="processes-live"') and "<html" not in html
    with CaptureQueriesContext(connection) as few:
        client.get(URL, headers={"HX-Request": "true"})
    for n in range(20):
        heartbeat(f"node-9:{n}", f"node-9:cluster-{n}", "node-9", 900 + n, started_ago=60, seen_ago=5)
        cycle(n % 2, ago=100 + n, worker=f"node-9:{n}")
    with CaptureQueriesContext(connection) as many:
        client.get(URL, headers={"HX-Request": "true"})
    assert len(many.captured_queries) == len(few.captured_queries)


def test_the_page_speaks_chinese(two_nodes, client, personas):
    client.force_login(personas["shiftlead"])
    html = client.get(URL, headers={"Accept-Language": "zh-Hans"}).content.decode()
    assert "恢复进程" in html and "最后心跳" in html


def test_a_runner_and_the_start_up_cycle_write_their_heartbeat(transactional_db, settings):
    settings.RECOVERY_SHARDS = 2
    assert run_startup_cycle() is True
    (row,) = ProcessHeartbeat.objects.all()
    assert (row.worker, row.cluster, row.host, row.cluster_pid, row.shards) == (
        worker_name(), cluster_key(), socket.gethostname(), os.getppid(), [])
    run_recovery_runner(seconds=0.3, interval=0.1, shards=2)
    row = ProcessHeartbeat.objects.get()
    assert row.shards == [0, 1] and row.shard_count == 2 and row.last_seen_at > row.started_at
    status = cluster_status()
    assert [(c.cluster, c.shards) for c in status.clusters] == [(cluster_key(), (0, 1))]


def test_a_runner_beats_once_per_interval_unless_its_shards_change(transactional_db):
    pulse = Heartbeat(cluster="h:cluster-1", shard_count=2, every=3600)
    pulse([0])
    first = ProcessHeartbeat.objects.get().last_seen_at
    pulse([0])  # nothing new within the interval: no write
    assert ProcessHeartbeat.objects.get().last_seen_at == first
    pulse([0, 1])
    assert ProcessHeartbeat.objects.get().shards == [0, 1]
    ProcessHeartbeat.objects.all().delete()
    assert beat(cluster="h:cluster-x", shards=[], shard_count=1) is True
    assert ProcessHeartbeat.objects.get().cluster_pid == os.getppid()  # a key without a pid: the parent's
