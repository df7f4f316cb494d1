"""Each person's language: chosen in the menu, kept on their account, applied wherever they sign in.

Django's `set_language` view stores a choice only in the language cookie, which `LocaleMiddleware`
reads. A signed-in person's choice is also saved on their account (console.models.UserLanguage),
so it follows them to another device and outlives the cookie. At sign-in the account's choice is
put on the session, and from then on it decides for that person, before the cookie (which may hold
another person's choice on a shared device) and the browser's Accept-Language. Without a choice
the cookie decides, then Accept-Language, then LANGUAGE_CODE. Reason codes, ids and codes are
never translated.
"""

from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver
from django.urls import reverse
from django.utils import translation

# The session key Django used before 4.0 for the same purpose; nothing else reads it now.
SESSION_LANGUAGE_KEY = "_language"
# Set on the session once the account's choice was read into it, so the account is read once per session.
SESSION_LANGUAGE_READ_KEY = "_console_language_read"


def _supported(code: str | None) -> str | None:
    """One of settings.LANGUAGES for `code`, or None for an empty, unknown or unsupported code."""
    if not code:
        return None
    try:
        return translation.get_supported_language_variant(code)
    except LookupError:
        return None


def _stored_language(user_pk) -> str | None:
    from console.models import UserLanguage

    language = UserLanguage.objects.filter(user_id=user_pk).values_list("language", flat=True).first()
    return _supported(language)


def preferred_language(user) -> str:
    """The language to address `user` in where no browser asks (e-mail, webhooks, reports): their
    stored choice, else LANGUAGE_CODE."""
    stored = _stored_language(user.pk) if user is not None and getattr(user, "is_authenticated", False) else None
    return stored or settings.LANGUAGE_CODE


def save_language(user, language: str) -> bool:
    """Keep `language` as `user`'s choice; False (and nothing saved) when it is not one we speak."""
    from console.models import UserLanguage

    language = _supported(language)
    if not language:
        return False
    UserLanguage.objects.update_or_create(user=user, defaults={"language": language})
    return True


@receiver(user_logged_in, dispatch_uid="console.languages.apply_at_sign_in")
def apply_at_sign_in(sender, request, user, **kwargs):
    """At sign-in the account's choice takes over from whatever this browser chose before."""
    if request is not None and hasattr(request, "session"):
        _put_on_session(request.session, _stored_language(user.pk))


def _put_on_session(session, language: str | None) -> None:
    if language:
        session[SESSION_LANGUAGE_KEY] = language
    else:
        session.pop(SESSION_LANGUAGE_KEY, None)
    session[SESSION_LANGUAGE_READ_KEY] = True


class SessionLanguageMiddleware:
    """Placed right after LocaleMiddleware: a signed-in person's stored choice decides; the
    language menu posted by a signed-in person is saved on their account."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        session = getattr(request, "session", None)
        signed_in = session is not None and SESSION_KEY in session
        language = None
        if signed_in:
            if SESSION_LANGUAGE_READ_KEY not in session and settings.LANGUAGE_COOKIE_NAME not in request.COOKIES:
                # A session from before choices were kept on accounts: read the account once.
                _put_on_session(session, _stored_language(session[SESSION_KEY]) or session.get(SESSION_LANGUAGE_KEY))
            language = _supported(session.get(SESSION_LANGUAGE_KEY))
            if language:
                translation.activate(language)
                request.LANGUAGE_CODE = translation.get_language()
        response = self.get_response(request)
        if request.method == "POST" and request.path == reverse("set_language"):
            morsel = response.cookies.get(settings.LANGUAGE_COOKIE_NAME)
            chosen = _supported(morsel.value) if morsel is not None else None
            if morsel is not None and not chosen:
                # Django knows more languages than the console speaks ("fr"): such a choice changes nothing.
                del response.cookies[settings.LANGUAGE_COOKIE_NAME]
            user = getattr(request, "user", None)
            if signed_in and chosen and user is not None and user.is_authenticated and save_language(user, chosen):
                _put_on_session(session, chosen)
        elif language and request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME) != language:
            # The cookie follows the person's choice, so it also holds on pages outside the session.
            response.set_cookie(settings.LANGUAGE_COOKIE_NAME, language, max_age=settings.LANGUAGE_COOKIE_AGE,
                                path=settings.LANGUAGE_COOKIE_PATH, domain=settings.LANGUAGE_COOKIE_DOMAIN,
                                secure=settings.LANGUAGE_COOKIE_SECURE, httponly=settings.LANGUAGE_COOKIE_HTTPONLY,
                                samesite=settings.LANGUAGE_COOKIE_SAMESITE)
        return response
