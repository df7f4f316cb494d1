"""What Django's error reports (the DEBUG page, the e-mails to ADMINS) never show.

Django's own filter hides settings and request headers whose names look secret (KEY, TOKEN,
PASS, ...). A URL with credentials in it does not look secret by name: `DATABASE_URL` holds the
database password (`DATABASE_REPLICA_URL` the replica's), a webhook URL often holds its
receiver's token. This filter hides those too, as settings and as environment values in the
request's META (the development server copies the environment there). docs/operations.md "Security".
"""

import re

from django.views.debug import SafeExceptionReporterFilter


class ConsoleExceptionReporterFilter(SafeExceptionReporterFilter):
    hidden_settings = re.compile(
        "API|AUTH|TOKEN|KEY|SECRET|PASS|SIGNATURE|HTTP_COOKIE|DATABASE_URL|DATABASE_REPLICA_URL|WEBHOOK_URL|DSN",
        flags=re.IGNORECASE)
