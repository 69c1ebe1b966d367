"""How image references and registry hosts are spelled, as data: the grammar a registry client
reads an image name with, and the hosts of Docker Hub and Artifact Registry. The images mirror
and the chart mirror (stackmodel/schema/sources.py) are checked against it.

Sources:
- The reference grammar: distribution/reference v0.6.0 (the module containerd, Docker and
  Kubernetes' image tools use), reference.go (grammar, `RepositoryNameTotalLengthMax = 255`),
  regexp.go (domain-component, separator `(?:[._]|__|[-]+)`), normalize.go `splitDockerDomain`:
  the first path element is a registry host only if it contains '.' or ':', is `localhost`, or
  has an uppercase letter; otherwise the whole name is a Docker Hub repository
  (`docker.io/<name>`), and `index.docker.io` is read as `docker.io`. Read 2026-12-02 at the tag.
- Artifact Registry locations (https://docs.cloud.google.com/artifact-registry/docs/repositories/
  repo-locations, stored copy read 2026-12-02): a repository's location is a region or a
  multi-region (us, europe, asia; `gcloud artifacts locations list`). Whether every Compute
  region of facts/regions.py has Artifact Registry was NOT confirmed (the page defers to gcloud).
- Artifact Registry hosts: `<location>-<format>.pkg.dev/<project>/<repository>`, Docker images
  and Helm charts (OCI) in `docker` repositories, the other formats (`python`, `npm`, `maven`,
  `go`, `apt`, `yum`, `kfp`, `generic`) on hosts of their own; domain-scoped projects
  (`example.com:project`) written `example.com/project`. NOT confirmed from a stored copy of
  .../docker/names; it is the form the program itself writes (infra/registry.py).
- Docker Hub's other host names: registry-1.docker.io (its registry endpoint, what Helm's docs
  name for OCI charts), index.docker.io (the legacy one above), registry.hub.docker.com and
  hub.docker.com (its web and API hosts); NOT confirmed from a stored copy beyond normalize.go.
"""

from __future__ import annotations

import re

NAME_MAX = 255
"""The longest repository name (host and path, no tag): distribution/reference `RepositoryNameTotalLengthMax`."""
DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*"
HOST = re.compile(rf"^{DOMAIN_COMPONENT}(?:\.{DOMAIN_COMPONENT})*(?::(?P<port>[0-9]+))?$")
PATH = re.compile(rf"^{PATH_COMPONENT}(?:/{PATH_COMPONENT})*$")
PORT_MAX = 65535
LOCALHOST = "localhost"
DOCKER_HUB_HOSTS = ("docker.io", "index.docker.io", "registry-1.docker.io", "registry.hub.docker.com", "hub.docker.com")
ARTIFACT_REGISTRY = re.compile(r"^(?P<location>[a-z0-9-]+?)-(?P<format>[a-z]+)\.pkg\.dev$")
ARTIFACT_REGISTRY_FORMATS = ("docker", "python", "npm", "maven", "go", "apt", "yum", "kfp", "generic")
ARTIFACT_REGISTRY_MULTI_REGIONS = ("us", "europe", "asia")


def is_registry_host(first: str) -> bool:
    """Whether a registry client reads `first`, a name's first path element, as a host (else:
    a Docker Hub namespace)."""
    return "." in first or ":" in first or first == LOCALHOST or first.lower() != first

SOURCE_NAME_ROOM = 100
"""Characters a mirror prefix leaves for `/<source registry>/<path>` (this project's choice: the
platform's images are named in up to about 60, e.g. ghcr.io/kubeflow/trainer/deepspeed-runtime,
so a prefix of at most NAME_MAX - SOURCE_NAME_ROOM keeps every mirrored name within NAME_MAX)."""
