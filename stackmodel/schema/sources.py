"""Where the stack's upstream software and images come from (mirrors), and the overrides that
let a stack name a value the schema does not know yet."""

from __future__ import annotations

import re

from pydantic import (
    Field,
    field_validator,
    model_validator,
)

from facts import registry_names as names
from stackmodel.schema.common import (
    GCP_PROJECT_ID,
    GCP_REGION,
    GCP_ZONE,
    GKE_VERSION,
    REMOTE_SCHEME,
    Model,
    _machine_type_name,
    _unique,
    problem,
    rule,
    zone_region,
)

# --- registry names (facts/registry_names.py) ----------------------------------------------


def registry_problem(value: str, what: str) -> str | None:
    """Why `value` (`host[:port]/path`, no scheme, no tag) is not a registry prefix a client reads
    as written, or None. `what` names it in the message ("the mirror")."""
    host, _, path = value.partition("/")
    if not names.is_registry_host(host):
        return (
            f"{value!r}: a registry client reads {host!r} as a Docker Hub namespace, not a host (a host has a '.', "
            f"a ':port' or is localhost; distribution/reference), so {what} would be docker.io/{value}; give the "
            f"registry's host first, e.g. registry.acme.internal/{value}"
        )
    found = names.HOST.match(host)
    if found is None:
        return f"{value!r}: {host!r} is not a registry host: letters, digits and '-' between dots, then an optional :port"
    port = found["port"]
    if port is not None and not 1 <= int(port) <= names.PORT_MAX:
        return f"{value!r}: port {int(port)} is outside 1-{names.PORT_MAX}; give the port the registry listens on"
    if path and not names.PATH.match(path):
        return (
            f"{value!r}: {path!r} is not a registry path: lowercase letters and digits, separated by '/', '.', '_', "
            "'__' or '-' (distribution/reference)"
        )
    return _artifact_registry_problem(value, host, path)


def _artifact_registry_problem(value: str, host: str, path: str) -> str | None:
    """An Artifact Registry host that cannot exist, or a Docker repository named without its project and repository."""
    if not host.endswith(".pkg.dev"):
        return None
    found = names.ARTIFACT_REGISTRY.match(host)
    if found is None:
        return f"{value!r}: {host!r} is not an Artifact Registry host; they are <location>-docker.pkg.dev"
    location, kind = found["location"], found["format"]
    if kind != "docker":
        return (
            f"{value!r}: {host!r} serves {kind} packages, not images or charts; Docker and OCI artifacts are "
            f"on {location}-docker.pkg.dev"
        )
    if GCP_ZONE.match(location):
        return (
            f"{value!r}: {location!r} is a zone, and Artifact Registry repositories live in a region or a multi-region; "
            f"use {zone_region(location)}-docker.pkg.dev"
        )
    if not (GCP_REGION.match(location) or location in names.ARTIFACT_REGISTRY_MULTI_REGIONS):
        return (
            f"{value!r}: {location!r} is not an Artifact Registry location: a region such as us-central1 or one of "
            f"{', '.join(names.ARTIFACT_REGISTRY_MULTI_REGIONS)}"
        )
    parts = [p for p in path.split("/") if p]
    project = f"{parts[0]}:{parts[1]}" if len(parts) > 2 and "." in parts[0] else (parts[0] if parts else "")
    if len(parts) < (3 if ":" in project else 2):
        return f"{value!r}: an Artifact Registry mirror is a repository, <location>-docker.pkg.dev/<project>/<repository>; name the repository, {host}/<project>/<repository>"
    if not GCP_PROJECT_ID.match(project):
        return (
            f"{value!r}: {project!r} is not a GCP project ID (6-30 lowercase letters, digits and '-', a letter first); "
            f"give the project's ID, {host}/<project>/<repository>"
        )
    return None


def artifact_registry_location(value: str | None) -> str | None:
    """The region of an Artifact Registry host in `value` (a registry prefix or oci:// URL), if it names one."""
    if value is None:
        return None
    found = names.ARTIFACT_REGISTRY.match(REMOTE_SCHEME.sub("", value).split("/", 1)[0])
    return found["location"] if found and GCP_REGION.match(found["location"]) else None


# `git@github.com:kubeflow/manifests.git`: git's scp-like remote, which helm, kustomize and the
# tools here take for a local directory (no scheme).
SCP_REMOTE = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:(?!//)")
# A forge's web pages of a repository, not its remote: GitHub and Gitea /tree/<ref>, /blob/,
# GitLab /-/tree/, Bitbucket /src/, releases and archives.
WEB_PAGE = re.compile(r"/(-/)?(tree|blob|src|commit|commits|releases|archive|raw)(/|$)")


def _not_a_web_page(value: str | None, instead: str, pages: re.Pattern[str] = WEB_PAGE) -> None:
    """A remote URL that is one of a forge's web pages of a repository (`/tree/<ref>`, ...): the
    page's HTML, not what the tools read there. `instead` says what to give, `{root}` the URL up
    to the page's part."""
    page = pages.search(value.split("://", 1)[1]) if value is not None and REMOTE_SCHEME.match(value) else None
    if value is not None and page is not None:
        root = value[: value.index(page[0], len(value.split("://", 1)[0]) + 3)]
        raise ValueError(
            f"{value!r} is a web page of the repository ({page[0].strip('/')}), not {instead.format(root=repr(root))}"
        )


RELEASE_WEB_PAGE = re.compile(r"/(-/)?(tree|blob|src|commit|commits|releases|archive)(/|$)")
"""WEB_PAGE but for raw/: a forge's raw/ path serves the files themselves (GitLab's /-/raw/,
GitHub's raw/ by a redirect to raw.githubusercontent.com)."""


def _not_scp(value: str, remote: str) -> None:
    if SCP_REMOTE.match(value):
        user_host, _, path = value.partition(":")
        raise ValueError(
            f"{value!r} is git's scp-like remote, which the tools read as a local directory; write it as a URL: "
            f"{remote.format(user_host=user_host, path=path.lstrip('/'))!r}"
        )


class Sources(Model):
    """Where upstream software is installed from: the public upstreams of the pin table
    (default), or a mirror for air-gapped and private-registry installs. `pulumi up` and
    the offline render resolve both the same way (plumbing/sources.py)."""

    charts: str | None = Field(
        default=None,
        description="Every Helm chart from a mirror instead of its public repository: an OCI registry "
        "(`oci://europe-docker.pkg.dev/acme-ml/charts`, chart at `<registry>/<chart>`), a Helm repository "
        "(`https://charts.acme.internal`), or a local directory of `<chart>-<version>.tgz` archives "
        "(relative to the project directory).",
    )
    kubeflow_manifests: str | None = Field(
        default=None,
        description="The Kubeflow manifests from a mirror: a git mirror of kubeflow/community-distribution, "
        "formerly kubeflow/manifests (`https://git.acme.internal/kubeflow/manifests`, read at the pinned tag), or a local checkout "
        "of the pinned tag (relative to the project directory).",
    )

    remote_bases: str | None = Field(
        default=None,
        description="The remote kustomize bases the Kubeflow trees name (Argo Workflows for Pipelines) from a local "
        "directory laid out `<host>/<owner>/<repo>/<ref>/<path>` (the `remote/` folder of a mirror; relative to the "
        "project directory); needs a local kubeflowManifests. `python -m stacks prepare <stack>` writes the trees "
        "pointing at it before `pulumi up` (docs/pipelines.md). Default: fetched from GitHub at the refs the trees name.",
    )

    release_manifests: str | None = Field(
        default=None,
        description="The release manifests the platform applies as published (the GPUDirect NCCL installers, "
        "facts/versions.py RELEASE_MANIFESTS) from a mirror: an https:// location, or a local directory (relative to "
        "the project directory), holding each at `<owner>/<repo>/<commit>/<path>` (the `manifests/` folder of a mirror, "
        "`make mirror`). Default: raw.githubusercontent.com at the pinned commit.",
    )

    @field_validator("release_manifests")
    @classmethod
    def _release_manifests(cls, value: str | None) -> str | None:
        value = _mirror_location(
            value,
            ("https://", "http://"),
            "use an https:// location or a local directory",
            "remove the key to fetch them from raw.githubusercontent.com",
        )
        if value is not None and ("?" in value or "#" in value):
            raise ValueError(f"{value!r}: give the location without a query or fragment; the files' paths come from the pin table")
        _not_a_web_page(
            value,
            "a location that serves the files themselves at <owner>/<repo>/<commit>/<path>: give the raw files' location "
            "(raw.githubusercontent.com/<owner>/<repo>/<ref>/<folder> for a GitHub repository; {root} is the repository)",
            RELEASE_WEB_PAGE,
        )
        return value

    @field_validator("charts")
    @classmethod
    def _charts(cls, value: str | None) -> str | None:
        if value is not None:
            _not_scp(value, "oci://{path}")
        value = _mirror_location(
            value,
            ("oci://", "https://", "http://"),
            "use oci://<registry>/<path>, https://<helm repository>, or a local directory",
            "remove the key to use the public chart repositories",
        )
        if value is None or not REMOTE_SCHEME.match(value):
            return value
        rest = value.split("://", 1)[1]
        if "?" in value or "#" in value:
            raise ValueError(f"{value!r}: give the repository's URL without a query or fragment")
        last = rest.rsplit("/", 1)[-1]
        if last in ("index.yaml", "index.yml"):
            raise ValueError(
                f"{value!r} names the repository's index; give the repository, {value.rsplit('/', 1)[0]!r} "
                "(Helm reads <repository>/index.yaml itself)"
            )
        if last.endswith((".tgz", ".tar.gz")):
            raise ValueError(
                f"{value!r} names one chart archive; give the repository that holds every chart at its pinned version "
                f"({value.rsplit('/', 1)[0]!r})"
            )
        if value.startswith("oci://"):
            found = registry_problem(rest, "the chart mirror") if rest else f"{value!r}: give oci://<registry>/<path>"
            if found:
                raise ValueError(found)
        return value

    @field_validator("kubeflow_manifests")
    @classmethod
    def _manifests(cls, value: str | None) -> str | None:
        if value is not None:
            _not_scp(value, "ssh://{user_host}/{path}")
        value = _mirror_location(
            value,
            ("https://", "http://", "ssh://", "file://"),
            "use a git URL (https:// or ssh://) or a local directory",
            "remove the key to use github.com/kubeflow/community-distribution",
        )
        if value is not None and ("?" in value or "#" in value or "//" in value.split("://", 1)[-1]):
            raise ValueError(f"{value!r}: give the repository root; the tag and paths come from the pin table")
        _not_a_web_page(value, "its git remote; give the repository's URL, {root} (the tag comes from the pin table)")
        return value

    @field_validator("remote_bases")
    @classmethod
    def _remote_bases(cls, value: str | None) -> str | None:
        if value is not None and SCP_REMOTE.match(value):
            raise ValueError(f"{value!r} is a git remote; remoteBases is a local directory (a mirror's remote/ folder)")
        return _mirror_location(
            value, (), "give a local directory (a mirror's remote/ folder)", "remove the key to fetch them from GitHub"
        )

    @model_validator(mode="after")
    @rule("remote-bases-beside-local-trees")
    def _remote_bases_beside_local_trees(self) -> Sources:
        manifests = self.kubeflow_manifests
        if self.remote_bases is not None and (manifests is None or REMOTE_SCHEME.match(manifests)):
            raise problem(
                "remoteBases",
                "a local remoteBases needs a local kubeflowManifests (a checkout of the pinned tag) for its trees to "
                "point at; set kubeflowManifests to that directory, or remove remoteBases",
            )
        return self


class Images(Model):
    """Where the cluster pulls images from. Retired registries are replaced whatever this says
    (facts/registries.py); with a mirror, every image the platform runs is pulled through it."""

    mirror: str | None = Field(
        default=None,
        description="A registry prefix every image is pulled through (`europe-docker.pkg.dev/acme-ml/mirror`; "
        "no scheme, no tag): `<mirror>/<source registry>/<path>:<tag>`, the source registry kept in the path "
        "(`<mirror>/docker.io/istio/pilot:<tag>`; Docker Hub short names as `docker.io/library/...`), so it "
        "must allow nested paths. `python -m stacks images <stack> --copy-list` lists what to copy into it "
        "(docs/images.md). On gke, an Artifact Registry mirror is made readable by the nodes.",
    )

    @field_validator("mirror")
    @classmethod
    def _mirror(cls, value: str | None) -> str | None:
        if value is None:
            return None
        bare = value.rstrip("/")
        if not bare.strip():
            raise ValueError("empty; remove the key to pull every image from its own registry")
        if REMOTE_SCHEME.match(bare):
            raise ValueError(f"{value!r}: give the registry path without a scheme, e.g. {REMOTE_SCHEME.sub('', bare)!r}")
        host, slash, path = bare.partition("/")
        if "@" in bare or (slash and ":" in path):
            raise ValueError(f"{value!r} names a tag or digest; give the registry prefix alone (images keep their own tags)")
        if bare != bare.lower():
            raise ValueError(f"{value!r} is not a registry prefix as written: registry paths are lowercase; use {bare.lower()!r}")
        if host in names.DOCKER_HUB_HOSTS:
            raise ValueError(
                f"{value!r}: {host} is Docker Hub, and Docker Hub repositories cannot hold the mirror's nested paths "
                "(<mirror>/<source registry>/<path>); use a registry that can"
            )
        found = registry_problem(bare, "the mirror")
        if found:
            raise ValueError(found)
        room = names.NAME_MAX - names.SOURCE_NAME_ROOM
        if len(bare) > room:
            raise ValueError(
                f"{value!r} is {len(bare)} characters: a mirrored image is <mirror>/<source registry>/<path>, and a "
                f"repository name holds at most {names.NAME_MAX} (distribution/reference); keep the prefix within "
                f"{room} so the platform's images fit"
            )
        return bare


def _mirror_location(value: str | None, schemes: tuple[str, ...], use: str, empty: str) -> str | None:
    """A mirror location: a URL with one of `schemes`, or a local path; trailing `/` dropped."""
    if value is None:
        return None
    if not value.strip():
        raise ValueError(f"empty; {empty}")
    scheme = REMOTE_SCHEME.match(value)
    if scheme and scheme[0] not in schemes:
        raise ValueError(f"{value!r}: {use}")
    return value.rstrip("/")


def _names(values: list[str], pattern: re.Pattern[str], what: str) -> list[str]:
    """`values`, each matching `pattern` (else a message naming it as not `what`), each once."""
    for value in values:
        if not pattern.match(value):
            raise ValueError(f"{value!r} is not {what}")
    _unique(values, lambda v: v)
    return values


class Overrides(Model):
    """Values the loader refuses as unknown, taken because you checked them: a region or machine
    type the catalogs in facts/ do not list yet (a region Google opened since), an OIDC issuer
    ending in '/' (most providers publish theirs without one). Each entry is the exact value,
    so a typo elsewhere is still refused."""

    regions: list[str] = Field(
        default_factory=list,
        description="Regions facts/regions.py does not list that the stack may use (gcloud compute regions list).",
    )
    machine_types: list[str] = Field(
        default_factory=list,
        description="Machine types facts/prices.py does not list that the system pool may use; sizes and cost "
        "are then not checked for it.",
    )
    zones: list[str] = Field(
        default_factory=list,
        description="Zones facts/regions.py does not list that the stack may use (gcloud compute zones list).",
    )
    gke_versions: list[str] = Field(
        default_factory=list,
        description="GKE versions (minMasterVersion) outside what facts/support.py says the release channel offers "
        "(gcloud container get-server-config).",
    )
    oidc_issuers: list[str] = Field(
        default_factory=list,
        description="OIDC issuers with a trailing '/' that the provider's discovery document names exactly so.",
    )

    @field_validator("regions")
    @classmethod
    def _regions(cls, regions: list[str]) -> list[str]:
        return _names(regions, GCP_REGION, "a region name such as us-central1")

    @field_validator("zones")
    @classmethod
    def _zones(cls, zones: list[str]) -> list[str]:
        return _names(zones, GCP_ZONE, "a zone name such as us-central1-a")

    @field_validator("gke_versions")
    @classmethod
    def _gke_versions(cls, versions: list[str]) -> list[str]:
        return _names(versions, GKE_VERSION, "a GKE version such as 1.35 or <minor>.<patch>-gke.<build>")

    @field_validator("machine_types")
    @classmethod
    def _machine_types(cls, names: list[str]) -> list[str]:
        for name in names:
            _machine_type_name(name)
        _unique(names, lambda n: n)
        return names

    @field_validator("oidc_issuers")
    @classmethod
    def _issuers(cls, issuers: list[str]) -> list[str]:
        for issuer in issuers:
            if not issuer.startswith("https://") or not issuer.endswith("/"):
                raise ValueError(f"{issuer!r}: list an https issuer that ends in '/', as the provider publishes it")
        _unique(issuers, lambda i: i)
        return issuers
