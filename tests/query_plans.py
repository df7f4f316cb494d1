"""Reading query plans in tests (design §16, cost independent of history): EXPLAIN a statement
and ask whether it reads a table through a given index or scans it whole."""

import re

from django.db import connection


def plan(sql: str, params=None) -> str:
    """The plan PostgreSQL chooses for `sql` with `params`, as EXPLAIN prints it."""
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())


def seq_scanned(text: str, table: str) -> bool:
    """Whether the plan reads every row of `table` (its name as the plan prints it, no schema)."""
    return re.search(rf"Seq Scan on {re.escape(table)}\b", text) is not None


def reads_through_an_index(text: str, table: str, index: str) -> bool:
    return not seq_scanned(text, table) and (f"Index Scan using {index}" in text
                                             or f"Index Only Scan using {index}" in text
                                             or f"Bitmap Index Scan on {index}" in text)
