"""The recovery engine (docs/architecture.md §2-§8): the evidence, the decision table, every WMS
mutation (transaction/), the cycle, the WCS callbacks, tidy creation and cordons, and every
statement recovery runs against the WMS (wms_sql.py, with recovery/sql/)."""
