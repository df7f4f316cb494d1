"""Pure helpers of the console: SVG chart scaling and human durations."""

from datetime import UTC, datetime, timedelta

from console.charts import bar_chart, line_chart
from console.templatetags.console_tags import format_duration

T0 = datetime(2026, 12, 1, 3, 0, tzinfo=UTC)


def test_it_scales_a_line_from_zero_to_a_rounded_maximum():
    chart = line_chart([(T0, 0), (T0 + timedelta(seconds=30), 80), (T0 + timedelta(seconds=60), None)],
                       width=600, height=110)
    assert chart.y_max == 100 and chart.count == 2
    assert chart.points == "0.0,106.0 600.0,26.0"  # 6 px padding on top, 4 at the bottom
    assert (chart.first, chart.last) == (T0, T0 + timedelta(seconds=30))


def test_it_draws_nothing_without_data():
    assert line_chart([]).empty and line_chart([(T0, None)]).empty and bar_chart([]).empty


def test_it_gives_each_minute_a_bar():
    chart = bar_chart([(T0 + timedelta(minutes=i), v) for i, v in enumerate([0, 5, 10, 2])], width=400, height=60)
    assert chart.y_max == 10 and len(chart.bars) == 4
    x, y, w, h = chart.bars[2]
    assert (x, w, h, y + h) == (210.0, 80.0, 50.0, 56.0)
    assert chart.bars[0][3] == 0


def test_it_formats_durations_for_people():
    assert [format_duration(timedelta(seconds=s)) for s in (0, 59, 60, 3599, 3600, 3660 + 5, 86400 * 2 + 3600 * 4)] == [
        "0 s", "59 s", "1 min", "59 min", "1 h 00 min", "1 h 01 min", "2 d 4 h"]
    assert format_duration(None) == "—"
