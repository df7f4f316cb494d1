"""The console's query strings refuse hostile values with 400 naming the field (control characters,
NUL bytes, non-ASCII digits, numbers beyond bigint, positions beyond any date), never a 500;
ordinary mistakes keep the friendly fallback (message, first page, 200)."""

import pytest

from console.input_checks import BIGINT_MAX
from console.readers import Cursor

HOSTILE_POSITIONS = ["²-1", "1-²", "١٢٣-4", "99999999999999999999-1", "1-99999999999999999999",
                     f"1-{BIGINT_MAX + 1}", "1\x00-2", "1-2\x01"]


@pytest.mark.parametrize("path", ["/paused/", "/locks/"])
@pytest.mark.parametrize("value", HOSTILE_POSITIONS)
def test_a_hostile_list_position_is_refused_with_400_naming_it(supervisor_client, wms, path, value):
    wms.build("paused")
    response = supervisor_client.get(path, {"after": value})
    assert response.status_code == 400
    assert "<p>after: " in response.content.decode()


@pytest.mark.parametrize("param", ["q", "reason", "origin"])
@pytest.mark.parametrize("value", ["a\x00b", "a\x07b", "tab\there", "\x9b[31m"])
def test_control_characters_in_a_filter_are_refused_with_400_naming_it(supervisor_client, wms, param, value):
    response = supervisor_client.get("/paused/", {param: value})
    assert response.status_code == 400
    assert f"<p>{param}: the value contains " in response.content.decode()


@pytest.mark.parametrize("q", ["²", "١٢", "9" * 19, "9" * 40, str(BIGINT_MAX), str(BIGINT_MAX + 1), "0"])
def test_a_search_that_looks_numeric_is_a_search_not_a_crash(supervisor_client, wms, q):
    built = wms.build("paused")
    for path in ("/paused/", "/locks/"):
        response = supervisor_client.get(path, {"q": q})
        assert response.status_code == 200
        assert f"#{built.workflow_id}</a>" not in response.content.decode()


def test_a_position_beyond_any_date_is_refused_before_it_overflows(supervisor_client, wms):
    too_late = Cursor.decode("253402300799999999-1")  # 9999-12-31T23:59:59.999999Z: the last one
    assert too_late.paused_since.year == 9999
    with pytest.raises(ValueError):
        Cursor.decode("253402300800000000-1")
    response = supervisor_client.get("/paused/", {"before": "253402300800000000-1"})
    assert response.status_code == 200  # well formed, merely not a position: the friendly fallback
    assert "That list position is not valid; showing the first page." in response.content.decode()
