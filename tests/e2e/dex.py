"""Sign in to Kubeflow through its gateway as a person would: oauth2-proxy sends the
browser to Dex, Dex shows its login form, the form posts the credentials, Dex redirects
back to oauth2-proxy, which sets its session cookie.

The flow follows what the pages say (the form's action and fields are read from the
HTML), so it needs no knowledge of Dex's URLs beyond oauth2-proxy's `/oauth2/start`
(kubeflow/manifests common/oauth2-proxy: `login_url="/dex/auth"`, `skip_auth_routes
["^/dex/"]`, `relative_redirect_url=true`, cookie `oauth2_proxy_kubeflow`).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from html.parser import HTMLParser
from http.cookiejar import Cookie, CookieJar, DefaultCookiePolicy
from typing import Protocol

START = "/oauth2/start"
VOID = frozenset({"area", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"})
"""HTML elements without an end tag (they must not count as nesting)."""
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


@dataclass(frozen=True)
class Page:
    url: str
    status: int
    body: str


class Browser(Protocol):
    """GET and form POST with a cookie jar, following redirects."""

    def get(self, url: str) -> Page: ...

    def post(self, url: str, data: Mapping[str, str]) -> Page: ...


# --- the login form ---------------------------------------------------------------------


@dataclass(frozen=True)
class LoginForm:
    action: str
    """Absolute URL the form posts to."""
    login_field: str
    password_field: str
    fields: dict[str, str] = field(default_factory=dict)
    """Other named inputs with their values (hidden state, CSRF tokens)."""

    def submission(self, login: str, password: str) -> dict[str, str]:
        return {**self.fields, self.login_field: login, self.password_field: password}


@dataclass
class _Form:
    action: str
    method: str
    inputs: list[dict[str, str]] = field(default_factory=list)


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: list[_Form] = []
        self._in_form = False
        self._error_depth = 0
        self.error_text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.forms.append(_Form(values.get("action", ""), values.get("method", "get").lower()))
            self._in_form = True
        elif tag == "input" and self._in_form and values.get("name"):
            self.forms[-1].inputs.append(values)
        if self._error_depth:
            if tag not in VOID:
                self._error_depth += 1
        elif values.get("id") == "login-error" or "dex-error-box" in values.get("class", "").split():
            self._error_depth = 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._in_form = False
        if self._error_depth:
            self._error_depth -= 1

    def handle_data(self, data: str) -> None:
        if self._error_depth and data.strip():
            self.error_text.append(data.strip())


def parse_login_form(html: str, page_url: str) -> LoginForm | None:
    """The first POST form with a password input, or None (not a login page)."""
    parser = _Parser()
    parser.feed(html)
    for form in parser.forms:
        password = next((i["name"] for i in form.inputs if i.get("type", "text").lower() == "password"), None)
        if form.method != "post" or password is None:
            continue
        texts = [i["name"] for i in form.inputs if i.get("type", "text").lower() in ("text", "email")]
        login = "login" if any(i["name"] == "login" for i in form.inputs) else (texts[0] if texts else None)
        if login is None:
            continue
        others = {
            i["name"]: i.get("value", "")
            for i in form.inputs
            if i["name"] not in (login, password) and i.get("type", "text").lower() not in ("submit", "button")
        }
        return LoginForm(urllib.parse.urljoin(page_url, form.action or page_url), login, password, others)
    return None


def login_error(html: str) -> str:
    """The error Dex shows on its login page (wrong password), or ''."""
    parser = _Parser()
    parser.feed(html)
    return " ".join(parser.error_text)


class LoginFailed(AssertionError):
    """Signing in did not end with a session: no login form, or Dex rejected the user."""


def start_url(base_url: str, then: str = "/") -> str:
    return urllib.parse.urljoin(base_url, f"{START}?{urllib.parse.urlencode({'rd': then})}")


def dex_login(browser: Browser, base_url: str, email: str, password: str, then: str = "/") -> Page:
    """Sign in as `email`; returns the page oauth2-proxy sends the browser to (`then`)."""
    page = browser.get(start_url(base_url, then))
    form = parse_login_form(page.body, page.url)
    if form is None:
        raise LoginFailed(f"no Dex login form at {page.url} (HTTP {page.status}): {page.body[:300]!r}")
    after = browser.post(form.action, form.submission(email, password))
    if parse_login_form(after.body, after.url) is not None:
        raise LoginFailed(f"Dex did not accept {email}: {login_error(after.body) or 'the login form came back'}")
    if after.status >= 400:
        raise LoginFailed(f"signing in as {email} ended at {after.url} with HTTP {after.status}: {after.body[:300]!r}")
    return after


def workgroup_namespaces(env_info: str) -> dict[str, str]:
    """namespace -> role (owner/contributor) from the dashboard's /api/workgroup/env-info."""
    document = json.loads(env_info)
    return {b["namespace"]: b.get("role", "") for b in document.get("namespaces") or []}


# --- a small browser --------------------------------------------------------------------


class LoopbackCookiePolicy(DefaultCookiePolicy):
    """Send `Secure` cookies over plain HTTP to loopback only, as browsers do for
    localhost: oauth2-proxy marks its cookies Secure, the port-forward is plain HTTP."""

    def return_ok_secure(self, cookie: Cookie, request: urllib.request.Request) -> bool:
        if cookie.secure and urllib.parse.urlsplit(request.get_full_url()).hostname in LOOPBACK:
            return True
        return super().return_ok_secure(cookie, request)


class UrllibBrowser:
    """Browser on urllib: cookies kept, redirects followed (303 after POST becomes GET)."""

    def __init__(self, timeout: float = 30.0):
        self.cookies = CookieJar(policy=LoopbackCookiePolicy())
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies))
        self.timeout = timeout

    def _open(self, request: urllib.request.Request) -> Page:
        try:
            with self.opener.open(request, timeout=self.timeout) as response:
                return Page(response.geturl(), response.status, response.read().decode(errors="replace"))
        except urllib.error.HTTPError as error:
            return Page(error.geturl() or request.full_url, error.code, error.read().decode(errors="replace"))

    def get(self, url: str) -> Page:
        return self._open(urllib.request.Request(url))

    def post(self, url: str, data: Mapping[str, str]) -> Page:
        return self._open(urllib.request.Request(url, data=urllib.parse.urlencode(data).encode(), method="POST"))
