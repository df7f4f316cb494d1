"""GET /api/wcs/openapi.json: the WCS API contract, served from docs/wcs-api.openapi.json as is.

No sign-in: it is what a WCS vendor integrates against and holds no data. The file is the one
source; tests/console/api/test_contract.py checks that the served document equals it, that it is valid
OpenAPI 3 and that the live endpoints honour it."""

from functools import cache
from pathlib import Path

from django.conf import settings
from django.http import HttpResponse
from django.views.decorators.http import require_safe

CONTRACT = Path(settings.BASE_DIR) / "docs" / "wcs-api.openapi.json"


@cache
def _document() -> bytes:
    return CONTRACT.read_bytes()


@require_safe
def openapi_document(request):
    return HttpResponse(_document(), content_type="application/json")
