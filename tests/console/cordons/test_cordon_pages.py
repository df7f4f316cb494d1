"""The cordons page (/cordons/): every console role reads the cordons; a shift lead cordons an aisle
or a space and lifts a cordon; other roles get 403 and nothing is written; bad input is a 400
naming the field; the list refreshes as a fragment; the rack map draws the cordoned spaces."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from recovery.engine.cordons import cordon_create
from recovery.engine.places import aisle_of
from recovery.models import Cordon, CordonLift

ADD = "/cordons/new/"


@pytest.fixture
def floor(wms, personas):
    return wms.move()


def cordon_rows() -> list[tuple]:
    return list(Cordon.objects.order_by("id").values_list("scope", "place", "reason", "created_by"))


@pytest.mark.parametrize("who", ["supervisor", "operator", "shiftlead"])
def test_every_console_role_reads_the_cordons(floor, client, personas, who):
    cordon_create(scope="SPACE", place=floor.source, reason="leaking sprinkler", ends_at=None, username="lena")
    client.force_login(personas[who])
    page = client.get(reverse("cordons")).content.decode()
    assert "leaking sprinkler" in page and floor.source in page
    assert ('action="/cordons/new/"' in page) is (who == "shiftlead")  # the form only where it can be used
    assert ("/lift/" in page) is (who == "shiftlead")


def test_anonymous_is_sent_to_sign_in_and_no_role_is_refused(floor, client, personas):
    assert client.get("/cordons/").status_code == 302
    assert client.post(ADD, {"scope": "SPACE", "place": floor.source, "reason": "r"}).status_code == 302
    client.force_login(personas["norole"])
    assert client.get("/cordons/").status_code == 403
    assert cordon_rows() == []


def test_a_shift_lead_cordons_an_aisle_with_an_end_and_it_is_listed(floor, client, personas):
    client.force_login(personas["shiftlead"])
    aisle = aisle_of(floor.source)
    ends = (timezone.localtime() + timedelta(hours=4)).strftime("%Y-%m-%dT%H:%M")
    response = client.post(ADD, {"scope": "AISLE", "place": f" {aisle} ", "reason": "Shuttle maintenance",
                                 "ends_at": ends})
    assert response.status_code == 303 and response["Location"] == "/cordons/"
    assert cordon_rows() == [("AISLE", aisle, "Shuttle maintenance", "shiftlead")]
    assert Cordon.objects.get().ends_at is not None
    page = client.get("/cordons/").content.decode()
    assert "Shuttle maintenance" in page and 'id="cordons-in-force"' in page


def test_an_aisle_or_a_cargo_space_given_alone_says_the_scope(floor, client, personas):
    client.force_login(personas["shiftlead"])
    aisle = aisle_of(floor.source)
    assert client.post(ADD, {"aisle": aisle, "reason": "Aisle lights out"}).status_code == 303
    assert client.post(ADD, {"cargo_space_id": floor.target, "reason": "Beam bent"}).status_code == 303
    assert cordon_rows() == [("AISLE", aisle, "Aisle lights out", "shiftlead"),
                             ("SPACE", floor.target, "Beam bent", "shiftlead")]
    response = client.post(ADD, {"aisle": aisle, "cargo_space_id": floor.target, "reason": "both"})
    assert response.status_code == 400 and "<code>scope</code>" in response.content.decode()


@pytest.mark.parametrize("who", ["supervisor", "operator"])
def test_only_a_shift_lead_cordons_or_lifts(floor, client, personas, who):
    c = cordon_create(scope="SPACE", place=floor.source, reason="r", ends_at=None, username="lena")
    client.force_login(personas[who])
    assert client.post(ADD, {"scope": "SPACE", "place": floor.target, "reason": "r"}).status_code == 403
    assert client.post(f"/cordons/{c.pk}/lift/").status_code == 403
    assert len(cordon_rows()) == 1 and CordonLift.objects.count() == 0


def test_get_is_refused_on_the_writes(floor, client, personas):
    client.force_login(personas["shiftlead"])
    assert client.get(ADD).status_code == 405
    assert client.get("/cordons/1/lift/").status_code == 405


def test_a_shift_lead_lifts_a_cordon_and_it_moves_to_the_history(floor, client, personas):
    c = cordon_create(scope="SPACE", place=floor.source, reason="inspection", ends_at=None, username="lars")
    client.force_login(personas["shiftlead"])
    response = client.post(f"/cordons/{c.pk}/lift/")
    assert response.status_code == 303
    assert list(CordonLift.objects.values_list("cordon_id", "lifted_by")) == [(c.pk, "shiftlead")]
    assert client.post(f"/cordons/{c.pk}/lift/").status_code == 303  # a double submit changes nothing
    assert CordonLift.objects.count() == 1
    page = client.get("/cordons/").content.decode()
    assert "lifted by shiftlead" in page and 'id="cordons-history"' in page and 'id="cordons-in-force"' not in page


@pytest.mark.parametrize(("form", "field"), [
    ({"scope": "ROW", "place": "{source}", "reason": "r"}, "scope"),
    ({"scope": "SPACE", "place": "", "reason": "r"}, "place"),
    ({"scope": "SPACE", "place": "NOPE-1", "reason": "r"}, "place"),
    ({"scope": "AISLE", "place": "Q77", "reason": "r"}, "place"),
    ({"scope": "SPACE", "place": "x" * 101, "reason": "r"}, "place"),
    ({"scope": "SPACE", "place": "A01\x00", "reason": "r"}, "place"),
    ({"scope": "SPACE", "place": "{source}", "reason": ""}, "reason"),
    ({"scope": "SPACE", "place": "{source}", "reason": "bell\x07"}, "reason"),
    ({"scope": "SPACE", "place": "{source}", "reason": "r", "ends_at": "yesterday"}, "ends_at"),
    ({"scope": "SPACE", "place": "{source}", "reason": "r", "ends_at": "2001-01-01T10:00"}, "ends_at"),
    ({"scope": "SPACE", "place": "{source}", "reason": "r", "ends_at": "2999-01-01T10:00"}, "ends_at"),
    ({"scope": "SPACE", "place": "{source}", "reason": "r", "ends_at": "0001-01-01T00:00"}, "ends_at"),
    ({"scope": "SPACE", "place": "{source}", "reason": "r", "ends_at": "9999-12-31T23:59"}, "ends_at"),
    ({"scope": "SPACE", "place": "{source}", "reason": "r", "ends_at": "2026-02-30T10:00"}, "ends_at"),
    ({"scope": "SPACE", "place": "{source}", "reason": "r", "ends_at": "\u0661\u0662:00"}, "ends_at"),
])
def test_bad_input_is_a_400_naming_the_field_and_writes_nothing(floor, client, personas, form, field):
    client.force_login(personas["shiftlead"])
    form = {k: v.replace("{source}", floor.source) for k, v in form.items()}
    response = client.post(ADD, form)
    assert response.status_code == 400
    assert f"<code>{field}</code>" in response.content.decode()
    assert cordon_rows() == []


def test_lifting_an_unknown_cordon_is_a_404_and_an_ended_one_a_409(floor, client, personas):
    now = timezone.now()
    ended = Cordon.objects.create(scope="SPACE", place=floor.source, reason="r", created_by="lena",
                                  created_at=now - timedelta(hours=2), ends_at=now - timedelta(hours=1))
    client.force_login(personas["shiftlead"])
    assert client.post(f"/cordons/{ended.pk + 99}/lift/").status_code == 404
    assert client.post(f"/cordons/{2**70}/lift/").status_code == 404
    assert client.post(f"/cordons/{ended.pk}/lift/").status_code == 409
    assert CordonLift.objects.count() == 0


def test_htmx_refresh_gets_the_lists_only(floor, client, personas):
    cordon_create(scope="SPACE", place=floor.source, reason="inspection", ends_at=None, username="lars")
    client.force_login(personas["operator"])
    html = client.get("/cordons/", headers={"HX-Request": "true"}).content.decode()
    assert html.lstrip().startswith('<div id="cordons-live"') and "inspection" in html and "<html" not in html


def test_the_page_speaks_chinese(floor, client, personas):
    client.force_login(personas["shiftlead"])
    html = client.get("/cordons/", headers={"Accept-Language": "zh-Hans"}).content.decode()
    assert "封锁" in html


def test_the_rack_map_draws_cordoned_spaces_with_a_label_and_a_legend(floor, client, personas):
    c = cordon_create(scope="SPACE", place=floor.target, reason="broken beam", ends_at=None, username="lena")
    client.force_login(personas["supervisor"])
    html = client.get("/map/").content.decode()
    assert 'class="cd"' in html or ' cd"' in html
    assert f"cordoned (#{c.pk})" in html  # the text label of the space
    assert 'class="rk sw"' in html and "cordoned: no new tidy work" in html  # the legend
    assert 'href="/cordons/"' in html  # offered from the map
    table = client.get("/map/?view=table").content.decode()
    assert f"cordoned (#{c.pk})" in table
