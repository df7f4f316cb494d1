"""The cordons and silences lists are paged (PAGE_SIZE rows, keyset, next and previous links that
work with and without htmx), and creating cordons and silences is limited per person and hour
like notes (console.rate_limits): one more is answered 429 with Retry-After and nothing is stored."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from console.models import Silence
from console.readers import PAGE_SIZE
from console.roles import SHIFT_LEAD
from recovery.models import Cordon
from tests.console_personas import make_user

SILENCES = "/notifications/silences/"


def ids_in(html: str, table: str, prefix: str) -> list[int]:
    body = html.split(f'id="{table}"', 1)[1].split("</table>", 1)[0]
    return [int(n) for n in re.findall(prefix, body)]


def link(html: str, rel: str) -> str | None:
    found = re.search(rf'<a rel="{rel}" href="([^"]+)" hx-get="([^"]+)"', html)
    if found is None:
        return None
    assert found.group(1) == found.group(2)  # the same position with and without htmx
    return found.group(1).replace("&amp;", "&")


def walk(client, start: str, table: str, prefix: str, **headers) -> tuple[list[list[int]], list[list[int]]]:
    """Every page forwards from `start` by the next links, then back by the previous links."""
    forwards, url = [], start
    while url:
        response = client.get(url, headers=headers)
        assert response.status_code == 200
        html = response.content.decode()
        forwards.append(ids_in(html, table, prefix))
        url = link(html, "next")
        last = html
    backwards, url = [], link(last, "prev")
    while url:
        html = client.get(url, headers=headers).content.decode()
        backwards.append(ids_in(html, table, prefix))
        url = link(html, "prev")
    return forwards, backwards


@pytest.mark.parametrize("htmx", [False, True])
def test_the_cordons_in_force_are_paged(wms, personas, client, htmx):
    n = 2 * PAGE_SIZE + 7
    Cordon.objects.bulk_create([Cordon(scope="AISLE", place=f"A{i:02d}", reason="inspection", created_by="lena")
                                for i in range(n)])  # one created_at for all: the id orders them
    everyone = list(Cordon.objects.order_by("id").values_list("id", flat=True))
    client.force_login(personas["supervisor"])
    headers = {"HX-Request": "true", "HX-Target": "cordons-live"} if htmx else {}
    first = client.get("/cordons/", headers=headers).content.decode()
    assert f"({n})" in first
    forwards, backwards = walk(client, "/cordons/", "cordons-in-force", r'<td data-label="#">(\d+)</td>', **headers)
    assert [len(p) for p in forwards] == [PAGE_SIZE, PAGE_SIZE, 7]
    assert sum(forwards, []) == everyone
    assert backwards == forwards[-2::-1]
    assert client.get("/cordons/", {"after": "²-1"}).status_code == 400


@pytest.mark.parametrize("htmx", [False, True])
def test_the_current_silences_are_paged(notify_db, personas, client, htmx):
    lead = personas["shiftlead"]
    now = timezone.now()
    n = 2 * PAGE_SIZE + 3
    Silence.objects.bulk_create([Silence(aisle="A01", starts_at=now + timedelta(hours=1),
                                         ends_at=now + timedelta(hours=2 + i % 3), comment="planned",
                                         created_by=lead, username=lead.username) for i in range(n)])
    soonest_end_first = list(Silence.objects.order_by("ends_at", "id").values_list("id", flat=True))
    client.force_login(personas["supervisor"])
    headers = {"HX-Request": "true", "HX-Target": "silences-list"} if htmx else {}
    forwards, backwards = walk(client, SILENCES, "silences-current", r'<tr id="silence-(\d+)">', **headers)
    assert [len(p) for p in forwards] == [PAGE_SIZE, PAGE_SIZE, 3]
    assert sum(forwards, []) == soonest_end_first
    assert backwards == forwards[-2::-1]
    assert client.get(SILENCES, {"before": "1-²"}).status_code == 400


def test_a_shift_lead_past_the_hourly_cordon_limit_gets_429_and_nothing_is_stored(wms, personas, client, settings):
    settings.CORDONS_PER_USER_PER_HOUR = 2
    spaces = [wms.move().source for _ in range(4)]
    client.force_login(personas["shiftlead"])
    for space in spaces[:2]:
        assert client.post("/cordons/new/", {"scope": "SPACE", "place": space, "reason": "r"}).status_code == 303
    refused = client.post("/cordons/new/", {"scope": "SPACE", "place": spaces[2], "reason": "one too many"})
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 3600
    html = refused.content.decode()
    assert "You have created 2 cordons in the last hour, as many as one person may." in html
    assert "one too many" in html  # the form keeps what was typed
    assert Cordon.objects.count() == 2
    # Another shift lead is not affected.
    client.force_login(make_user("mira", SHIFT_LEAD))
    assert client.post("/cordons/new/", {"scope": "SPACE", "place": spaces[3], "reason": "r"}).status_code == 303
    assert Cordon.objects.count() == 3


def test_a_shift_lead_past_the_hourly_silence_limit_gets_429_and_nothing_is_stored(notify_db, personas, client,
                                                                                     settings):
    settings.SILENCES_PER_USER_PER_HOUR = 2
    start = timezone.localtime(timezone.now() + timedelta(minutes=5))
    form = {"event": "", "reason": "", "aisle": "A01", "starts_at": start.strftime("%Y-%m-%dT%H:%M"),
            "ends_at": (start + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M"), "comment": "maintenance"}
    client.force_login(personas["shiftlead"])
    for _ in range(2):
        assert client.post(SILENCES, form).status_code == 303
    refused = client.post(SILENCES, {**form, "comment": "one too many"})
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 3600
    html = refused.content.decode()
    assert "You have created 2 silences in the last hour, as many as one person may." in html
    assert "one too many" in html
    assert Silence.objects.count() == 2
