"""The replay: real processes driven through every failure boundary, on a database that is
backed up (verified) before and restored (compared row by row) after.

Modules: `database` (baseline, backup, restore, compare), `journal` (fixture mutations and the
timeline), `processes` (web server, qcluster, WCS simulator as child processes), `scenarios`
(the failure windows), `runner` (the whole run), `report` (HTML + JSON).
"""
