"""CSV cells a spreadsheet will not run.

A cell that starts with = + - @ (or a tab or carriage return, which some spreadsheets skip
before looking for one of those) is taken for a formula when the file is opened: text an
operator typed, such as a reason `=HYPERLINK("http://...")`, would become a live link or worse.
Such text cells get a leading apostrophe, which spreadsheets show as text and do not display.
Numbers, dates and empty cells are left as they are.
"""

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value):
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def safe_row(row) -> list:
    return [safe_cell(value) for value in row]
