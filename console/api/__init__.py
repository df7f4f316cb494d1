"""The WCS machine client's HTTP API: request parsing (parsing.py) and the endpoints (views.py)."""
