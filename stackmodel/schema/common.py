"""What every part of the stack file's schema shares: the base model and its error
(`problem`), names, quantities, e-mail addresses, and the patterns of GCP and Kubernetes
names (each with its source)."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Any, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictInt,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from facts.limits import INT64_MAX
from stackmodel import quantity

DNS_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
# Prometheus --storage.tsdb.retention.time units we accept (prometheus.io/docs, "Storage").
RETENTION = re.compile(r"^[1-9][0-9]*(h|d|w|y)$")
# prometheus/common v0.70.1 model/time.go: y is 365 days, w 7.
RETENTION_SECONDS = {"h": 3600, "d": 86400, "w": 7 * 86400, "y": 365 * 86400}
# Artifact Registry repository ids (cloud.google.com/artifact-registry/docs/repositories/create-repos):
# lowercase letters, digits and hyphens, starting with a letter, at most 63 characters.
REPOSITORY_ID = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")
REGISTRY_MULTI_REGIONS = ("us", "europe", "asia")
IAM_MEMBER = re.compile(r"^(user:|group:|serviceAccount:|domain:)[^\s:]+$|^principal(Set)?://\S+$")
# An image registry path (`host[:port]/path`, no scheme, no tag): where our notebook images are pulled from.
REGISTRY_PATH = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)+$")
# A registry prefix images are pulled through (`host[:port][/path]`): the images mirror.
MIRROR_PATH = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*$")
# A Go time.Duration as Kueue's configuration reads it (metav1.Duration), in whole h, m, s.
DURATION = re.compile(r"^([0-9]+h)?([0-9]+m)?([0-9]+s)?$")


def duration_seconds(duration: str) -> Decimal:
    """A DURATION such as 4h or 1h30m in seconds."""
    return sum((Decimal(n) * {"h": 3600, "m": 60, "s": 1}[u] for n, u in re.findall(r"([0-9]+)([hms])", duration)), Decimal(0))


# Smallest volume or memory we accept: anything below is a missing unit (a bare 50 is 50 bytes).
MIN_VOLUME_BYTES = MIN_MEMORY_BYTES = 2**20
# Compute Engine "Regions and zones" (cloud.google.com/compute/docs/regions-zones): a
# region is `<geography>-<area><number>` (us-central1, europe-west10), a zone its region,
# '-' and a letter (europe-west10-a is in europe-west10, not europe-west1).
EMAIL_DOMAIN = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?\.)+[a-z]{2,63}$")
GKE_VERSION = re.compile(r"^1\.[0-9]+(\.[0-9]+(-gke\.[0-9]+)?)?$")
GCP_REGION = re.compile(r"^[a-z]+-[a-z]+[0-9]+$")
GCP_ZONE = re.compile(r"^[a-z]+-[a-z]+[0-9]+-[a-z]$")
REGIONAL_ZONES = 3
# Resource Manager "Creating and managing projects" (cloud.google.com/resource-manager/docs/
# creating-managing-projects): a project ID is 6-30 lowercase letters, digits and hyphens,
# starts with a letter, does not end with a hyphen; older projects may be domain-scoped
# (`example.com:my-project`).
GCP_PROJECT_ID = re.compile(r"^([a-z0-9][-a-z0-9.]*\.[a-z]{2,}:)?[a-z][-a-z0-9]{4,28}[a-z0-9]$")
# Compute Engine "Naming resources" (cloud.google.com/compute/docs/naming-resources): 1-63
# characters, `[a-z]([-a-z0-9]*[a-z0-9])?`. A node pool takes a reservation by that name in
# the project, or a shared one as `projects/<project>/reservations/<name>` (Compute API
# ReservationAffinity.values), optionally one block of it (`<reservation>/reservationBlocks/<block>`).
COMPUTE_NAME = r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?"
RESERVATION_NAME = re.compile(
    rf"^(projects/[a-z][-a-z0-9]{{4,28}}[a-z0-9]/reservations/)?{COMPUTE_NAME}(/reservationBlocks/{COMPUTE_NAME})?$"
)
# Cloud Storage "Bucket locations" (cloud.google.com/storage/docs/locations): a region, a
# multi-region, or a predefined dual-region.
BUCKET_MULTI_REGIONS = ("ASIA", "EU", "US")
BUCKET_DUAL_REGIONS = ("ASIA1", "EUR4", "EUR5", "EUR7", "EUR8", "NAM4")
# Kubernetes DNS subdomain (RFC 1123), as Kueue's CRDs validate cohortName (kueue v0.19.2
# config/components/crd/bases/kueue.x-k8s.io_clusterqueues.yaml): at most 253 characters.
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS_SUBDOMAIN_MAX = 253
# Namespaces a team must never take, with who owns each: a team (a Profile) of that name
# would take the namespace over, its quota, policies and RBAC replacing the owner's.
_KUBERNETES = "Kubernetes"
_PLATFORM = "the platform"
RESERVED_NAMESPACES: dict[str, str] = {
    # Kubernetes' own (kubernetes.io/docs/concepts/overview/working-with-objects/namespaces).
    "default": _KUBERNETES,
    # The platform's: Kubeflow's (kubeflow/manifests 26.03: kubeflow, kubeflow-system, auth for
    # Dex, oauth2-proxy, istio-system) and the operators' namespaces components/ install into.
    "kubeflow": _PLATFORM,
    "kubeflow-system": _PLATFORM,
    "istio-system": _PLATFORM,
    "auth": _PLATFORM,
    "oauth2-proxy": _PLATFORM,
    "cert-manager": _PLATFORM,
    "kueue-system": _PLATFORM,
    "kuberay-system": _PLATFORM,
    "jobset-system": _PLATFORM,
    "monitoring": _PLATFORM,
    "dcgm-exporter": _PLATFORM,
    "nvidia-dra-driver-gpu": _PLATFORM,  # NVIDIA's DRA driver (components/dra.py NAMESPACE)
    "gpu-operator": "NVIDIA's GPU operator",
    # kind's: its default StorageClass, the local-path provisioner (kubernetes-sigs/kind
    # v0.32.0 and v0.33.0-alpha pkg/build/nodeimage/const_storage.go; v0.33.0 is the pin).
    "local-path-storage": "kind (its local-path storage provisioner)",
    # GKE's Managed Service for Prometheus: its operator's manifest creates both
    # (GoogleCloudPlatform/prometheus-engine manifests/operator.yaml); Google's managed-
    # collection docs: nothing is to be deployed in gmp-system, gmp-public holds the
    # OperatorConfig (cloud.google.com/kubernetes-engine/multi-cloud/docs/azure/how-to/
    # managed-service-prometheus, read 2026-12-01).
    "gmp-system": "GKE (Managed Service for Prometheus)",
    "gmp-public": "GKE (Managed Service for Prometheus)",
}
RESERVED_NAMESPACE_PREFIXES: dict[str, str] = {
    "kube-": _KUBERNETES,
    # GKE creates its system and managed-service namespaces under gke-: gke-managed-system,
    # gke-managed-cim, gke-managed-filestorecsi, gke-managed-parallelstorecsi,
    # gke-managed-volumepopulator, gke-gmp-system, gke-connect, ... (a new cluster's
    # `kubectl get namespaces`; GKE Warden refuses changes to them as "managed"), and more as
    # features are switched on, so the whole prefix is GKE's.
    "gke-": "GKE (its system and managed-service namespaces)",
}
# GPU pool names other objects already take, with the reason: the system pool's GKE name,
# and Kueue's ResourceFlavor for CPU-only nodes (components/kueue.py DEFAULT_FLAVOR; every
# pool also gets a flavor of its name).
RESERVED_POOL_NAMES = {
    "system": "the system pool's name",
    "default": "the name of Kueue's ResourceFlavor for CPU-only nodes",
}


@dataclass(frozen=True)
class ValueKind:
    """What a value of an annotated type is ("e-mail address", "quantity"), for the stack-file
    reference (docs/reference.md) and the mutation tests; pydantic ignores it. The last one in an annotation's
    metadata is the most specific."""

    name: str


def problem(field: str, message: str) -> PydanticCustomError:
    """A validation error attributed to `field` of the model that raises it."""
    return PydanticCustomError("config", message, {"field": field})


def problems(found: Sequence[tuple[str, str]]) -> PydanticCustomError:
    """Every problem a validator found at once, each (field, message) attributed to its field
    of the model that raises it (stackmodel/config.py reports them one by one)."""
    field, message = found[0]
    return PydanticCustomError("config", message, {"field": field, "more": list(found[1:])})


RuleCheck = TypeVar("RuleCheck", bound=Callable[..., Any])


def rule(rule_id: str) -> Callable[[RuleCheck], RuleCheck]:
    """Give a model validator its ID in the one rule namespace (docs/development.md, "Where a
    rule goes"): a rule over one model's own fields, judged as the model is parsed."""

    def named(check: RuleCheck) -> RuleCheck:
        check.rule_id = rule_id  # type: ignore[attr-defined]
        return check

    return named


def rule_id(check: Any) -> str | None:
    """The rule ID a model validator was given (`rule`), if any."""
    return getattr(check, "rule_id", None)


class Model(BaseModel):
    """Base of every stack-file model: camelCase keys, unknown keys rejected."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
        use_enum_values=False,
    )


def _dns_label(value: str, max_length: int) -> str:
    if len(value) > max_length or not DNS_LABEL.match(value):
        raise ValueError(
            f"{value!r} is not a valid name: use lowercase letters, digits and '-', "
            f"start with a letter, at most {max_length} characters"
        )
    return value


ShortName = Annotated[str, AfterValidator(lambda v: _dns_label(v, 40))]
"""GKE caps cluster and node pool names at 40 characters."""


def zone_region(zone: str) -> str:
    """The region a zone is in: its name without the last '-<letter>'."""
    return zone.rsplit("-", 1)[0]


# The gateway's hostname goes into a GKE Ingress rule (networking/v1 IngressRule.host: a
# lowercase DNS name, no IP, port or path) and a ManagedCertificate, which certifies no
# wildcard domain (GoogleCloudPlatform/gke-managed-certs README: "multi-SAN non-wildcard").
HOSTNAME = re.compile(r"^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\.)+[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")


def _hostname(value: str | None) -> str | None:
    if value is None:
        return None
    if REMOTE_SCHEME.match(value) or "/" in value:
        bare = REMOTE_SCHEME.sub("", value).split("/", 1)[0]
        raise ValueError(f"{value!r} is a URL; give the hostname alone, e.g. {bare!r}")
    if ":" in value:
        raise ValueError(f"{value!r} has a port; give the hostname alone (the gateway serves HTTPS on 443)")
    if value != value.lower():
        raise ValueError(f"{value!r}: hostnames are lowercase here; use {value.lower()!r}")
    if len(value) > DNS_SUBDOMAIN_MAX or not HOSTNAME.match(value):
        raise ValueError(f"{value!r} is not a DNS hostname such as kubeflow.example.com (no wildcard, no trailing dot)")
    return value


def _resource_quantity(value: object) -> object:
    """A quota or request: a Kubernetes quantity of 0 or more (the API server rejects
    negative ones), kept as written; YAML numbers (64, 0.5) become their text."""
    text = str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value
    if quantity.parse(text) < 0:
        raise ValueError(f"{text!r} is negative; use 0 or more")
    return text


ResourceQuantity = Annotated[str, BeforeValidator(_resource_quantity), ValueKind("quantity")]


def _memory_quantity(value: str) -> str:
    """Memory with its unit: a bare number counts bytes, so `16` (meant as 16Gi) would give
    16 bytes; anything between 0 and 1Mi is such a slip."""
    size = quantity.parse(value)
    if 0 < size < MIN_MEMORY_BYTES:
        raise ValueError(
            f"{value!r} is {size} bytes: a bare number counts bytes; give the unit, e.g. {value}Gi (at least 1Mi)"
        )
    return value


MemoryQuantity = Annotated[ResourceQuantity, AfterValidator(_memory_quantity), ValueKind("memory quantity")]
"""Memory as a Kubernetes quantity with its unit (0, or at least 1Mi)."""

Int64 = Annotated[StrictInt, Field(ge=0, le=INT64_MAX), ValueKind("int (0 to 2^63-1)")]
"""A count an API keeps as int64 (NAP limits, GPU quotas): 0 to 2^63-1."""


def _cidr_text(value: object) -> object:
    """Ranges are written as text: pydantic would read a bare number as an address (5 -> 0.0.0.5/32)."""
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not an IPv4 range such as 10.0.0.0/20: write it as text")
    return value


Cidr = Annotated[ipaddress.IPv4Network, BeforeValidator(_cidr_text)]


def _text(what: str, spaces: bool = False) -> AfterValidator:
    """A value that must say something: not empty, no surrounding spaces, and (unless
    `spaces`) none inside (an id or a client ID never has one)."""

    def check(value: str) -> str:
        if not value.strip():
            raise ValueError(f"empty; give the {what}")
        if value != value.strip() or (not spaces and any(c.isspace() for c in value)):
            raise ValueError(f"{value!r}: the {what} has no spaces; remove them")
        if not value.isprintable():
            raise ValueError(f"{value!r}: the {what} has a control character; remove it")
        return value

    return AfterValidator(check)


# --- e-mail addresses, as the sign-in path compares them ---------------------------------
# Who an address is, read at the pinned tags:
# - Dex v2.45.0 looks static users up by the lowercased address and keeps the last of two
#   that differ only in case (storage/static.go WithStaticPasswords, GetPassword), but signs
#   the user in with the address as written in its config (server/server.go passwordDB.Login,
#   `Email: p.Email`); its OIDC connector passes on the upstream provider's `email` claim.
# - oauth2-proxy v7.14.3 lowercases before it compares with email_domains and the
#   authenticated-emails file (validator.go newValidatorImpl, LoadAuthenticatedEmailsFile:
#   a CSV file, ',' separating and '#' starting a comment).
# - The profile controller and KFAM compare exactly: Profile owner vs the kubeflow-userid
#   header in ns-owner-access-istio, `prof.Spec.Owner.Name == queryUser` (kubeflow/kubeflow
#   v1.10.0 and kubeflow/dashboard v2.0.0 components/profile-controller/controllers/
#   profile_controller.go, components/access-management/kfam/api_default.go isOwnerOrAdmin).
# - Istio matches header values exactly and case-sensitively, reading a leading or trailing
#   '*' as a wildcard (istio/istio 1.29.0 pilot/pkg/security/authz/matcher/header.go
#   HeaderMatcher: StringMatcherExact(v, false)).
# So an address is kept exactly as written (case and all), two spellings of one address
# are refused (stackmodel/rules/ identities-spelled-alike), and the characters are those an
# identity provider puts in an account's address: ASCII letters, digits, '.', '_', '-',
# "'" (Google Workspace usernames, support.google.com/a/answer/9193374) and '+' (Dex static
# users, sub-addresses); no '*' (a wildcard to Istio), ',' or '#' (oauth2-proxy's file), no
# spaces, quotes or non-ASCII (kubeflow-userid is an HTTP header). The domain is lowercase:
# domains are case-insensitive (RFC 5321 section 2.4) and oauth2-proxy lowercases them.
EMAIL_LOCAL = re.compile(r"^[A-Za-z0-9_'+-]+(\.[A-Za-z0-9_'+-]+)*$")
EMAIL_LOCAL_MAX = 64
EMAIL_MAX = 254
"""RFC 5321 section 4.5.3.1: a local part of at most 64 octets, a path of 256 with its brackets."""


def _email(value: str) -> str:
    local, at, domain = value.rpartition("@")
    example = "such as ana@acme.com"
    if not at or not local or "@" in local:
        raise ValueError(f"{value!r} is not an e-mail address {example}")
    if not value.isascii() or any(c.isspace() or not c.isprintable() for c in value):
        raise ValueError(
            f"{value!r} has spaces or characters outside ASCII: identity providers send addresses of ASCII "
            "letters, digits and . _ - ' + (and kubeflow-userid is an HTTP header); write the address as they do"
        )
    if len(local) > EMAIL_LOCAL_MAX or len(value) > EMAIL_MAX:
        raise ValueError(f"{value!r} is too long: at most 64 characters before the '@' and 254 in all (RFC 5321)")
    if not EMAIL_LOCAL.match(local):
        raise ValueError(
            f"{value!r}: before the '@' an address has ASCII letters, digits and . _ - ' + (no '..', no '.' first or "
            "last); '*' would be a wildcard to Istio, ',' and '#' split oauth2-proxy's list, quotes and other "
            "characters are not what identity providers send"
        )
    if domain != domain.lower() and _is_domain(domain.lower()):
        raise ValueError(
            f"{value!r}: write the domain in lowercase ({local}@{domain.lower()}); domains are case-insensitive "
            "and oauth2-proxy lowercases them, but Istio compares the address exactly"
        )
    if not _is_domain(domain):
        raise ValueError(f"{value!r}: {domain!r} is not an e-mail domain {example} (lowercase, at least one '.')")
    return value


def _is_domain(domain: str) -> bool:
    return bool(EMAIL_DOMAIN.match(domain)) and all(len(label) <= 63 for label in domain.split("."))


Email = Annotated[str, AfterValidator(_email), ValueKind("e-mail address")]
"""An e-mail address as people sign in with it, kept exactly as written (see above)."""


def _group_name(value: str) -> str:
    """A group as the identity provider names it in the token's `groups` claim: an e-mail
    (Google Workspace, often Okta), a name or path (Keycloak `/ml/vision`), an object ID (Entra ID)."""
    if not value or value != value.strip() or not value.isascii() or any(c.isspace() or not c.isprintable() for c in value):
        raise ValueError(
            f"{value!r} is not a group name such as ml-vision@acme.com: ASCII, no spaces (a token's groups claim "
            "and the kubeflow-groups header carry it as the identity provider sends it)"
        )
    if "*" in value or "," in value:
        raise ValueError(
            f"{value!r}: '*' would be a wildcard to Istio, and ',' splits the kubeflow-groups header; "
            "write the group as the identity provider sends it"
        )
    if value.startswith("system:"):
        # Kubernetes' own groups (system:authenticated: every identity the API server accepts,
        # on GKE any Google account; kubernetes.io "Using RBAC Authorization", Default roles).
        raise ValueError(
            f"{value!r}: groups named system:* are Kubernetes' own (system:authenticated is everyone the API server "
            "accepts); name a group of your identity provider"
        )
    if len(value) > EMAIL_MAX:
        raise ValueError(f"{value!r} is too long: at most {EMAIL_MAX} characters")
    return value


GroupName = Annotated[str, AfterValidator(_group_name), ValueKind("group name")]
"""A group, spelled exactly as the identity provider puts it into the token's groups claim."""


def _unique(entries: list[Any], key: Callable[[Any], Any], why: str = "") -> None:
    """Refuse the first entry of `entries` whose `key` an earlier one has: the error names its
    index and the earlier one's."""
    first: dict[Any, int] = {}
    for i, entry in enumerate(entries):
        k = key(entry)
        if k in first:
            shown = entry if isinstance(entry, str) else k
            raise PydanticCustomError(
                "config", f"{shown} is listed twice (also at [{first[k]}]){why}; keep one", {"field": i}
            )
        first[k] = i


def _volume_size(value: str) -> str:
    too_small = f"{value!r} is not a volume size such as 50Gi: a Kubernetes quantity of at least 1Mi (a bare number counts bytes)"
    if not isinstance(value, str) or not quantity.GRAMMAR.fullmatch(value):
        raise ValueError(too_small)
    try:
        size = quantity.parse(value)
    except ValueError as err:  # more than Kubernetes holds, or finer than it keeps
        raise ValueError(f"{err}; a volume size is a quantity such as 50Gi") from None
    if size < MIN_VOLUME_BYTES:
        raise ValueError(too_small)
    return value


VolumeSize = Annotated[
    str, BeforeValidator(lambda v: str(v) if isinstance(v, int) and not isinstance(v, bool) else v), AfterValidator(_volume_size)
]
"""A PersistentVolumeClaim's size: a Kubernetes quantity of at least MIN_VOLUME_BYTES."""


# Compute Engine machine type names (cloud.google.com/compute/docs/machine-resource):
# `<series>-<type>-<vCPUs>` (e2-standard-8, a3-highgpu-8g), lowercase.
MACHINE_TYPE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)+$")


def _machine_type_name(value: str) -> str:
    if not MACHINE_TYPE.match(value):
        raise ValueError(f"{value!r} is not a machine type name such as e2-standard-8 (lowercase, series-type-size)")
    return value


# A source location with a scheme (a remote repository), not a local directory.

REMOTE_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://")
