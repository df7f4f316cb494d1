"""Remember a signed-in person's language on their session, beside Django's language cookie.

Django's `set_language` view stores the choice only in the language cookie, which
`LocaleMiddleware` reads. A signed-in person's choice is also kept on the session, so it still
holds when that cookie is gone (cleared, expired, or refused by a strict browser setting) while
the session lasts. Reason codes, ids and codes are never translated.
"""

from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.urls import reverse
from django.utils import translation

# The session key Django used before 4.0 for the same purpose; nothing else reads it now.
SESSION_LANGUAGE_KEY = "_language"


def _supported(code: str | None) -> str | None:
    if not code:
        return None
    try:
        return translation.get_supported_language_variant(code)
    except LookupError:
        return None


class SessionLanguageMiddleware:
    """Placed right after LocaleMiddleware: the session's language when there is no cookie."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        session = getattr(request, "session", None)
        if session is not None and settings.LANGUAGE_COOKIE_NAME not in request.COOKIES:
            language = _supported(session.get(SESSION_LANGUAGE_KEY))
            if language:
                translation.activate(language)
                request.LANGUAGE_CODE = translation.get_language()
        response = self.get_response(request)
        if (session is not None and request.method == "POST" and SESSION_KEY in session
                and request.path == reverse("set_language")):
            morsel = response.cookies.get(settings.LANGUAGE_COOKIE_NAME)
            language = _supported(morsel.value) if morsel is not None else None
            if language:
                session[SESSION_LANGUAGE_KEY] = language
        return response
