"""Sign-in and sign-out (design §14): the ordinary form (local and LDAP passwords), the OpenID
Connect button's start and callback, and a sign-out that ends the provider's session too.

The OIDC flow's state, nonce and PKCE verifier live in the session under the state until the
callback takes them (once: a replayed callback finds nothing). A source that does not answer is
named on the sign-in page (503 for the OIDC steps), never a 500; local break-glass accounts still
sign in with the form.
"""

import logging
from dataclasses import asdict

from django.conf import settings
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import render, resolve_url
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET

from console.identity import transaction
from console.identity.backends import OIDC_BACKEND
from console.identity.config import UNREACHABLE

logger = logging.getLogger("console.security")

FLOWS_KEY = "oidc_flows"
ID_TOKEN_KEY = "oidc_id_token"
# Sign-ins begun in other tabs stay valid; older ones are dropped past this many.
MAX_FLOWS = 5


def sources_context(request, unreachable=()) -> dict:
    """What the sign-in page shows beside its form: the OIDC button, which sources are on, and the
    sources that did not answer (each with the address it was tried at)."""
    names = {"ldap": settings.LDAP_SERVER_URI.split()[0] if settings.LDAP_SERVER_URI else "",
             "oidc": settings.OIDC_ISSUER}
    down = [*unreachable, *getattr(request, UNREACHABLE, [])]
    return {
        "oidc_on": bool(settings.OIDC_ISSUER),
        "oidc_display_name": settings.OIDC_DISPLAY_NAME,
        "ldap_on": bool(settings.LDAP_SERVER_URI),
        "local_sign_in": settings.LOCAL_SIGN_IN,
        "unreachable": [{"source": s, "address": names[s]} for s in dict.fromkeys(down)],
    }


class SignInView(auth_views.LoginView):
    template_name = "registration/login.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context.update(sources_context(self.request))
        return context


def _safe_next(request, candidate: str) -> str:
    if candidate and url_has_allowed_host_and_scheme(candidate, allowed_hosts={request.get_host()},
                                                     require_https=request.is_secure()):
        return candidate
    return resolve_url(settings.LOGIN_REDIRECT_URL)


def _sign_in_page(request, *, status: int, unreachable=(), refused: bool = False):
    """The sign-in page from an OIDC step: an empty form, and what went wrong."""
    context = {"form": AuthenticationForm(request), "next": "", "oidc_refused": refused,
               **sources_context(request, unreachable)}
    return render(request, "registration/login.html", context, status=status)


def _redirect_uri(request) -> str:
    return request.build_absolute_uri(reverse("oidc-callback"))


@require_GET
def oidc_start(request):
    if not settings.OIDC_ISSUER:
        raise Http404("OpenID Connect is not configured")
    from console.identity import oidc

    try:
        found = oidc.provider()
    except oidc.OidcUnreachable as exc:
        logger.warning("OpenID provider %s did not answer: %s", settings.OIDC_ISSUER, exc)
        return _sign_in_page(request, status=503, unreachable=["oidc"])
    except oidc.OidcRefused as exc:
        logger.warning("OpenID provider %s refused: %s", settings.OIDC_ISSUER, exc.reason)
        return _sign_in_page(request, status=502, refused=True)
    flow = oidc.new_flow(_safe_next(request, request.GET.get("next", "")))
    flows = dict(list(request.session.get(FLOWS_KEY, {}).items())[-(MAX_FLOWS - 1):])
    flows[flow.state] = asdict(flow)
    request.session[FLOWS_KEY] = flows
    return HttpResponseRedirect(oidc.authorization_url(found, flow=flow, redirect_uri=_redirect_uri(request)))


@require_GET
def oidc_callback(request):
    if not settings.OIDC_ISSUER:
        raise Http404("OpenID Connect is not configured")
    from console.identity import oidc

    state = request.GET.get("state", "")
    flows = request.session.get(FLOWS_KEY, {})
    stored = flows.pop(state, None) if state else None
    request.session[FLOWS_KEY] = flows
    if stored is None:
        logger.warning("OpenID callback refused: unknown or already used state")
        return _sign_in_page(request, status=400, refused=True)
    flow = oidc.Flow(**stored)
    if request.GET.get("error"):
        logger.warning("OpenID provider answered error=%r", request.GET.get("error")[:100])
        return _sign_in_page(request, status=400, refused=True)
    if request.GET.get("iss") and request.GET["iss"] != settings.OIDC_ISSUER:  # RFC 9207: mix-up defence
        logger.warning("OpenID callback refused: iss %r is not OIDC_ISSUER", request.GET["iss"][:200])
        return _sign_in_page(request, status=400, refused=True)
    code = request.GET.get("code", "")
    if not code:
        return _sign_in_page(request, status=400, refused=True)
    try:
        found = oidc.provider()
        tokens = oidc.exchange_code(found, code=code, flow=flow, redirect_uri=_redirect_uri(request))
        claims = oidc.verify_id_token(tokens["id_token"], found=found, nonce=flow.nonce)
        if settings.OIDC_GROUPS_CLAIM not in claims or settings.OIDC_USERNAME_CLAIM not in claims:
            claims = {**oidc.userinfo(found, access_token=tokens.get("access_token", ""), subject=claims["sub"]),
                      **claims}
    except oidc.OidcUnreachable as exc:
        logger.warning("OpenID provider %s did not answer: %s", settings.OIDC_ISSUER, exc)
        return _sign_in_page(request, status=503, unreachable=["oidc"])
    except oidc.OidcRefused as exc:
        logger.warning("OpenID sign-in refused: %s", exc.reason)
        return _sign_in_page(request, status=400, refused=True)
    user = transaction.directory_account(
        source="oidc", key=f"{claims['iss']} {claims['sub']}",
        username=str(claims.get(settings.OIDC_USERNAME_CLAIM) or claims["sub"]),
        first_name=str(claims.get("given_name") or claims.get("name") or ""),
        last_name=str(claims.get("family_name") or ""), email=str(claims.get("email") or ""))
    if not user.is_active:  # deactivated by an administrator: the provider does not overrule that
        logger.warning("OpenID sign-in refused: account %r is deactivated", user.get_username())
        return _sign_in_page(request, status=403, refused=True)
    transaction.directory_roles(user=user, source="oidc", groups=oidc.groups_of(claims))
    login(request, user, backend=OIDC_BACKEND)
    request.session[ID_TOKEN_KEY] = tokens["id_token"]
    return HttpResponseRedirect(flow.next)


class SignOutView(auth_views.LogoutView):
    """Django's sign-out (POST), then the provider's end-session endpoint where the account came
    through OpenID Connect and the provider offers RP-initiated logout."""

    def post(self, request, *args, **kwargs):
        id_token = request.session.get(ID_TOKEN_KEY, "")
        response = super().post(request, *args, **kwargs)
        if not id_token or not settings.OIDC_ISSUER:
            return response
        from console.identity import oidc

        try:
            url = oidc.logout_url(oidc.provider(), id_token=id_token,
                                  post_logout_redirect_uri=request.build_absolute_uri(resolve_url(settings.LOGIN_URL)))
        except (oidc.OidcUnreachable, oidc.OidcRefused) as exc:
            logger.warning("OpenID provider %s: no sign-out there: %s", settings.OIDC_ISSUER, exc)
            return response
        return HttpResponseRedirect(url) if url else response

