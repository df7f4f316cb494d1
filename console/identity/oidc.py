"""OpenID Connect, the authorization-code flow with PKCE (design §14). Imported only when
OIDC_ISSUER is set (console/identity/views.py), so PyJWT is needed only then. Every request to the
provider (discovery, keys, token, userinfo) goes through the journaled
recovery.engine.wcs.http_request, like all of the console's outbound HTTP (the journal keeps the
address and the status, never a body or a header).

Discovery from `<issuer>/.well-known/openid-configuration` (its `issuer` must be OIDC_ISSUER
exactly); the ID token's signature is checked with a key of the provider's JWKS and an algorithm
the provider announces, and its issuer, audience (and authorized party), expiry, issue time and
nonce are required and checked by PyJWT or here; anything else is refused (OidcRefused). A
provider that does not answer within DIRECTORY_TIMEOUT_SECONDS is unreachable (OidcUnreachable).
"""

import base64
import hashlib
import secrets
import threading
import time
from dataclasses import dataclass
from urllib.parse import quote, urlencode

import jwt
from django.conf import settings

from recovery.engine.wcs import HttpFailure, http_request

DISCOVERY_PATH = "/.well-known/openid-configuration"
# Discovery and the provider's keys are read again after this long (a provider rotates its keys;
# PyJWKClient also reads the keys again when a token names a key it does not know).
METADATA_SECONDS = 300
# The asymmetric algorithms accepted; "none" and the HMAC ones (keyed with the client secret) never.
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
# Clocks of the provider and the console may differ by this many seconds.
LEEWAY_SECONDS = 30  # read at each verification (a test of expiry sets it to 0)


class OidcUnreachable(Exception):
    """The provider did not answer (or answered with an error page) within the timeout."""


class OidcRefused(Exception):
    """The provider's answer is not to be trusted; `reason` says why (for the log, never a secret)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Provider:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    userinfo_endpoint: str
    end_session_endpoint: str
    algorithms: tuple[str, ...]


_lock = threading.Lock()
_providers: dict[str, tuple[float, Provider]] = {}
_key_sets: dict[str, tuple[float, jwt.PyJWKSet]] = {}
# A token naming a key the cached set lacks reads the set again, at most this often (rotation).
KEYS_REFRESH_SECONDS = 30


PURPOSE = "oidc"


def _call(method: str, url: str, *, body: bytes | None = None, headers: dict | None = None) -> dict:
    """One request to the provider and its JSON answer: no answer (or a 5xx) within the timeout is
    OidcUnreachable; a 4xx or an answer that is not a JSON object is OidcRefused."""
    try:
        answer = http_request(method, url, purpose=PURPOSE, timeout_ms=settings.DIRECTORY_TIMEOUT_SECONDS * 1000,
                              body=body, headers={"Accept": "application/json", **(headers or {})})
    except HttpFailure as exc:
        raise OidcUnreachable(str(exc)) from exc
    if answer.status >= 500:
        raise OidcUnreachable(f"{url}: HTTP {answer.status}")
    try:
        data = answer.json()
    except ValueError as exc:
        raise OidcRefused(f"{url} answered HTTP {answer.status} without JSON") from exc
    if not isinstance(data, dict):
        raise OidcRefused(f"{url} answered HTTP {answer.status} with no JSON object")
    if answer.status != 200:
        raise OidcRefused(f"{url} answered HTTP {answer.status}: {str(data.get('error', ''))[:100]}")
    return data


def provider() -> Provider:
    """The provider's endpoints from discovery (cached for METADATA_SECONDS)."""
    issuer = settings.OIDC_ISSUER
    with _lock:
        cached = _providers.get(issuer)
    if cached and time.monotonic() - cached[0] < METADATA_SECONDS:
        return cached[1]
    meta = _call("GET", issuer.rstrip("/") + DISCOVERY_PATH)
    if meta.get("issuer") != issuer:
        raise OidcRefused(f"discovery names issuer {meta.get('issuer')!r}, not OIDC_ISSUER {issuer!r}")
    missing = [k for k in ("authorization_endpoint", "token_endpoint", "jwks_uri") if not meta.get(k)]
    if missing:
        raise OidcRefused(f"discovery lacks {', '.join(missing)}")
    announced = tuple(meta.get("id_token_signing_alg_values_supported") or ("RS256",))
    found = Provider(issuer=issuer, authorization_endpoint=meta["authorization_endpoint"],
                     token_endpoint=meta["token_endpoint"], jwks_uri=meta["jwks_uri"],
                     userinfo_endpoint=meta.get("userinfo_endpoint") or "",
                     end_session_endpoint=meta.get("end_session_endpoint") or "",
                     algorithms=tuple(a for a in announced if a in ALGORITHMS) or ("RS256",))
    with _lock:
        _providers[issuer] = (time.monotonic(), found)
    return found


def forget_providers() -> None:
    """Drops what discovery and the key sets told (tests start providers on new ports)."""
    with _lock:
        _providers.clear()
        _key_sets.clear()


@dataclass(frozen=True)
class Flow:
    """One sign-in on its way, kept in the session under its state until the callback uses it."""
    state: str
    nonce: str
    verifier: str
    next: str


def new_flow(next_url: str) -> Flow:
    return Flow(state=secrets.token_urlsafe(32), nonce=secrets.token_urlsafe(32),
                verifier=secrets.token_urlsafe(64), next=next_url)


def challenge(verifier: str) -> str:
    """PKCE S256: base64url(sha256(verifier)) without padding (RFC 7636)."""
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=").decode("ascii")


def authorization_url(found: Provider, *, flow: Flow, redirect_uri: str) -> str:
    query = urlencode({"response_type": "code", "client_id": settings.OIDC_CLIENT_ID, "redirect_uri": redirect_uri,
                       "scope": settings.OIDC_SCOPES, "state": flow.state, "nonce": flow.nonce,
                       "code_challenge": challenge(flow.verifier), "code_challenge_method": "S256"})
    separator = "&" if "?" in found.authorization_endpoint else "?"
    return f"{found.authorization_endpoint}{separator}{query}"


def exchange_code(found: Provider, *, code: str, flow: Flow, redirect_uri: str) -> dict:
    """The token endpoint's answer for the code (with the PKCE verifier and the client's secret,
    in the Authorization header or the body as OIDC_TOKEN_AUTH_METHOD says)."""
    data = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri,
            "code_verifier": flow.verifier}
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    if settings.OIDC_TOKEN_AUTH_METHOD == "client_secret_post":
        data.update(client_id=settings.OIDC_CLIENT_ID, client_secret=settings.OIDC_CLIENT_SECRET)
    else:  # client_secret_basic: both form-encoded first (RFC 6749 §2.3.1)
        pair = f"{quote(settings.OIDC_CLIENT_ID, safe='')}:{quote(settings.OIDC_CLIENT_SECRET, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
    try:
        answer = _call("POST", found.token_endpoint, body=urlencode(data).encode(), headers=headers)
    except OidcRefused as exc:
        raise OidcRefused(f"the token endpoint refused the code: {exc.reason}") from exc
    if not answer.get("id_token"):
        raise OidcRefused("the token endpoint gave no id_token")
    return answer


def _signing_key(found: Provider, token: str) -> jwt.PyJWK:
    """The provider's key that the token's header names (kid), from its JWKS; the set is read again
    when it lacks that key (a rotation) and was read more than KEYS_REFRESH_SECONDS ago."""
    try:
        kid = jwt.get_unverified_header(token).get("kid")
    except jwt.PyJWTError as exc:
        raise OidcRefused(f"the ID token is no JWT: {type(exc).__name__}") from exc
    for attempt in range(2):
        with _lock:
            cached = _key_sets.get(found.jwks_uri)
        age = time.monotonic() - cached[0] if cached else None
        if cached is None or age > METADATA_SECONDS or (attempt == 1 and age > KEYS_REFRESH_SECONDS):
            try:
                key_set = jwt.PyJWKSet.from_dict(_call("GET", found.jwks_uri))
            except jwt.PyJWTError as exc:
                raise OidcRefused(f"the provider's keys are unusable: {type(exc).__name__}") from exc
            with _lock:
                _key_sets[found.jwks_uri] = (time.monotonic(), key_set)
        else:
            key_set = cached[1]
        keys = [k for k in key_set.keys if kid is None or k.key_id == kid]
        if keys:
            return keys[0]
    raise OidcRefused("no key of the provider signs this ID token")


def verify_id_token(token: str, *, found: Provider, nonce: str) -> dict:
    """The ID token's claims once every check holds; OidcRefused names the first that does not."""
    key = _signing_key(found, token)
    try:
        claims = jwt.decode(token, key=key, algorithms=list(found.algorithms), audience=settings.OIDC_CLIENT_ID,
                            issuer=found.issuer, leeway=LEEWAY_SECONDS,
                            options={"require": ["iss", "sub", "aud", "exp", "iat"]})
    except jwt.PyJWTError as exc:
        raise OidcRefused(f"ID token refused: {type(exc).__name__}") from exc
    audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
    if len(audiences) > 1 and claims.get("azp") != settings.OIDC_CLIENT_ID:
        raise OidcRefused("ID token refused: several audiences and azp is not this client")
    if not secrets.compare_digest(str(claims.get("nonce", "")), nonce):
        raise OidcRefused("ID token refused: its nonce is not this sign-in's")
    return claims


def userinfo(found: Provider, *, access_token: str, subject: str) -> dict:
    """The userinfo endpoint's claims (for a provider that keeps groups out of the ID token)."""
    if not found.userinfo_endpoint or not access_token:
        return {}
    claims = _call("GET", found.userinfo_endpoint, headers={"Authorization": f"Bearer {access_token}"})
    if claims.get("sub") != subject:
        raise OidcRefused("userinfo names another subject than the ID token")
    return claims


def groups_of(claims: dict) -> list[str]:
    value = claims.get(settings.OIDC_GROUPS_CLAIM)
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(v) for v in value if isinstance(v, str | int)]
    return []


def logout_url(found: Provider, *, id_token: str, post_logout_redirect_uri: str) -> str:
    """RP-initiated logout at the provider ("" when it offers none)."""
    if not found.end_session_endpoint:
        return ""
    query = urlencode({"id_token_hint": id_token, "post_logout_redirect_uri": post_logout_redirect_uri,
                       "client_id": settings.OIDC_CLIENT_ID})
    separator = "&" if "?" in found.end_session_endpoint else "?"
    return f"{found.end_session_endpoint}{separator}{query}"
