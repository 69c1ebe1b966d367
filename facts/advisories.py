"""Known security advisories as dated facts: per advisory the upstream it concerns (a
facts/support.py `Upstream` name), the release of each line that fixes it, its identifiers, the
day it was published and whether the upstream is in the platform's request path, each with
the place it was read.

The request path is what a request to the platform passes through before an application sees
it: the Istio ingress gateway and every sidecar (Envoy, with the ext_authz filter that asks
oauth2-proxy), oauth2-proxy and Dex. `python -m stacks check --on DATE` fails a stack whose
request-path upstream runs a release below the fix of its line on that date (rule `advisory`,
tooling/check/upstreams.py); the others (cert-manager, Kubeflow Pipelines behind the gateway, an SDK)
`check` notes and `python -m stacks outdated` lists per pin. Nothing here is inferred: an
advisory's fix is recorded only for the lines its source names (a release of another line is
judged by that line's own advisories and by the support rules), and a date not read as such
says how it was bounded. Re-read the sources on a bump; add an advisory the day it is known.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from facts.support import Source


@dataclass(frozen=True)
class Advisory:
    """One advisory (or a release's security notes where upstream publishes no advisory)."""

    id: str
    upstream: str
    """The facts/support.py `Upstream` whose deployed release it judges."""
    fixed_in: tuple[str, ...]
    """The first fixed release of each line the source names (`1.30.4`, `1.29.7`)."""
    identifiers: tuple[str, ...]
    """CVE and GHSA identifiers, as the source lists them."""
    published: date
    request_path: bool
    summary: str
    source: Source
    dated: str = ""
    """How `published` was read, where it is not the source's own date."""
    one_line: bool = False
    """The upstream keeps one release line (no patch releases of older minors): its one fix
    judges every earlier release, not only those of its own minor."""

    def fix_for(self, version: str) -> str | None:
        """The fixed release of `version`'s line if `version` is below it; None when it has the
        fix or the advisory names no fix for its line."""
        found = _numbers(version)
        for fixed in self.fixed_in:
            wanted = _numbers(fixed)
            if found[:2] == wanted[:2] or self.one_line:
                return fixed if found < wanted else None
        return None

    def describe(self) -> str:
        shown = ", ".join(self.identifiers[:4]) + (f" and {len(self.identifiers) - 4} more" if len(self.identifiers) > 4 else "")
        return f"{self.id} ({shown}; published {self.published.isoformat()}{f', {self.dated}' if self.dated else ''}): {self.summary}"


def _numbers(version: str) -> tuple[int, ...]:
    """`v1.21.2`, `1.30.5`, `2.16.1` -> (1, 21, 2); a suffix after `-` or `@` is not part of it."""
    return tuple(int(p) for p in re.findall(r"\d+", re.split(r"[-@+]", version.lstrip("v"), maxsplit=1)[0]))


READ = date(2026, 12, 5)
"""The day the sources below were read (stored copies of the pages and repositories named)."""


def _read(where: str) -> Source:
    return Source(where, READ)


ISTIO_NEWS = "istio/istio.io content/en/news/{path}/index.md (stored copy)"

ADVISORIES: tuple[Advisory, ...] = (
    Advisory(
        "ISTIO-SECURITY-2026-005",
        "Istio",
        fixed_in=("1.30.2",),
        identifiers=(
            "GHSA-p7c7-7c47-pwch", "CVE-2026-47692", "CVE-2026-47207", "CVE-2026-47205", "CVE-2026-47220", "CVE-2026-47221",
            "CVE-2026-48044", "CVE-2026-48090", "CVE-2026-47778", "CVE-2026-47204", "CVE-2026-48497", "CVE-2026-48706",
            "CVE-2026-48743", "CVE-2026-47775", "CVE-2026-48042",
        ),
        published=date(2026, 6, 24),
        request_path=True,
        summary="Envoy CVEs, among them CVE-2026-47205, a use-after-free in the ext_authz filter the gateway runs "
        "(CVSS 5.9), and HTTP/3 and decompression denials of service",
        source=_read(
            ISTIO_NEWS.format(path="security/istio-security-2026-005")
            + "; the fix in 1.30: news/releases/1.30.x/announcing-1.30.2 (2026-06-23, \"Security update\"). The 1.29 and "
            "1.28 fixes are not named plainly there, so only the 1.30 line is judged by it"
        ),
    ),
    Advisory(
        "ISTIO-SECURITY-2026-006",
        "Istio",
        fixed_in=("1.30.4", "1.29.7"),
        identifiers=(
            "CVE-2026-73513", "CVE-2026-73552", "CVE-2026-73512", "CVE-2026-73547", "CVE-2026-73549", "CVE-2026-50572",
            "CVE-2026-73546", "CVE-2026-48521", "CVE-2026-73551", "CVE-2026-73511", "CVE-2026-73548", "CVE-2026-73550",
            "CVE-2026-73553", "GHSA-qm8v-g4f9-qhjx",
        ),
        published=date(2026, 8, 26),
        request_path=True,
        summary="13 Envoy CVEs: CVE-2026-73547, ext_authz ends the process on a CONNECT without :path (CVSS 7.5: an "
        "unauthenticated request takes down the gateway), CVE-2026-50572 (ext_authz use-after-free), CVE-2026-73553 "
        "(RBAC bypass through ignore_path_parameters_in_path_matching), path normalisation; an istiod denial of service "
        "through EnvoyFilter proxyVersion",
        source=_read(
            ISTIO_NEWS.format(path="security/istio-security-2026-006")
            + " (Mitigation: 1.30.4, 1.29.7) and news/releases/1.30.x/announcing-1.30.4"
        ),
        dated="the English pages' publishdate; the Spanish and Chinese copies say 2026-08-27",
    ),
    Advisory(
        "oauth2-proxy v7.15.2 security fixes",
        "oauth2-proxy",
        fixed_in=("v7.15.2",),
        identifiers=(
            "GHSA-5hvv-m4w4-gf6v", "GHSA-7x63-xv5r-3p2x", "GHSA-pxq7-h93f-9jrg", "GHSA-c5c4-8r6x-56w3", "GHSA-f24x-5g9q-753f",
            "CVE-2026-34986", "CVE-2026-32281", "CVE-2026-32289", "CVE-2026-32288", "CVE-2026-32280", "CVE-2026-32282",
            "CVE-2026-32283",
        ),
        published=date(2026, 4, 14),
        request_path=True,
        summary="authentication bypasses (health-check user agent, X-Forwarded-Uri spoofing, URL fragments in allowed "
        "routes), an e-mail validation bypass and a session fixation; Go 1.25.9",
        source=_read("oauth2-proxy/oauth2-proxy CHANGELOG.md, V7.15.2, at tag v7.15.3 (66b3a17d)"),
        dated="the v7.15.2 tag's commit date (5961fd99)",
        one_line=True,
    ),
    Advisory(
        "oauth2-proxy v7.15.3 security fixes",
        "oauth2-proxy",
        fixed_in=("v7.15.3",),
        identifiers=(
            "CVE-2026-33811", "CVE-2026-33814", "CVE-2026-39820", "CVE-2026-39836", "CVE-2026-42499", "CVE-2026-42504",
            "CVE-2026-39823", "CVE-2026-39826", "CVE-2026-39825", "CVE-2026-27145", "CVE-2026-42507",
        ),
        published=date(2026, 6, 9),
        request_path=True,
        summary="11 CVEs of Go and its dependencies, fixed by Go 1.26.4 and dependency upgrades; the sign-in path",
        source=_read("oauth2-proxy/oauth2-proxy CHANGELOG.md, V7.15.3, at tag v7.15.3 (66b3a17d)"),
        dated="the v7.15.3 tag's commit date",
        one_line=True,
    ),
    Advisory(
        "cert-manager v1.21.2 security fixes",
        "cert-manager",
        fixed_in=("v1.21.2",),
        identifiers=("cert-manager#9239", "cert-manager#9222"),
        published=date(2026, 9, 17),
        request_path=False,
        summary="the ACME issuer no longer copies untrusted response bodies into status and Events and caps them at "
        "16 MiB; ambient AWS credentials no longer serve namespaced Vault Issuers; Go CVEs (\"All users should upgrade\")",
        source=_read(
            "cert-manager v1.21.2 release notes as quoted in gitlab.com/sylva-projects/sylva-core MR 9292 (no CVE "
            "identifier in the part read; the pull requests it names)"
        ),
        dated="not on release-1.21 at the stored head (2026-08-21); listed as current by a stored guide checked 2026-09-17",
    ),
    Advisory(
        "Kubeflow Pipelines 2.18.1 security fixes",
        "Kubeflow Pipelines",
        fixed_in=("2.18.1",),
        identifiers=("GHSA-j53r-x5f5-j4hr",),
        published=date(2026, 11, 18),
        request_path=False,
        summary="five advisories, three in the cluster: multi-user installations block the frontend's and gateway's access "
        "to shared ML Metadata methods without tenant authorization (GHSA-j53r-x5f5-j4hr), and require an authorized "
        "namespace for legacy visualizations; 2.18.0 added authorization and namespace checks before them",
        source=_read(
            "https://github.com/kubeflow/pipelines/releases/tag/2.18.1 (and tag 2.18.0, \"Security improvements\"); the "
            "other two cluster advisories' identifiers are not in the part read, nor an affected range: every earlier "
            "release is judged (the stored tags show no patch release of an older minor after a newer one: 2.16.1 "
            "before 2.17.0)"
        ),
        dated="the release page says 18 Nov; 2026, the year after the 2.17.0 tag (2026-07-09)",
        one_line=True,
    ),
)
"""Every advisory `check` and `outdated` judge by, oldest first."""


def of(upstream: str, version: str, on: date) -> list[tuple[Advisory, str]]:
    """(advisory, its fixed release) of every advisory published by `on` that `upstream` at
    `version` is below the fix of."""
    found = []
    for advisory in ADVISORIES:
        if advisory.upstream == upstream and advisory.published <= on:
            fixed = advisory.fix_for(version)
            if fixed is not None:
                found.append((advisory, fixed))
    return found
