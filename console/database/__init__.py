"""The console as a good citizen of the WMS database (design §16): its own schema, reached
through the role's search_path (schema.py), and the statement timeout of page and /metrics reads
(timeouts.py). Their statements are in sql.py."""
