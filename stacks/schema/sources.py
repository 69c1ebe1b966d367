"""Where the stack's upstream software and images come from (mirrors), and the overrides that
let a stack name a value the schema does not know yet."""

from __future__ import annotations

from pydantic import (
    Field,
    field_validator,
    model_validator,
)

from stacks.schema.common import GCP_REGION, MIRROR_PATH, REMOTE_SCHEME, Model, _machine_type_name, _unique, problem


class Sources(Model):
    """Where upstream software is installed from: the public upstreams of the pin table
    (default), or a mirror for air-gapped and private-registry installs. `pulumi up` and
    the offline render resolve both the same way (components/sources.py)."""

    charts: str | None = Field(
        default=None,
        description="Every Helm chart from a mirror instead of its public repository: an OCI registry "
        "(`oci://europe-docker.pkg.dev/acme/charts`, chart at `<registry>/<chart>`), a Helm repository "
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

    @field_validator("charts")
    @classmethod
    def _charts(cls, value: str | None) -> str | None:
        return _mirror_location(
            value,
            ("oci://", "https://", "http://"),
            "use oci://<registry>/<path>, https://<helm repository>, or a local directory",
            "remove the key to use the public chart repositories",
        )

    @field_validator("kubeflow_manifests")
    @classmethod
    def _manifests(cls, value: str | None) -> str | None:
        value = _mirror_location(
            value,
            ("https://", "http://", "ssh://", "file://"),
            "use a git URL (https:// or ssh://) or a local directory",
            "remove the key to use github.com/kubeflow/community-distribution",
        )
        if value is not None and ("?" in value or "//" in value.split("://", 1)[-1]):
            raise ValueError(f"{value!r}: give the repository root; the tag and paths come from the pin table")
        return value

    @field_validator("remote_bases")
    @classmethod
    def _remote_bases(cls, value: str | None) -> str | None:
        return _mirror_location(
            value, (), "give a local directory (a mirror's remote/ folder)", "remove the key to fetch them from GitHub"
        )

    @model_validator(mode="after")
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
        if REMOTE_SCHEME.match(bare):
            raise ValueError(f"{value!r}: give the registry path without a scheme, e.g. {REMOTE_SCHEME.sub('', bare)!r}")
        host, slash, path = bare.partition("/")
        if "@" in bare or (slash and ":" in path):
            raise ValueError(f"{value!r} names a tag or digest; give the registry prefix alone (images keep their own tags)")
        if not MIRROR_PATH.match(bare):
            raise ValueError(
                f"{value!r} is not a registry prefix such as europe-docker.pkg.dev/acme-ml/mirror: "
                "a host (and port), then lowercase path components"
            )
        if host in ("docker.io", "index.docker.io"):
            raise ValueError(f"{value!r}: Docker Hub repositories cannot hold the mirror's nested paths; use a registry that can")
        if host.endswith("-docker.pkg.dev") and len([p for p in path.split("/") if p]) < 2:
            raise ValueError(
                f"{value!r}: an Artifact Registry mirror is a repository, <location>-docker.pkg.dev/<project>/<repository>"
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
    oidc_issuers: list[str] = Field(
        default_factory=list,
        description="OIDC issuers with a trailing '/' that the provider's discovery document names exactly so.",
    )

    @field_validator("regions")
    @classmethod
    def _regions(cls, regions: list[str]) -> list[str]:
        for region in regions:
            if not GCP_REGION.match(region):
                raise ValueError(f"{region!r} is not a region name such as us-central1")
        _unique(regions, lambda r: r)
        return regions

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
