"""The rack map (/map/): spaces parsed by SPACE_CODE_PATTERN, each state's class on the right
space, arrows for paused steps, filters (bad values answer 400 naming the field), the table
view, the workflow page's small map, and 20,000 spaces in one page."""

import re
import xml.etree.ElementTree as ET

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection

from console.env import env_regex
from console.rack_map.drawing import Place, natural_key, parse_code
from recovery.demo.warehouse import Move, WarehouseBuilder
from tests.console_personas import *  # noqa: F403  (fixtures: personas, supervisor_client)

DEFAULT = r"^(?P<aisle>[A-Z]\d+)-(?P<level>\d+)-(?P<position>\d+)$"


def _x(sql: str, params: dict | None = None):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def svgs(html: str) -> dict[str, ET.Element]:
    """Each aisle's SVG, parsed, by its aria-label (the aisle name)."""
    out = {}
    for markup in re.findall(r'<svg class="rk" .*?</svg>', html, flags=re.S):
        root = ET.fromstring(markup)
        out[root.get("aria-label")] = root
    return out


def labelled_spaces(root: ET.Element) -> dict[str, dict]:
    """code -> {class, href, label} for every space that carries a label (tray or lock)."""
    spaces = {}
    for a in root.iter("a"):
        rect = a.find("rect")
        spaces[a.get("aria-label").split(" · ")[0]] = {
            "class": rect.get("class", ""), "href": a.get("href"), "label": a.get("aria-label"),
            "title": a.findtext("title")}
    for rect in root.iter("rect"):
        title = rect.findtext("title")
        if title:
            spaces[title.split(" · ")[0]] = {"class": rect.get("class", ""), "href": None, "label": title}
    return spaces


def test_the_default_pattern_splits_codes_and_refuses_others():
    assert parse_code("A01-03-12", DEFAULT) == Place("A01", "03", "12")
    assert parse_code("B7-1-200", DEFAULT) == Place("B7", "1", "200")
    for odd in ("DOCK-1", "a01-01-01", "A01-01", "A01-01-01-X", ""):
        assert parse_code(odd, DEFAULT) is None
    assert sorted(["A10", "A2", "B1", "A02"], key=natural_key) == ["A02", "A2", "A10", "B1"]


@pytest.mark.parametrize("value,message", [
    ("(", "SPACE_CODE_PATTERN is not a valid regular expression"),
    (r"^(?P<aisle>\w+)-(?P<level>\d+)$", r"SPACE_CODE_PATTERN must have the named groups \(\?P<position>"),
])
def test_a_bad_pattern_stops_the_program_naming_the_variable(monkeypatch, value, message):
    monkeypatch.setenv("SPACE_CODE_PATTERN", value)
    with pytest.raises(ImproperlyConfigured, match=message):
        env_regex("SPACE_CODE_PATTERN", DEFAULT, groups=("aisle", "level", "position"))


def test_a_custom_pattern_is_read(monkeypatch):
    monkeypatch.setenv("SPACE_CODE_PATTERN", r"^R(?P<aisle>\d+)\.(?P<level>\d+)\.(?P<position>\d+)$")
    pattern = env_regex("SPACE_CODE_PATTERN", DEFAULT, groups=("aisle", "level", "position"))
    assert parse_code("R4.2.9", pattern) == Place("4", "2", "9")


@pytest.fixture
def floor(wms):
    """One space in every state, in aisle A01 (the builder numbers spaces A01-01-01, A01-01-02, ...)."""
    paused = wms.build("paused")  # step 1 PAUSED_RECOVERY: tray at its source, target empty
    active = wms.build("healthy")  # job status 2, changed just now
    stalled = wms.build("healthy")
    _x("UPDATE mydo_job SET updated_at = now() - interval '20 minutes' WHERE job_id LIKE %(j)s",
       {"j": f"TDY-{stalled.workflow_id}-%"})
    tray, shelved = wms.stocked_tray()  # a tray, no lock
    free = wms.add_space()
    _x("INSERT INTO bas_cargo_space (cargo_space_id, tray_code) VALUES ('DOCK-1', 'T-DOCK'), ('conveyor 7', NULL)")
    _x("INSERT INTO alg.tidy_space_lock (workflow_id, cargo_space_id) VALUES (%(w)s, 'A01-09-20')",
       {"w": active.workflow_id})  # a lock on a space bas_cargo_space does not list
    return {"paused": paused, "active": active, "stalled": stalled, "tray": tray, "shelved": shelved,
            "free": free}


def test_each_state_is_drawn_on_its_space(supervisor_client, floor):
    response = supervisor_client.get("/map/")
    assert response.status_code == 200
    html = response.content.decode()
    spaces = labelled_spaces(svgs(html)["A01"])
    p, a, s = floor["paused"], floor["active"], floor["stalled"]
    assert spaces[p.moves[0].source]["class"] == "p o"  # locked by paused, holds its tray
    assert spaces[p.moves[0].target]["class"] == "p"
    assert spaces[p.moves[0].source]["href"] == f"/workflows/{p.workflow_id}/"
    assert spaces[p.moves[0].source]["label"] == (
        f"{p.moves[0].source} · tray {p.moves[0].tray_code} · locked by paused workflow #{p.workflow_id}")
    assert spaces[p.moves[0].source]["title"] == spaces[p.moves[0].source]["label"]
    assert spaces[a.moves[0].source]["class"] == "a o"
    assert spaces[a.moves[1].target]["class"] == "a"
    assert spaces[s.moves[0].source]["class"] == "s o"
    assert "locked by stalled workflow" in spaces[s.moves[0].target]["label"]
    assert spaces[floor["shelved"]]["class"] == "o"
    assert spaces[floor["shelved"]]["href"] is None
    assert floor["free"] not in spaces  # a free space is a bare rect, named by its row and column
    assert "not in bas_cargo_space" in spaces["A01-09-20"]["label"]
    assert len(list(svgs(html)["A01"].iter("rect"))) == 3 * 4 + 3  # every space, once
    # Codes the pattern cannot split are listed beside the map.
    unmatched = re.search(r'<ul class="rk-list" id="rk-unmatched">(.*?)</ul>', html, re.S).group(1)
    assert "DOCK-1 · tray T-DOCK" in unmatched and "conveyor 7 · no tray" in unmatched


def test_the_stalled_threshold_is_a_setting(supervisor_client, floor, settings):
    settings.STALLED_AFTER_MINUTES = 30
    spaces = labelled_spaces(svgs(supervisor_client.get("/map/").content.decode())["A01"])
    assert spaces[floor["stalled"].moves[0].source]["class"] == "a o"


def test_a_paused_step_is_an_arrow_and_a_move_across_aisles_is_said_in_words(supervisor_client, floor, wms):
    other = WarehouseBuilder(space_prefix="B")
    tray, source = wms.stocked_tray()
    far = wms.workflow(moves=[Move(tray, source, other.add_space())], step_statuses=["PAUSED_RECOVERY"],
                       status="PAUSED_RECOVERY", pause_reason="RECOVERY_JOB_MISSING")
    html = supervisor_client.get("/map/").content.decode()
    paths = list(svgs(html)["A01"].iter("path"))
    p = floor["paused"]
    assert [x.findtext("title") for x in paths] == [
        f"workflow #{p.workflow_id} step 1: tray {p.moves[0].tray_code} from {p.moves[0].source} "
        f"to {p.moves[0].target}"]
    assert paths[0].get("marker-end") == "url(#rk-ah)"
    assert not list(svgs(html)["B01"].iter("path"))
    assert f'<a href="/workflows/{far.workflow_id}/">#{far.workflow_id}</a>' in html
    assert "across aisles: A01 to B01" in html
    one = supervisor_client.get("/map/?aisle=A01").content.decode()  # read through the code index
    assert set(svgs(one)) == {"A01"} and len(list(svgs(one)["A01"].iter("path"))) == 1
    assert "across aisles: A01 to B01" in one


def test_the_aisle_and_state_filters(supervisor_client, floor, wms):
    WarehouseBuilder(space_prefix="B").add_space("T-B")
    assert set(svgs(supervisor_client.get("/map/").content.decode())) == {"A01", "B01"}
    assert set(svgs(supervisor_client.get("/map/?aisle=B01").content.decode())) == {"B01"}
    WarehouseBuilder(space_prefix="C").add_space()  # a new aisle is known at once
    response = supervisor_client.get("/map/?aisle=C01")
    assert response.status_code == 200 and set(svgs(response.content.decode())) == {"C01"}
    html = supervisor_client.get("/map/?state=paused").content.decode()
    assert set(svgs(html)) == {"A01"}  # B01 holds no paused lock
    spaces = labelled_spaces(svgs(html)["A01"])
    assert spaces[floor["paused"].moves[0].source]["class"] == "p o"
    assert spaces[floor["active"].moves[0].source]["class"] == "a o d"  # dimmed, still in place
    html = supervisor_client.get("/map/?state=occupied").content.decode()
    assert set(svgs(html)) == {"A01", "B01"}


@pytest.mark.parametrize("query,field", [
    ("state=broken", "state"), ("view=pdf", "view"), ("aisle=Z99", "aisle"), ("aisle=" + "A" * 41, "aisle"),
    ("aisle=A0%001", "aisle"), ("state=%00", "state"), ("view=table&state=Paused", "state"),
])
def test_a_bad_filter_answers_400_naming_the_field(supervisor_client, floor, query, field):
    response = supervisor_client.get(f"/map/?{query}")
    assert response.status_code == 400
    html = response.content.decode()
    assert f"(<code>{field}</code>)" in html
    assert not svgs(html)
    assert '<option value="A01">A01</option>' in html  # the form still offers every aisle


def test_the_table_view_labels_every_space(supervisor_client, floor):
    response = supervisor_client.get("/map/?view=table")
    assert response.status_code == 200
    html = response.content.decode()
    assert not svgs(html)
    rows = re.findall(r'<tr><th scope="row"><code>(.*?)</code></th>(.*?)</tr>', html)
    assert len(rows) == 15 + 2  # every space, free ones and unmatched codes too
    cells = dict(rows)
    p = floor["paused"]
    assert cells[p.moves[0].source] == (
        f"<td>A01</td><td>01</td><td>01</td><td>Locked by a paused workflow; Holds a tray</td>"
        f"<td><code>{p.moves[0].tray_code}</code></td>"
        f"<td><a href=\"/workflows/{p.workflow_id}/\">#{p.workflow_id}</a></td>")
    assert "Free (no tray, no lock)" not in cells[floor["free"]] and "no tray" in cells[floor["free"]]
    assert 'href="/map/"' in html  # back to the map, one click
    filtered = supervisor_client.get("/map/?view=table&state=stalled").content.decode()
    assert len(re.findall(r'<tr><th scope="row">', filtered)) == 4
    assert "/map/?view=table" in supervisor_client.get("/map/").content.decode()


def test_values_from_the_wms_are_escaped(supervisor_client, wms):
    _x("""INSERT INTO bas_cargo_space (cargo_space_id, tray_code) VALUES ('A01-01-01', '<b>"x"</b>'),
          ('<script>1</script>', NULL)""")
    html = supervisor_client.get("/map/").content.decode()
    assert "<b>" not in html and "<script>1" not in html
    assert "&lt;b&gt;&quot;x&quot;&lt;/b&gt;" in html
    svgs(html)  # still well-formed


def test_the_workflow_page_shows_its_aisle_with_source_and_target(supervisor_client, floor):
    p = floor["paused"]
    html = supervisor_client.get(f"/workflows/{p.workflow_id}/").content.decode()
    (mini,) = svgs(html).values()
    spaces = labelled_spaces(mini)
    assert spaces[p.moves[0].source]["class"] == "p o hs"
    assert spaces[p.moves[0].target]["class"] == "p ht"
    assert len(list(mini.iter("path"))) == 1
    assert 'href="/map/?aisle=A01"' in html


def test_the_small_map_finds_its_aisle_with_a_pattern_that_does_not_start_with_it(supervisor_client, floor,
                                                                                   settings):
    p = floor["paused"]
    settings.SPACE_CODE_PATTERN = r"(?:^)(?P<aisle>[A-Z]\d+)-(?P<level>\d+)-(?P<position>\d+)$"  # no prefix
    html = supervisor_client.get(f"/workflows/{p.workflow_id}/").content.decode()
    (mini,) = svgs(html).values()
    spaces = labelled_spaces(mini)
    assert spaces[p.moves[0].source]["class"] == "p o hs" and spaces[p.moves[0].target]["class"] == "p ht"
    assert len(list(mini.iter("rect"))) == 15


def test_the_map_needs_a_console_role(client, personas):
    assert client.get("/map/").status_code == 302
    client.force_login(personas["norole"])
    assert client.get("/map/").status_code == 403


def test_20000_spaces_render_in_one_compact_page(supervisor_client, wms, django_assert_max_num_queries):
    # 100 aisles x 10 levels x 20 positions; every other space holds a tray; 500 paused and 500
    # active two-space workflows lock 2,000 spaces.
    _x("""INSERT INTO bas_cargo_space (cargo_space_id, tray_code)
          SELECT format('A%s-%s-%s', lpad(a::text, 3, '0'), lpad(l::text, 2, '0'), lpad(p::text, 2, '0')),
                 CASE WHEN mod(p, 2) = 0 THEN format('T%s-%s-%s', a, l, p) END
          FROM generate_series(1, 100) a, generate_series(1, 10) l, generate_series(1, 20) p""")
    _x("""INSERT INTO alg.tidy_workflow (workflow_id, origin, status)
          SELECT g, 'AUTOMATIC', CASE WHEN g <= 500 THEN 'PAUSED_RECOVERY' ELSE 'ACTIVE' END
          FROM generate_series(1, 1000) g""")
    _x("""INSERT INTO alg.tidy_step (workflow_id, step_no, tray_code, cargo_space_id, target_cargo_space_id, status)
          SELECT g, 1, 'T',
                 format('A%s-01-%s', lpad((1 + mod(g, 100))::text, 3, '0'), lpad((1 + g / 100)::text, 2, '0')),
                 format('A%s-02-%s', lpad((1 + mod(g, 100))::text, 3, '0'), lpad((1 + g / 100)::text, 2, '0')),
                 CASE WHEN g <= 500 THEN 'PAUSED_RECOVERY' ELSE 'DISPATCHED' END
          FROM generate_series(1, 1000) g""")
    _x("""INSERT INTO alg.tidy_space_lock (workflow_id, cargo_space_id)
          SELECT workflow_id, cargo_space_id FROM alg.tidy_step
          UNION ALL SELECT workflow_id, target_cargo_space_id FROM alg.tidy_step""")
    with django_assert_max_num_queries(12):
        response = supervisor_client.get("/map/")
    assert response.status_code == 200
    html = response.content.decode()
    assert len(html) < 2_500_000, len(html)
    drawn = svgs(html)
    assert len(drawn) == 100
    assert sum(len(list(s.iter("rect"))) for s in drawn.values()) == 20_000
    assert sum(len(list(s.iter("path"))) for s in drawn.values()) == 500
    assert sum(len(list(s.iter("a"))) for s in drawn.values()) == 2_000
    one = supervisor_client.get("/map/?aisle=A007").content.decode()
    assert len(svgs(one)) == 1 and len(one) < len(html) / 20


def test_a_drawn_aisle_is_reused_only_while_its_spaces_are_unchanged(supervisor_client, floor):
    from console.rack_map import drawing as rm

    rm._drawn.clear()
    first = supervisor_client.get("/map/?aisle=A01").content.decode()
    assert len(rm._drawn) == 1
    again = supervisor_client.get("/map/?aisle=A01").content.decode()
    assert len(rm._drawn) == 1 and svgs(again)["A01"] is not None
    assert re.search(r'<svg class="rk" .*?</svg>', first, re.S).group(0) == \
        re.search(r'<svg class="rk" .*?</svg>', again, re.S).group(0)
    # A tray arrives on the free space: a new drawing, with the tray.
    _x("UPDATE bas_cargo_space SET tray_code = 'T-NEW' WHERE cargo_space_id = %(c)s", {"c": floor["free"]})
    spaces = labelled_spaces(svgs(supervisor_client.get("/map/?aisle=A01").content.decode())["A01"])
    assert spaces[floor["free"]]["class"] == "o" and "T-NEW" in spaces[floor["free"]]["label"]
    assert len(rm._drawn) == 2
    # The same rows in another language are drawn again, in that language.
    zh = supervisor_client.get("/map/?aisle=A01", headers={"Accept-Language": "zh-Hans"}).content.decode()
    assert len(rm._drawn) == 3 and "托盘 T-NEW" in zh
