"""gunicorn settings of the console's web server: one file for production (systemd), `manage.py
run_console` and the replay. Each value may be overridden on the command line (--bind, --workers).

    gunicorn -c deploy/gunicorn.conf.py

Environment: GUNICORN_BIND (default 127.0.0.1:8000; put a TLS proxy in front), WEB_CONCURRENCY
(worker processes, default 2), GUNICORN_THREADS (threads per worker, default 4), GUNICORN_TIMEOUT,
FORWARDED_ALLOW_IPS (the proxy's address, trusted for X-Forwarded-*), LOG_FORMAT and LOG_LEVEL
(the same as the console's: gunicorn's own lines use the console's formatter).
"""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from recovery.logcontext import log_format_from_environ, logging_config  # noqa: E402

wsgi_app = "console.wsgi:application"
chdir = str(ROOT)
bind = [os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")]
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
worker_class = "gthread"
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
# Longer than the slowest request (a batch re-check of 500 workflows); the health probes and
# callbacks answer in milliseconds.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "120"))
graceful_timeout = 10
keepalive = 5
# A worker is replaced after this many requests (plus jitter), bounding any slow leak.
max_requests = 5000
max_requests_jitter = 500
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")

# Access and error lines go through the console's logging (JSON when DEBUG is off), on stderr.
accesslog = "-"
access_log_format = '%(h)s "%(r)s" %(s)s %(b)s %(M)sms'
logconfig_dict = logging_config(log_format=log_format_from_environ(), level=os.environ.get("LOG_LEVEL", "INFO").upper(),
                                gunicorn=True)
# gunicorn's runtime control socket is not used; several servers on one host would share its
# default path.
control_socket_disable = True
