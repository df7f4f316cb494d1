"""The demo warehouse: the warehouse builder of the demo, the tests and the benchmarks, a case per
pausing rule (warehouse.py), and its named statements (sql.py). Nothing recovery runs in production."""
