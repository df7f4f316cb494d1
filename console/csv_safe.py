"""CSV cells a spreadsheet will not run.

A cell that starts with = + - @ is taken for a formula when the file is opened: text an
operator typed, such as a reason `=HYPERLINK("http://...")`, would become a live link or worse.
Spreadsheets skip leading white space (spaces, tabs, line breaks, no-break spaces) before they
look, so " =1" and "\n=1" are formulas too; and a cell that starts with a tab or a carriage
return is treated as one whatever follows. Such text cells get a leading apostrophe, which
spreadsheets show as text and do not display. Numbers, dates and empty cells are left as they are.
"""

import csv

from django.http import StreamingHttpResponse

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
FORMULA_SIGNS = ("=", "+", "-", "@")


def safe_cell(value):
    if isinstance(value, str) and (value.startswith(FORMULA_STARTS) or value.lstrip().startswith(FORMULA_SIGNS)):
        return "'" + value
    return value


def safe_row(row) -> list:
    return [safe_cell(value) for value in row]


class _Echo:
    """A file-like object that hands back what the CSV writer writes, so rows stream."""

    def write(self, value):
        return value


def streaming_csv(rows, *, filename: str) -> StreamingHttpResponse:
    """An attachment streaming `rows` as CSV, every cell made safe (one row in memory at a time)."""
    writer = csv.writer(_Echo())
    response = StreamingHttpResponse((writer.writerow(safe_row(row)) for row in rows),
                                     content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
