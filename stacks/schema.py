"""The one schema of a stack file: what `stacks/Pulumi.<env>.yaml` may say.

Field aliases are the keys a platform team writes (camelCase, and the namespaced
top-level keys `gcp:project`, `mlplatform:cluster`, ...), so every error path reads
exactly like the stack file. Defaults live on the fields; a field whose change
replaces live infrastructure says so in its description ("replaces ...").

Checks that span one model raise `problem(field, message)` so that the path names the
field; checks that span the whole stack (pools vs autoprovisioning, teams vs pools)
are the rules of stacks/rules.py and run once every part has its type.
"""

from __future__ import annotations

import datetime
import ipaddress
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from facts.gpu_catalog import ACCELERATORS, describe_machine_types
from facts.limits import GO_DURATION_MAX_SECONDS, INT64_MAX
from facts.naming import bucket_name_problem
from facts.node_labels import Taint, reserved_key
from facts.oidc_issuers import PUBLISHED as PUBLISHED_ISSUERS
from stacks import quantity

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
    """What a value of an annotated type is ("e-mail address", "quantity"), for the README
    reference and the mutation tests; pydantic ignores it. The last one in an annotation's
    metadata is the most specific."""

    name: str


def problem(field: str, message: str) -> PydanticCustomError:
    """A validation error attributed to `field` of the model that raises it."""
    return PydanticCustomError("config", message, {"field": field})


def problems(found: Sequence[tuple[str, str]]) -> PydanticCustomError:
    """Every problem a validator found at once, each (field, message) attributed to its field
    of the model that raises it (stacks/config.py reports them one by one)."""
    field, message = found[0]
    return PydanticCustomError("config", message, {"field": field, "more": list(found[1:])})


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
# are refused (stacks/rules.py identities-spelled-alike), and the characters are those an
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
    try:
        size: Decimal | None = quantity.parse(value)
    except ValueError:
        size = None
    if size is None or size < MIN_VOLUME_BYTES:
        raise ValueError(
            f"{value!r} is not a volume size such as 50Gi: a Kubernetes quantity of at least 1Mi "
            "(a bare number counts bytes)"
        )
    return value


VolumeSize = Annotated[
    str, BeforeValidator(lambda v: str(v) if isinstance(v, int) and not isinstance(v, bool) else v), AfterValidator(_volume_size)
]
"""A PersistentVolumeClaim's size: a Kubernetes quantity of at least MIN_VOLUME_BYTES."""


# --- cluster ------------------------------------------------------------------------


class Environment(str, Enum):
    DEV = "dev"
    STAGING = "staging"
    PROD = "prod"
    CI = "ci"


class ReleaseChannel(str, Enum):
    RAPID = "RAPID"
    REGULAR = "REGULAR"
    STABLE = "STABLE"


class Provisioning(str, Enum):
    """How a GPU pool obtains its VMs."""

    ON_DEMAND = "on-demand"
    SPOT = "spot"
    QUEUED = "queued"
    """Dynamic Workload Scheduler flex-start with queued provisioning: all nodes at once, only
    through ProvisioningRequests, which Kueue's admission check on the pool's flavor creates."""
    FLEX_START = "flex-start"
    """Dynamic Workload Scheduler flex-start: best-effort VMs for up to 7 days."""
    RESERVATION = "reservation"


class SharingStrategy(str, Enum):
    TIME_SHARING = "time-sharing"
    MPS = "mps"
    MIG = "mig"


class DriverVersion(str, Enum):
    LATEST = "LATEST"
    DEFAULT = "DEFAULT"
    INSTALLATION_DISABLED = "INSTALLATION_DISABLED"


class GpuSharing(Model):
    """Several pods on one GPU. Changing it replaces the pool."""

    strategy: SharingStrategy = Field(
        description="time-sharing or mps (with maxSharedClients), or mig (with partitionSize)."
    )
    max_shared_clients: StrictInt | None = Field(
        default=None, ge=2, le=48, description="time-sharing / mps: pods per GPU."
    )
    partition_size: str | None = Field(
        default=None, description="mig: the MIG profile, e.g. 1g.10gb."
    )

    @model_validator(mode="after")
    def _strategy_fields(self) -> GpuSharing:
        if self.strategy is SharingStrategy.MIG:
            if self.partition_size is None:
                raise problem("partitionSize", "mig needs partitionSize, e.g. 1g.10gb")
            if self.max_shared_clients is not None:
                raise problem("maxSharedClients", "mig takes partitionSize, not maxSharedClients")
        else:
            if self.max_shared_clients is None:
                raise problem(
                    "maxSharedClients",
                    f"{self.strategy.value} needs maxSharedClients (2..48 pods per GPU)",
                )
            if self.partition_size is not None:
                raise problem("partitionSize", "partitionSize is only for strategy mig")
        return self


# Compute Engine machine type names (cloud.google.com/compute/docs/machine-resource):
# `<series>-<type>-<vCPUs>` (e2-standard-8, a3-highgpu-8g), lowercase.
MACHINE_TYPE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)+$")


def _machine_type_name(value: str) -> str:
    if not MACHINE_TYPE.match(value):
        raise ValueError(f"{value!r} is not a machine type name such as e2-standard-8 (lowercase, series-type-size)")
    return value


# --- a pool's own node labels and taints ---------------------------------------------
# Kubernetes label syntax (kubernetes.io/docs/concepts/overview/working-with-objects/labels,
# "Syntax and character set"; apimachinery IsQualifiedName / IsValidLabelValue, which also
# judge a taint's key and value): a key is an optional DNS-subdomain prefix and '/', then a
# name of at most 63 characters, alphanumerics at both ends and '-', '_', '.' between; a
# value is empty or such a name.
LABEL_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$")
LABEL_VALUE_MAX = 63


def _label_key_problem(key: str) -> str | None:
    prefix, slash, name = key.rpartition("/")
    if (slash and (not prefix or len(prefix) > DNS_SUBDOMAIN_MAX or not DNS_SUBDOMAIN.match(prefix))) or not LABEL_NAME.match(name):
        return (
            f"{key!r} is not a Kubernetes label key: an optional DNS prefix and '/' (acme.com/), then at most 63 "
            "letters, digits, '-', '_' or '.', a letter or digit at each end"
        )
    owner = reserved_key(key)
    return f"{key!r} is {owner}; use a key of your own, such as acme.com/{name}" if owner else None


def _label_value_problem(key: str, value: str) -> str | None:
    if value and (len(value) > LABEL_VALUE_MAX or not LABEL_NAME.match(value)):
        return (
            f"{value!r} (for {key}) is not a Kubernetes label value: empty, or at most 63 letters, digits, '-', '_' "
            "or '.', a letter or digit at each end"
        )
    return None


def _node_labels(labels: dict[str, str]) -> dict[str, str]:
    found = [
        (key, message)
        for key, value in labels.items()
        for message in (_label_key_problem(key), _label_value_problem(key, value))
        if message
    ]
    if found:
        raise problems(found)
    return labels


NodeLabels = Annotated[dict[str, str], AfterValidator(_node_labels), ValueKind("map of label key to value")]
"""Kubernetes labels on a pool's nodes, none of the platform's or GKE's keys."""


class TaintEffect(str, Enum):
    NO_SCHEDULE = "NoSchedule"
    PREFER_NO_SCHEDULE = "PreferNoSchedule"
    NO_EXECUTE = "NoExecute"


class PoolTaint(Model):
    """A taint on a GPU pool's nodes besides the platform's own GPU taint: pods that do not
    tolerate it stay off the pool. Everything of the platform that targets the pool (its
    runtimes, Kueue flavor, team Ray workers, notebook form, DCGM exporter) tolerates it, so it
    keeps off the rest, such as GPU pods that reach the pool without going through the platform."""

    key: str = Field(description="Taint key, e.g. acme.com/dedicated; not the platform's or under kubernetes.io/, k8s.io/ or cloud.google.com/.")
    value: str = Field(default="", description="Taint value (may be empty).")
    effect: TaintEffect = Field(default=TaintEffect.NO_SCHEDULE, description="What the taint does to pods that do not tolerate it.")

    @model_validator(mode="after")
    def _syntax(self) -> PoolTaint:
        found = [("key", m) for m in (_label_key_problem(self.key),) if m]
        found += [("value", m) for m in (_label_value_problem(self.key, self.value),) if m]
        if found:
            raise problems(found)
        return self

    def taint(self) -> Taint:
        return Taint(key=self.key, value=self.value, effect=self.effect.value)


class SystemPool(Model):
    """The small CPU pool that runs the platform's controllers."""

    machine_type: str = Field(
        default="e2-standard-8",
        description="Machine type of the nodes, one facts/prices.py knows (or in mlplatform:overrides.machineTypes). "
        "Replaces the pool.",
    )
    min: StrictInt = Field(default=1, ge=1, le=100, description="Nodes per zone at least.")
    max: StrictInt = Field(default=3, ge=1, le=1000, description="Nodes per zone at most.")
    disk_size_gb: StrictInt = Field(default=100, ge=20, le=4096, description="Boot disk per node (GB). Replaces the pool.")
    labels: NodeLabels = Field(
        default_factory=dict,
        description="Kubernetes labels on the nodes besides GKE's (e.g. acme.com/cost-center: ml). Replaces the pool. "
        "The system pool takes no taints: the platform's controllers run there.",
    )

    @field_validator("machine_type")
    @classmethod
    def _machine_type(cls, value: str) -> str:
        return _machine_type_name(value)

    @model_validator(mode="after")
    def _min_le_max(self) -> SystemPool:
        if self.min > self.max:
            raise problem("min", f"min {self.min} is above max {self.max}; lower min or raise max")
        return self


class GpuPool(Model):
    """One GPU node pool. Accelerator, machine type, sharing, driver, taints and
    labels replace the pool when changed; sizes do not. Every problem of a pool is
    reported at once."""

    name: ShortName = Field(
        description="Node pool name, also the runtime suffix (torch-distributed-<name>); not system or default."
    )
    accelerator: str = Field(description="GKE accelerator name, e.g. nvidia-l4. Replaces the pool.")
    machine_type: str = Field(description="A machine type that carries the accelerator. Replaces the pool.")
    min: StrictInt = Field(default=0, ge=0, le=1000, description="Nodes per zone at least; 0 lets the pool idle at no cost.")
    max: StrictInt = Field(ge=1, le=1000, description="Nodes per zone at most.")
    provisioning: Provisioning = Field(
        default=Provisioning.ON_DEMAND,
        description="queued: flex-start with queued provisioning, nodes only through Kueue's "
        "ProvisioningRequests (needs the kueue component). Replaces the pool.",
    )
    reservation: str | None = Field(default=None, description="Reservation name, with provisioning: reservation.")
    compact_placement: StrictBool = Field(default=False, description="COMPACT placement policy (one zone). Replaces the pool.")
    zones: list[str] | None = Field(default=None, description="Node locations; default: the cluster's.")
    gvnic: StrictBool = Field(default=True, description="Google Virtual NIC on the nodes; fastSocket needs it.")
    fast_socket: StrictBool = Field(default=False, description="NCCL Fast Socket (needs gvnic).")
    sharing: GpuSharing | None = Field(
        default=None, description="Several pods on one GPU: time-sharing, MPS or MIG. Replaces the pool."
    )
    driver_version: DriverVersion = Field(
        default=DriverVersion.LATEST,
        description="The NVIDIA driver GKE installs; INSTALLATION_DISABLED installs none. Replaces the pool.",
    )
    disk_size_gb: StrictInt = Field(default=200, ge=50, le=65536, description="Boot disk per node (GB). Replaces the pool.")
    labels: NodeLabels = Field(
        default_factory=dict,
        description="Kubernetes labels on the nodes besides the platform's and GKE's (e.g. acme.com/cost-center: ml). "
        "Replaces the pool.",
    )
    taints: list[PoolTaint] = Field(
        default_factory=list,
        description="Taints on the nodes besides the platform's nvidia.com/gpu one, each key and effect once; the platform's "
        "workloads for the pool tolerate them, everything else stays off. Replaces the pool.",
    )

    @field_validator("taints")
    @classmethod
    def _taints(cls, taints: list[PoolTaint]) -> list[PoolTaint]:
        _unique(taints, lambda t: f"the taint {t.key}:{t.effect.value}", "; a node takes one taint per key and effect")
        return taints

    @field_validator("zones")
    @classmethod
    def _zones(cls, zones: list[str] | None) -> list[str] | None:
        for i, zone in enumerate(zones or []):
            if not GCP_ZONE.match(zone):
                hint = f"; {zone!r} is a region, its zones are {zone}-<letter>" if GCP_REGION.match(zone) else ""
                raise ValueError(f"{zone!r} is not a GCP zone such as us-central1-a{hint}")
            if zone in (zones or [])[:i]:
                raise ValueError(f"zone {zone!r} is listed twice; keep one")
        if zones == []:
            raise ValueError("an empty zone list leaves the pool nowhere; remove zones to use the cluster's")
        return zones

    @field_validator("reservation")
    @classmethod
    def _reservation(cls, value: str | None) -> str | None:
        if value is not None and not RESERVATION_NAME.match(value):
            raise ValueError(
                f"{value!r} is not a reservation name: 1-63 lowercase letters, digits and '-', a letter first "
                "(or projects/<project>/reservations/<name> for a shared one)"
            )
        return value

    @model_validator(mode="after")
    def _fits_catalog(self) -> GpuPool:
        """Every problem of the pool at once: what needs the accelerator's catalog entry is
        judged only when the accelerator is known, everything else always."""
        found: list[tuple[str, str]] = []
        acc = ACCELERATORS.get(self.accelerator)
        if acc is None:
            found.append(("accelerator", f"unknown accelerator {self.accelerator!r}; use one of {', '.join(ACCELERATORS)}"))
        elif self.machine_type not in acc.machine_types:
            found.append(
                ("machineType", f"{self.machine_type!r} cannot carry {acc.name}; use one of {describe_machine_types(acc)}")
            )
        if self.min > self.max:
            found.append(("min", f"min {self.min} is above max {self.max}; lower min or raise max"))
        dws = self.provisioning in (Provisioning.QUEUED, Provisioning.FLEX_START)
        if dws and acc is not None and not acc.dws:
            found.append(
                ("provisioning", f"{self.provisioning.value} is not offered for {acc.name}; use on-demand, spot or reservation")
            )
        if dws and self.min != 0:
            found.append(("min", f"{self.provisioning.value} pools start empty; set min to 0"))
        if (self.provisioning is Provisioning.RESERVATION) != (self.reservation is not None):
            found.append(
                ("reservation", "set reservation (the reservation's name) exactly when provisioning is reservation")
            )
        if self.compact_placement:
            if acc is not None and not acc.compact_placement:
                found.append(("compactPlacement", f"{acc.family} machines do not support compact placement; remove it"))
            if self.zones is None or len(self.zones) != 1:
                found.append(("zones", "compactPlacement keeps nodes in one zone; set zones to exactly one zone"))
        if self.fast_socket and not self.gvnic:
            found.append(("fastSocket", "NCCL Fast Socket needs gvnic: true"))
        if self.fast_socket and acc is not None and not acc.fast_socket:
            found.append(("fastSocket", f"NCCL Fast Socket is not supported on {acc.name}; remove it"))
        sharing = self.sharing
        if acc is not None and sharing and sharing.strategy is SharingStrategy.MIG and sharing.partition_size not in acc.mig_partitions:
            allowed = ", ".join(acc.mig_partitions) or "none: this GPU has no MIG"
            found.append(
                (
                    "sharing",
                    f"partitionSize {sharing.partition_size!r} is not a MIG profile of {acc.name}; use one of {allowed}",
                )
            )
        if found:
            raise problems(found)
        return self

    @property
    def spot(self) -> bool:
        """Spot VMs: GKE labels their nodes, and every selector of the pool includes that label."""
        return self.provisioning is Provisioning.SPOT

    @property
    def gpus_per_node(self) -> int:
        return ACCELERATORS[self.accelerator].gpus_per_node(self.machine_type)

    @property
    def extra_taints(self) -> tuple[Taint, ...]:
        """The stack's own taints of the pool (facts/node_labels.py pool_taints adds the platform's)."""
        return tuple(t.taint() for t in self.taints)


class Autoprovisioning(Model):
    """Node auto-provisioning (NAP): GKE creates pools for pending pods within these limits.

    The limits are cluster-wide totals over every node, the fixed pools' included, so they
    cover the system and GPU pools at full size, and each GPU pool's accelerator needs one
    (by accelerator name, e.g. nvidia-l4) or that pool cannot grow.
    """

    enabled: StrictBool = Field(
        default=False, description="Let GKE create node pools for pending pods; needs cpu and memory limits."
    )
    limits: dict[str, Int64] = Field(
        default_factory=dict,
        description="cpu (cores), memory (GiB) and GPUs per accelerator name, cluster-wide: every node counts, "
        "the system and GPU pools at full size included.",
    )

    @model_validator(mode="after")
    def _limits(self) -> Autoprovisioning:
        for key in self.limits:
            if key not in ("cpu", "memory") and key not in ACCELERATORS:
                hint = " (NAP uses accelerator names)" if key.startswith("nvidia.com") else ""
                raise problem(
                    f"limits.{key}",
                    f"unknown limit {key!r}{hint}; use cpu, memory or one of {', '.join(ACCELERATORS)}",
                )
        if self.enabled:
            missing = [k for k in ("cpu", "memory") if k not in self.limits]
            if missing:
                raise problem("limits", f"enabled autoprovisioning needs limits for {' and '.join(missing)}")
        return self


class AuthorizedNetwork(Model):
    """An IPv4 range allowed to reach the cluster's control plane."""

    cidr: Cidr = Field(description="The range, e.g. 203.0.113.0/24.")
    name: Annotated[str, _text("range's display name", spaces=True)] = Field(description="Display name of the range in GKE.")


COMPUTE_RESOURCE_NAME = re.compile(rf"^{COMPUTE_NAME}$")


def _compute_name(what: str, example: str) -> AfterValidator:
    """A Compute Engine resource name (see COMPUTE_NAME); a path or URL is refused with the
    name and the project it names, which go to their own keys."""

    def check(value: str) -> str:
        if "/" in value:
            parts = value.rstrip("/").split("/")
            project = parts[parts.index("projects") + 1] if "projects" in parts[:-1] else None
            where = f" and the project ({project!r}) in hostProject" if project else ""
            raise ValueError(f"{value!r} is a path; give the {what}'s name ({parts[-1]!r}){where}")
        if not COMPUTE_RESOURCE_NAME.match(value):
            raise ValueError(
                f"{value!r} is not a {what} name such as {example}: 1-63 lowercase letters, digits and '-', a letter first"
            )
        return value

    return AfterValidator(check)


class ExistingNetwork(Model):
    """A VPC network and subnetwork that already exist: the stack's own project's, or a Shared
    VPC host project's. The program creates no network, subnet, router or NAT: the subnet's
    secondary ranges give pods and Services their IPs (VPC-native), and private nodes reach
    registries through the network's own egress (its Cloud NAT, Private Google Access).
    GKE cannot move a cluster to another network: each key here replaces the cluster."""

    host_project: str | None = Field(
        default=None,
        description="Shared VPC: the host project that owns the network (the stack's gcp:project is a service "
        "project attached to it); default: the stack's own project.",
    )
    network: Annotated[str, _compute_name("network", "shared-vpc")] = Field(description="The VPC network's name.")
    subnetwork: Annotated[str, _compute_name("subnetwork", "ml-us-central1")] = Field(
        description="The subnetwork's name, in the cluster's region."
    )
    pods_range: Annotated[str, _compute_name("secondary range", "gke-pods")] = Field(
        description="Name of the subnetwork's secondary range for pod IPs."
    )
    services_range: Annotated[str, _compute_name("secondary range", "gke-services")] = Field(
        description="Name of the subnetwork's secondary range for Service IPs."
    )
    manage_host_project: StrictBool = Field(
        default=True,
        description="Shared VPC: the program grants what GKE needs in the host project (roles/compute.networkUser on "
        "the subnetwork for the stack project's GKE and Google APIs service agents, roles/container.hostServiceAgentUser "
        "on the host project for the GKE one) and creates the cluster's firewall rules there; false: the host "
        "project's admins do that first (docs/gke-network.md lists each binding and rule).",
    )

    @field_validator("host_project")
    @classmethod
    def _host_project(cls, value: str | None) -> str | None:
        if value is not None and not GCP_PROJECT_ID.match(value):
            raise ValueError(f"{value!r} is not a GCP project ID (the host project's, as gcloud projects list shows it)")
        return value

    @model_validator(mode="after")
    def _ranges_differ(self) -> ExistingNetwork:
        if self.pods_range == self.services_range:
            raise problem("servicesRange", "pods and Services need secondary ranges of their own; name another range")
        return self


CREATED_RANGES = {"subnetCidr": "subnet_cidr", "podsCidr": "pods_cidr", "servicesCidr": "services_cidr"}
"""The ranges of the subnet the program creates (stack-file key -> field)."""


class NetworkConfig(Model):
    """The cluster's network: a VPC, subnet, router and Cloud NAT the program creates (the
    default, with the ranges below; changing one replaces the network and the cluster), or an
    existing network (`existing`, also in a Shared VPC host project)."""

    existing: ExistingNetwork | None = Field(
        default=None,
        description="Use this existing network and subnetwork instead of creating them (docs/gke-network.md). "
        "Replaces the cluster.",
    )
    subnet_cidr: Cidr = Field(
        default=ipaddress.IPv4Network("10.0.0.0/20"), description="The created subnet's primary range: node IPs."
    )
    pods_cidr: Cidr = Field(
        default=ipaddress.IPv4Network("10.16.0.0/14"), description="The created subnet's secondary range for pod IPs."
    )
    services_cidr: Cidr = Field(
        default=ipaddress.IPv4Network("10.20.0.0/20"), description="The created subnet's secondary range for Service IPs."
    )
    master_cidr: Cidr = Field(
        default=ipaddress.IPv4Network("172.16.0.0/28"),
        description="Control-plane range of a private cluster; must be a /28, unused in the network (existing too). "
        "Replaces the cluster.",
    )

    @model_validator(mode="after")
    def _ranges(self) -> NetworkConfig:
        found: list[tuple[str, str]] = []
        if self.master_cidr.prefixlen != 28:
            found.append(("masterCidr", f"{self.master_cidr} must be a /28 range, e.g. 172.16.0.0/28"))
        if self.existing is not None:
            found += [
                (key, f"{key} is a range of the subnet the program creates; an existing subnetwork has its own "
                 "(its secondary ranges are named in existing): remove it")
                for key, name in CREATED_RANGES.items()
                if name in self.model_fields_set
            ]
        else:
            ranges = {key: getattr(self, name) for key, name in CREATED_RANGES.items()} | {"masterCidr": self.master_cidr}
            names = list(ranges)
            for i, a in enumerate(names):
                for b in names[i + 1 :]:
                    if ranges[a].overlaps(ranges[b]):
                        found.append((b, f"{ranges[b]} overlaps {a} {ranges[a]}; pick a disjoint range"))
        if found:
            raise problems(found)
        return self


class ImageRegistryConfig(Model):
    """An Artifact Registry Docker repository in the stack's project for the platform's images
    (the notebook images) and the teams' own; the cluster's nodes may pull from it."""

    enabled: StrictBool = Field(default=True, description="Create the repository (gke).")
    name: str | None = Field(
        default=None, description="Repository id; default: the cluster's name. Replaces the repository and its images."
    )
    location: str | None = Field(
        default=None,
        description="Region or multi-region (us, europe, asia); default: the cluster's region. Replaces the "
        "repository and its images.",
    )
    pushers: list[str] = Field(
        default_factory=list,
        description="IAM members that may push, such as the CI service account that builds the notebook image "
        "(`serviceAccount:ci@acme-ml-dev.iam.gserviceaccount.com`); teams push with `pushImages`.",
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        if value is not None and not REPOSITORY_ID.match(value):
            raise ValueError(
                f"{value!r} is not an Artifact Registry repository id: lowercase letters, digits and '-', "
                "a letter first, at most 63 characters"
            )
        return value

    @field_validator("location")
    @classmethod
    def _location(cls, value: str | None) -> str | None:
        if value is not None and not (GCP_REGION.match(value) or value in REGISTRY_MULTI_REGIONS):
            raise ValueError(f"{value!r} is neither a GCP region (us-central1) nor one of {', '.join(REGISTRY_MULTI_REGIONS)}")
        return value

    @field_validator("pushers")
    @classmethod
    def _pushers(cls, members: list[str]) -> list[str]:
        for member in members:
            if not IAM_MEMBER.match(member):
                raise ValueError(
                    f"{member!r} is not an IAM member: use user:, group:, serviceAccount: or principal(Set):// "
                    "followed by the identity"
                )
        _unique(members, lambda m: m, "; each becomes an IAM binding of its own")
        return members


# --- maintenance ------------------------------------------------------------------------
# GKE "Maintenance windows and exclusions" (cloud.google.com/kubernetes-engine/docs/concepts/
# maintenance-windows-and-exclusions and .../how-to/maintenance-windows-and-exclusions, read
# 2026-12-01): one recurring window per cluster; it must allow at least 48 hours of
# maintenance in any 32-day rolling window, counting only contiguous stretches of at least
# 4 hours; day-of-week recurrences are in UTC; a "no upgrades" exclusion lasts at most 30
# days, the minor-upgrade scopes may last until the version's end of support; at most 20
# exclusions (pulumi-gcp 10.2.0 ClusterMaintenancePolicyArgs.maintenance_exclusions). The
# provider takes times in RFC 3339 and "may accept other formats, but will return values in
# UTC, causing a permanent diff" (ClusterMaintenancePolicyArgs.recurring_window), so times
# here are written in UTC with a Z.
UTC_TIME = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")
WINDOW_MIN_HOURS = 4
WINDOW_HOURS_PER_32_DAYS = 48
NO_UPGRADES_MAX_DAYS = 30
EXCLUSIONS_MAX = 20
WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
RECURRENCE = re.compile(r"^FREQ=(DAILY|WEEKLY)(;BYDAY=([A-Z]{2}(,[A-Z]{2})*))?$")


def _utc_text(value: object) -> object:
    """YAML reads an unquoted 2026-01-03T02:00:00Z as a date (PyYAML, here) where Pulumi passes
    the text on: both become the same text."""
    if isinstance(value, datetime.datetime) and value.utcoffset() == datetime.timedelta(0):
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return value


def _utc_time(value: str) -> str:
    if not UTC_TIME.match(value):
        raise ValueError(
            f"{value!r} is not a UTC time such as 2026-01-03T02:00:00Z (RFC 3339 with a Z: GKE returns times in UTC, "
            "so any other form would show as a change on every update)"
        )
    try:
        datetime.datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a date and time that exists; check the day and hour") from None
    return value


UtcTime = Annotated[str, BeforeValidator(_utc_text), AfterValidator(_utc_time), ValueKind("UTC time (RFC 3339, Z)")]
"""A moment in UTC, `2026-01-03T02:00:00Z`."""


def _moment(value: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(value)


class MaintenanceWindow(Model):
    """When GKE may upgrade and maintain the cluster on its own: a window that recurs (RFC 5545
    RRULE), from the first occurrence's start to its end, in UTC."""

    start: UtcTime = Field(description="The first window's start, e.g. 2026-01-03T02:00:00Z.")
    end: UtcTime = Field(description="The first window's end; the length of every window.")
    recurrence: str = Field(
        description="How it recurs: FREQ=DAILY, or FREQ=WEEKLY;BYDAY=SA,SU (days in UTC). With the length, at "
        "least 48 hours in any 32 days, in windows of at least 4 hours (GKE's minimum).",
    )

    @field_validator("recurrence")
    @classmethod
    def _recurrence(cls, value: str) -> str:
        found = RECURRENCE.match(value)
        days = (found[3] or "").split(",") if found and found[3] else []
        if not found or any(d not in WEEKDAYS for d in days) or len(set(days)) != len(days):
            raise ValueError(
                f"{value!r} is not a recurrence this schema reads: FREQ=DAILY, FREQ=WEEKLY (the start's weekday) or "
                f"FREQ=WEEKLY;BYDAY= with days each once from {','.join(WEEKDAYS)}"
            )
        if found[1] == "DAILY" and days:
            raise ValueError(f"{value!r}: BYDAY goes with FREQ=WEEKLY; write FREQ=WEEKLY;BYDAY={found[3]}")
        return value

    @model_validator(mode="after")
    def _availability(self) -> MaintenanceWindow:
        hours = (_moment(self.end) - _moment(self.start)).total_seconds() / 3600
        if hours <= 0:
            raise problem("end", f"end {self.end} is not after start {self.start}")
        if hours < WINDOW_MIN_HOURS:
            raise problem(
                "end",
                f"a window of {hours:g} hours is shorter than GKE counts ({WINDOW_MIN_HOURS} hours at least); make it longer",
            )
        weekly = self.recurrence.startswith("FREQ=WEEKLY")
        per_week = len(self.recurrence.partition("BYDAY=")[2].split(",")) if "BYDAY=" in self.recurrence else 1
        # Any 32 days hold 4 of each weekday at least, and 32 daily windows.
        available = hours * (4 * per_week if weekly else 32)
        if available < WINDOW_HOURS_PER_32_DAYS:
            raise problem(
                "end",
                f"{per_week} window(s) a week of {hours:g} hours give {available:g} hours in 32 days, and GKE needs "
                f"{WINDOW_HOURS_PER_32_DAYS}; make the windows longer or add days",
            )
        return self


class ExclusionScope(str, Enum):
    NO_UPGRADES = "NO_UPGRADES"
    NO_MINOR_UPGRADES = "NO_MINOR_UPGRADES"
    NO_MINOR_OR_NODE_UPGRADES = "NO_MINOR_OR_NODE_UPGRADES"


class MaintenanceExclusion(Model):
    """A stretch of time in which GKE does not upgrade the cluster on its own (a release freeze,
    a training campaign). GKE still applies critical security fixes."""

    name: Annotated[str, _text("exclusion's name", spaces=True)] = Field(description="Its name, e.g. year-end-freeze.")
    start: UtcTime = Field(description="When it starts, e.g. 2026-12-20T00:00:00Z.")
    end: UtcTime | None = Field(default=None, description="When it ends; or untilEndOfSupport.")
    until_end_of_support: StrictBool = Field(
        default=False, description="NO_MINOR_* scopes: until the cluster's minor version leaves support, instead of end."
    )
    scope: ExclusionScope = Field(
        default=ExclusionScope.NO_UPGRADES,
        description="NO_UPGRADES (nothing, at most 30 days), NO_MINOR_UPGRADES (patches still come) or "
        "NO_MINOR_OR_NODE_UPGRADES (control-plane patches only).",
    )

    @model_validator(mode="after")
    def _span(self) -> MaintenanceExclusion:
        if (self.end is None) == (not self.until_end_of_support):
            raise problem("end", "give end, or untilEndOfSupport: true (one of them)")
        if self.until_end_of_support and self.scope is ExclusionScope.NO_UPGRADES:
            raise problem(
                "untilEndOfSupport",
                f"a NO_UPGRADES exclusion lasts at most {NO_UPGRADES_MAX_DAYS} days; give end, or use scope NO_MINOR_UPGRADES",
            )
        if self.end is not None:
            days = (_moment(self.end) - _moment(self.start)).total_seconds() / 86400
            if days <= 0:
                raise problem("end", f"end {self.end} is not after start {self.start}")
            if self.scope is ExclusionScope.NO_UPGRADES and days > NO_UPGRADES_MAX_DAYS:
                raise problem(
                    "end",
                    f"{days:g} days: a NO_UPGRADES exclusion lasts at most {NO_UPGRADES_MAX_DAYS} days (GKE); shorten it, "
                    "or use scope NO_MINOR_UPGRADES, which may last until the end of support",
                )
        return self


class Maintenance(Model):
    """When GKE may maintain the cluster on its own. Updated in place."""

    window: MaintenanceWindow | None = Field(default=None, description="The recurring maintenance window; none: any time.")
    exclusions: list[MaintenanceExclusion] = Field(
        default_factory=list, description="Times without automatic upgrades, each name once; at most 20. Need a window."
    )

    @field_validator("exclusions")
    @classmethod
    def _exclusions(cls, exclusions: list[MaintenanceExclusion]) -> list[MaintenanceExclusion]:
        if len(exclusions) > EXCLUSIONS_MAX:
            raise ValueError(f"{len(exclusions)} exclusions; GKE takes at most {EXCLUSIONS_MAX} at a time")
        _unique(exclusions, lambda e: e.name, "; GKE keys exclusions by name")
        return exclusions

    @model_validator(mode="after")
    def _exclusions_in_a_window(self) -> Maintenance:
        # pulumi-gcp 10.2.0 ClusterMaintenancePolicyArgs: a maintenance policy needs one of its
        # windows; the exclusions travel inside it.
        if self.exclusions and self.window is None:
            raise problem("window", "exclusions go with a maintenance window (the provider needs one); add window")
        return self


# Cloud KMS resource names (cloud.google.com/kms/docs/resource-hierarchy, "Key rings" and
# "Keys"): projects/<project>/locations/<location>/keyRings/<ring>/cryptoKeys/<key>; ring and
# key ids of 1-63 letters, digits, '_' and '-'.
KMS_KEY = re.compile(
    r"^projects/(?P<project>[^/]+)/locations/(?P<location>[a-z0-9-]+)/keyRings/(?P<ring>[A-Za-z0-9_-]{1,63})"
    r"/cryptoKeys/(?P<key>[A-Za-z0-9_-]{1,63})$"
)


class SecretsEncryption(Model):
    """Application-layer secrets encryption (GKE's databaseEncryption): Kubernetes Secrets in
    the control plane's database are encrypted with a Cloud KMS key you manage
    (cloud.google.com/kubernetes-engine/docs/how-to/encrypting-secrets). Updated in place:
    GKE re-encrypts every Secret with the new key."""

    key: str = Field(
        description="The Cloud KMS key: projects/<project>/locations/<cluster region>/keyRings/<ring>/cryptoKeys/<key> "
        "(Google: keep the key in the cluster's location)."
    )
    grant_key_access: StrictBool = Field(
        default=True,
        description="The program grants the stack project's GKE service agent roles/cloudkms.cryptoKeyEncrypterDecrypter "
        "on the key (the deployer needs cloudkms.cryptoKeys.setIamPolicy on it); false: the key's admins grant it first.",
    )

    @field_validator("key")
    @classmethod
    def _key(cls, value: str) -> str:
        if "/cryptoKeyVersions/" in value:
            raise ValueError(f"{value!r} names a key version; give the key ({value.split('/cryptoKeyVersions/')[0]!r}): GKE uses its primary version")
        found = KMS_KEY.match(value)
        if found is None or not GCP_PROJECT_ID.match(found["project"]):
            raise ValueError(
                f"{value!r} is not a Cloud KMS key name: projects/<project>/locations/<region>/keyRings/<ring>/cryptoKeys/<key> "
                "(gcloud kms keys list --location <region> --keyring <ring> --format 'value(name)')"
            )
        return value

    @property
    def location(self) -> str:
        found = KMS_KEY.match(self.key)
        assert found is not None  # the validator matched it
        return found["location"]

    @property
    def iam_id(self) -> str:
        """The key as pulumi-gcp's CryptoKeyIAMMember names it: `<project>/<location>/<ring>/<key>`
        (pulumi-gcp 10.2.0 kms.CryptoKeyIAMMemberArgs.crypto_key_id)."""
        found = KMS_KEY.match(self.key)
        assert found is not None
        return "/".join(found.group("project", "location", "ring", "key"))


class GkeClusterConfig(Model):
    """A GKE Standard cluster with a system pool, GPU pools and NAP."""

    kind: Literal["gke"] = Field(description="Picks this model: a GKE cluster.")
    name: ShortName = Field(description="Cluster name. Replaces the cluster.")
    location: str = Field(description="Region (regional cluster) or zone. Replaces the cluster.")
    release_channel: ReleaseChannel = Field(
        default=ReleaseChannel.REGULAR, description="GKE release channel the cluster takes its versions and upgrades from."
    )
    min_master_version: str | None = Field(
        default=None,
        description="The lowest GKE version the control plane is created at (a minor such as `1.35`, or a full GKE "
        "version `<minor>.<patch>-gke.<build>`); empty: the release channel's default. The full render renders the "
        "charts for it; `check` judges the components' Kubernetes ranges against it, and against the channel's "
        "default too where that is newer (GKE upgrades the cluster to it).",
    )
    private_nodes: StrictBool = Field(
        default=True,
        description="Nodes without public IPs, egress through Cloud NAT (the created network's, or an existing "
        "network's own).",
    )
    master_authorized_networks: list[AuthorizedNetwork] = Field(
        default_factory=list, description="CIDRs allowed to reach the control plane, each once; empty: any."
    )
    network: NetworkConfig = Field(
        default=NetworkConfig(), description="The cluster's network: one the program creates (default), or an existing one."
    )
    system_pool: SystemPool = Field(default=SystemPool(), description="The CPU pool for the platform's controllers.")
    gpu_pools: list[GpuPool] = Field(
        default_factory=list,
        description="GPU node pools; each also gets a Kueue ResourceFlavor and training runtimes of its name.",
    )
    autoprovisioning: Autoprovisioning = Field(
        default=Autoprovisioning(), description="Node auto-provisioning (NAP) and its cluster-wide limits."
    )
    deletion_protection: StrictBool | None = Field(
        default=None, description="Default: on for prod stacks, off otherwise."
    )
    managed_prometheus: StrictBool = Field(
        default=False,
        description="Google Cloud Managed Service for Prometheus; monitoring backend gke-managed and "
        "dcgmExporter source gke-managed need it.",
    )
    image_streaming: StrictBool = Field(
        default=True, description="GKE image streaming for the node pools: containers start before the image is fully pulled."
    )
    gcs_fuse: StrictBool = Field(default=True, description="GCS Fuse CSI driver add-on (team buckets as volumes).")
    gateway_api: StrictBool = Field(
        default=True, description="Gateway API on the cluster (standard channel): its CRDs and GKE's Gateway controller."
    )
    image_registry: ImageRegistryConfig = Field(
        default=ImageRegistryConfig(),
        description="Artifact Registry Docker repository for the platform's and the teams' images.",
    )
    maintenance: Maintenance = Field(
        default=Maintenance(), description="Maintenance window and exclusions; default: GKE maintains at any time."
    )
    secrets_encryption: SecretsEncryption | None = Field(
        default=None,
        description="Encrypt Kubernetes Secrets with your Cloud KMS key (application-layer secrets encryption); "
        "default: Google's encryption at rest only.",
    )

    @field_validator("min_master_version")
    @classmethod
    def _min_master_version(cls, value: str | None) -> str | None:
        # GKE versions are `<minor>.<patch>-gke.<build>`; the API also takes a minor or a patch
        # (cloud.google.com/kubernetes-engine/versioning, "Versioning scheme").
        if value is not None and not GKE_VERSION.match(value):
            raise ValueError(f"{value!r} is not a GKE version: give a minor such as 1.35, or <minor>.<patch>[-gke.<build>]")
        return value

    @field_validator("location")
    @classmethod
    def _location(cls, value: str) -> str:
        if not (GCP_REGION.match(value) or GCP_ZONE.match(value)):
            raise ValueError(f"{value!r} is neither a GCP region (us-central1) nor a zone (us-central1-a)")
        return value

    @field_validator("master_authorized_networks")
    @classmethod
    def _networks(cls, networks: list[AuthorizedNetwork]) -> list[AuthorizedNetwork]:
        _unique(networks, lambda n: n.cidr)
        return networks

    @model_validator(mode="after")
    def _pools(self) -> GkeClusterConfig:
        found: list[tuple[str, str]] = []
        seen: set[str] = set()
        for i, pool in enumerate(self.gpu_pools):
            if pool.name in seen:
                found.append((f"gpuPools[{i}].name", f"duplicate pool name {pool.name!r}; pool names must be unique"))
            seen.add(pool.name)
            outside = [zone for zone in pool.zones or [] if zone_region(zone) != self.region]
            if outside:
                zone = outside[0]
                found.append(
                    (
                        f"gpuPools[{i}].zones",
                        f"zone {zone!r} is outside the cluster's region {self.region} (it is in "
                        f"{zone_region(zone)}); use zones of {self.region}",
                    )
                )
        if found:
            raise problems(found)
        return self

    @property
    def region(self) -> str:
        return self.location if GCP_REGION.match(self.location) else self.location.rsplit("-", 1)[0]

    def zone_count(self, zones: list[str] | None = None) -> int:
        """Zones a pool spreads over (its min/max count per zone): its own zones, else one for a
        zonal cluster and three for a regional one (GKE's default node locations,
        cloud.google.com/kubernetes-engine/docs/concepts/regional-clusters)."""
        if zones:
            return len(zones)
        return 1 if GCP_ZONE.match(self.location) else REGIONAL_ZONES


class KindClusterConfig(Model):
    """A local kind cluster, for development and ephemeral CI clusters."""

    kind: Literal["kind"] = Field(description="Picks this model: a local kind cluster.")
    name: ShortName = Field(default="mlplatform", description="kind cluster name. Replaces the cluster.")
    workers: StrictInt = Field(default=2, ge=1, le=8, description="Worker nodes beside the control plane. Replaces the cluster.")
    existing_context: Annotated[str, _text("kubeconfig context", spaces=True)] | None = Field(
        default=None,
        description="Use this kubeconfig context instead of creating a cluster.",
    )


ClusterConfig = Annotated[GkeClusterConfig | KindClusterConfig, Field(discriminator="kind")]


# --- teams ----------------------------------------------------------------------------


class Role(str, Enum):
    EDIT = "edit"
    VIEW = "view"


class Contributor(Model):
    """Someone besides the owner with access to the team namespace."""

    email: Email = Field(description="The address they sign in with.")
    role: Role = Field(description="edit (ClusterRole kubeflow-edit) or view (kubeflow-view) in the namespace.")


class TeamQuota(Model):
    """What the team's pods may request at once: the namespace's ResourceQuota and, with kueue,
    the nominal quota of the team's ClusterQueue."""

    gpus: dict[str, Int64] = Field(default_factory=dict, description="GPUs per accelerator name, e.g. nvidia-l4: 8.")
    cpu: ResourceQuantity = Field(default="32", description="CPU cores, a Kubernetes quantity such as 64 or 500m.")
    memory: MemoryQuantity = Field(default="128Gi", description="Memory, a Kubernetes quantity with its unit such as 256Gi.")


class ContainerDefaults(Model):
    """What a container that names no resources gets in the team namespace (its LimitRange):
    requests, so the namespace's quota admits it and Kueue counts it, and limits. Jobs from the
    Kubeflow SDK's `resources_per_node`, notebooks and Ray pods name their own."""

    cpu: ResourceQuantity = Field(default="1", description="CPU request of a container that names none.")
    memory: MemoryQuantity = Field(default="2Gi", description="Memory request of a container that names none.")
    cpu_limit: ResourceQuantity = Field(default="4", description="CPU limit of a container that names none.")
    memory_limit: MemoryQuantity = Field(
        default="16Gi",
        description="Memory limit of a container that names none; a container that asks for more memory than "
        "this must name its limit too (the SDK's resources_per_node sets both).",
    )

    @model_validator(mode="after")
    def _requests_within_limits(self) -> ContainerDefaults:
        for request, limit, key in ((self.cpu, self.cpu_limit, "cpu"), (self.memory, self.memory_limit, "memory")):
            if quantity.parse(request) > quantity.parse(limit):
                raise problem(key, f"{key} {request} is above {key}Limit {limit}; a default request must fit its limit")
        return self


class TeamBucket(Model):
    """A GCS bucket for the team's datasets and checkpoints (GKE only), mounted through GCS Fuse."""

    name: str | None = Field(default=None, description="Default: <project>-<team>. Replaces the bucket.")
    location: str | None = Field(default=None, description="Default: the cluster's region.")

    @field_validator("name")
    @classmethod
    def _bucket_name(cls, value: str | None) -> str | None:
        reason = bucket_name_problem(value) if value is not None else None
        if reason:
            raise ValueError(f"{value!r} is not a valid bucket name: {reason}")
        return value

    @field_validator("location")
    @classmethod
    def _location(cls, value: str | None) -> str | None:
        if value is None:
            return None
        upper = value.upper()
        if upper in BUCKET_MULTI_REGIONS or upper in BUCKET_DUAL_REGIONS or GCP_REGION.match(value.lower()):
            return value
        if GCP_ZONE.match(value.lower()):
            raise ValueError(f"{value!r} is a zone; buckets live in a region, e.g. {zone_region(value.lower())}")
        raise ValueError(
            f"{value!r} is not a bucket location: a region (us-central1), a multi-region "
            f"({', '.join(BUCKET_MULTI_REGIONS)}) or a dual-region ({', '.join(BUCKET_DUAL_REGIONS)})"
        )


class TeamRay(Model):
    """A RayCluster in the team namespace, autoscaled in-tree (with Kueue: an elastic Kueue job,
    each scale-up admitted against the team's quota), dashboard behind the Kubeflow gateway."""

    name: ShortName = Field(default="ray", description="RayCluster name.")
    pool: Annotated[str, _text("GPU pool's name")] | None = Field(
        default=None, description="GPU pool for the workers; none: CPU workers."
    )
    min_workers: StrictInt = Field(default=0, ge=0, le=100, description="Workers the autoscaler keeps at least.")
    max_workers: StrictInt = Field(default=4, ge=1, le=100, description="Workers the autoscaler may add up to.")
    worker_cpu: ResourceQuantity = Field(default="4", description="CPU per worker (Kubernetes quantity), more than 0.")
    worker_memory: MemoryQuantity = Field(
        default="16Gi", description="Memory per worker, a Kubernetes quantity with its unit such as 16Gi; more than 0."
    )

    @model_validator(mode="after")
    def _sizes(self) -> TeamRay:
        if self.min_workers > self.max_workers:
            raise problem("minWorkers", f"minWorkers {self.min_workers} is above maxWorkers {self.max_workers}")
        for key, size, example in (("workerCpu", self.worker_cpu, "4"), ("workerMemory", self.worker_memory, "16Gi")):
            if quantity.parse(size) == 0:
                raise problem(key, f"{key} 0 leaves a Ray worker nothing to run on; give it some, e.g. {example}")
        return self


class Team(Model):
    """A team: one Kubeflow profile namespace with its people, quota and queue."""

    name: str = Field(description="Profile and namespace name.")
    owner: Email = Field(description="The profile's owner, admin of the namespace (ClusterRole kubeflow-admin).")
    contributors: list[Contributor] = Field(default_factory=list, description="Everyone else with access.")
    quota: TeamQuota = Field(default=TeamQuota(), description="CPU, memory and GPUs the team may use at once.")
    container_defaults: ContainerDefaults = Field(
        default=ContainerDefaults(),
        description="Requests and limits of containers that name none (the namespace's LimitRange), so a plain "
        "job starts and counts against the quota.",
    )
    cohort: str | None = Field(
        default=None, description="Kueue cohort: teams in one cohort borrow each other's unused GPUs."
    )
    bucket: TeamBucket | None = Field(default=None, description="A GCS bucket for the team (gke only).")
    ray: TeamRay | None = Field(default=None, description="A RayCluster in the namespace (needs kuberay).")
    push_images: StrictBool = Field(
        default=False,
        description="The team's Google service account (its notebooks and jobs, through Workload Identity) may push "
        "to the stack's Artifact Registry repository (gke).",
    )

    @field_validator("cohort")
    @classmethod
    def _cohort(cls, value: str | None) -> str | None:
        if value is not None and (len(value) > DNS_SUBDOMAIN_MAX or not DNS_SUBDOMAIN.match(value)):
            raise ValueError(
                f"{value!r} is not a Kueue cohort name: lowercase letters, digits, '-' and '.', "
                "starting and ending with a letter or digit, at most 253 characters"
            )
        return value

    @field_validator("name")
    @classmethod
    def _team_name(cls, value: str) -> str:
        _dns_label(value, 63)
        owner = RESERVED_NAMESPACES.get(value) or next(
            (who for prefix, who in RESERVED_NAMESPACE_PREFIXES.items() if value.startswith(prefix)), None
        )
        if owner:
            raise ValueError(f"{value!r} is a namespace {owner} owns; pick another team name")
        return value

    @model_validator(mode="after")
    def _people(self) -> Team:
        seen: set[str] = set()
        for i, person in enumerate(self.contributors):
            email = person.email.lower()
            if email == self.owner.lower():
                raise problem(f"contributors[{i}].email", f"{person.email} is the owner; remove them from contributors")
            if email in seen:
                raise problem(f"contributors[{i}].email", f"{person.email} is listed twice; keep one entry")
            seen.add(email)
        return self


# --- the whole stack ------------------------------------------------------------------


# --- chart values overlays (the escape hatch) ----------------------------------------
# Key names that hold a secret in the charts' own values (password, adminPassword, apiKey,
# token, clientSecret, ...): a stack file holds no secret in plain text, so such a value is
# refused; the chart's existingSecret-style keys (a Secret's name) stay allowed.
SECRET_VALUE_KEY = re.compile(r"(password|passwd|secret|token|apikey|api_key|credentials)$", re.IGNORECASE)
SECRET_REFERENCE_KEY = re.compile(r"^existing|secretname$|secretref$|^secretkey", re.IGNORECASE)


def _chart_values(values: dict[str, Any]) -> dict[str, Any]:
    """Values any chart could take (a mapping of YAML data), keys as written; dates and
    plain-text secrets refused, each where it is."""
    found: list[tuple[str, str]] = []

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                where = f"{path}.{key}" if path else str(key)
                if isinstance(value, str) and value and SECRET_VALUE_KEY.search(str(key)) and not SECRET_REFERENCE_KEY.search(str(key)):
                    found.append(
                        (
                            where,
                            f"{key!r} holds a secret, and a stack file holds none in plain text; put it in a Kubernetes "
                            "Secret and give the chart that Secret's name (its existingSecret-style key)",
                        )
                    )
                walk(value, where)
        elif isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, f"{path}[{i}]")
        elif isinstance(node, (datetime.date, datetime.datetime)):
            found.append((path, f"YAML reads {node} as a date, Pulumi passes it on as text: quote it"))
        elif node is None:
            found.append(
                (
                    path,
                    "null: Helm would drop the chart's default here, but Pulumi need not pass a null on to Helm as "
                    "the offline render does; give the value you want instead (false, 0, \"\", [] or {})",
                )
            )

    walk(values, "")
    if found:
        raise problems(found)
    return values


ChartValues = Annotated[dict[str, Any], AfterValidator(_chart_values), ValueKind("chart values (a mapping)")]
"""Helm values, any keys the chart takes."""

CHART_VALUES_RULE = (
    "Chart `values` (the escape hatch for a chart setting the schema has no key for, docs/chart-values.md) are "
    "merged last over the values the platform sets: mappings merge key by key, any other value (a list, a "
    "string, a number, a boolean) replaces the platform's whole, and null is refused; `python -m stacks check` "
    "judges the merged result like everything else."
)


def chart_values_field(chart: str) -> Any:
    """The `values` overlay of a component installed from `chart` (a Helm chart)."""
    return Field(default_factory=dict, description=f"Helm values for {chart}, merged last over the platform's (see above the tables).")


class Toggle(Model):
    enabled: StrictBool = Field(default=True, description="Install this component.")


class CertManagerConfig(Toggle):
    """cert-manager from its own chart, with the issuer and NetworkPolicies the pinned Kubeflow release adds (webhook certificates)."""

    values: ChartValues = chart_values_field("the cert-manager chart")


class IstioConfig(Toggle):
    """Istio with CNI and the ingress gateway, as the pinned Kubeflow release installs it."""


class AuthKind(str, Enum):
    DEX = "dex"
    """Dex static users (passwords from the secret config key mlplatform:dexPasswordHashes)."""
    OIDC = "oidc"
    """Dex with an upstream OIDC connector (e.g. Google); client secret from mlplatform:oidcClientSecret."""


DISCOVERY_PATH = "/.well-known/openid-configuration"


class OidcConnector(Model):
    """The upstream identity provider Dex sends people to."""

    issuer: str = Field(
        default="https://accounts.google.com",
        description="The identity provider's issuer URL, https:// and all, exactly as its discovery document says.",
    )
    client_id: Annotated[str, _text("OAuth client ID")] = Field(
        description="OAuth client ID at the identity provider (not empty: Dex would send an empty client_id)."
    )
    name: Annotated[str, _text("connector's display name", spaces=True)] = Field(
        default="Google", description="Shown on the Dex login page."
    )

    @field_validator("issuer")
    @classmethod
    def _issuer(cls, value: str) -> str:
        # OpenID Connect Discovery 1.0 section 3: the issuer is a case-sensitive https URL
        # with no query or fragment; Dex fetches <issuer>/.well-known/openid-configuration.
        if not REMOTE_SCHEME.match(value):
            raise ValueError(f"{value!r} has no scheme; an OIDC issuer is an https URL, e.g. 'https://{value}'")
        if not value.startswith("https://") or len(value) <= len("https://"):
            raise ValueError(f"{value!r}: an OIDC issuer is an https URL, e.g. https://accounts.google.com")
        if "?" in value or "#" in value:
            raise ValueError(f"{value!r}: an OIDC issuer has no query or fragment")
        if any(c.isspace() for c in value) or not value.isascii():
            raise ValueError(f"{value!r}: an OIDC issuer has no spaces and is ASCII (hosts in punycode)")
        # Dex's library compares the configured issuer with the published one byte for byte
        # (facts/oidc_issuers.py), and providers publish lowercase hosts without the default port.
        host = value[len("https://") :].split("/", 1)[0]
        if host != host.lower():
            raise ValueError(f"{value!r}: write the host in lowercase as the provider publishes it ({host.lower()})")
        if host.endswith(":443"):
            raise ValueError(f"{value!r}: drop the default port ':443'; the provider's issuer does not name it")
        if value.rstrip("/").endswith(DISCOVERY_PATH):
            issuer = value.rstrip("/")[: -len(DISCOVERY_PATH)]
            raise ValueError(f"{value!r} is the discovery document; give the issuer: {issuer!r}")
        published = PUBLISHED_ISSUERS.get(host)
        if published is not None and value != published:
            raise ValueError(
                f"{value!r}: this provider publishes its issuer as {published!r} (its {DISCOVERY_PATH}), and "
                "Dex's OIDC library refuses any other spelling, trailing slash included; use that"
            )
        return value


def _email_domain(value: str) -> str:
    if value != value.lower() or "@" in value or "*" in value or not EMAIL_DOMAIN.match(value):
        raise ValueError(f"{value!r} is not an e-mail domain such as acme.com: lowercase, no '@' or '*'")
    return value


EmailDomain = Annotated[str, AfterValidator(_email_domain), ValueKind("e-mail domain")]
"""The part of an e-mail address after '@', e.g. acme.com (subdomains are not included)."""


class KubeflowAuth(Model):
    """How people sign in. The identity header that reaches profiles is kubeflow-userid."""

    kind: AuthKind = Field(
        default=AuthKind.DEX, description="dex: static users; oidc: Dex with an upstream OIDC provider."
    )
    static_users: list[Email] = Field(
        default_factory=list,
        description="dex: users who may sign in, each once (Dex ignores letter case when it looks them up); "
        "each needs a bcrypt hash in mlplatform:dexPasswordHashes. With kubeflow on, at least one.",
    )
    oidc: OidcConnector | None = Field(default=None, description="oidc: the upstream provider.")
    hostname: str | None = Field(
        default=None,
        description="gke: public hostname of the gateway (managed certificate, HTTPS), e.g. kubeflow.acme.com: no scheme or path.",
    )
    iap: StrictBool = Field(default=False, description="gke: put Identity-Aware Proxy in front of the gateway.")
    iap_client_id: Annotated[str, _text("IAP OAuth client ID")] | None = Field(
        default=None, description="gke + iap: OAuth client ID for IAP; its secret in mlplatform:iapClientSecret."
    )
    allowed_domains: list[EmailDomain] = Field(
        default_factory=list,
        description="oidc: e-mail domains whose accounts may sign in (acme.com: anyone@acme.com); "
        "with allowedEmails, kind oidc needs at least one entry. Each once.",
    )
    allowed_emails: list[Email] = Field(
        default_factory=list,
        description="oidc: single accounts that may sign in besides allowedDomains, each once (oauth2-proxy ignores "
        "letter case).",
    )

    @field_validator("hostname")
    @classmethod
    def _hostname_only(cls, value: str | None) -> str | None:
        return _hostname(value)

    @field_validator("static_users")
    @classmethod
    def _static_users(cls, users: list[str]) -> list[str]:
        _unique(users, str.lower, "; Dex looks static users up by the lowercased address, so only one of them could sign in")
        return users

    @field_validator("allowed_emails")
    @classmethod
    def _allowed_emails(cls, emails: list[str]) -> list[str]:
        _unique(emails, str.lower, "; oauth2-proxy compares addresses lowercased")
        return emails

    @field_validator("allowed_domains")
    @classmethod
    def _allowed_domains(cls, domains: list[str]) -> list[str]:
        _unique(domains, lambda d: d)
        return domains

    @model_validator(mode="after")
    def _kind_fields(self) -> KubeflowAuth:
        if self.kind is AuthKind.OIDC and self.oidc is None:
            raise problem("oidc", "kind oidc needs oidc: {issuer, clientId}")
        if self.iap and not (self.hostname and self.iap_client_id):
            raise problem("iap", "iap needs hostname (the HTTPS entry point) and iapClientId")
        if self.kind is AuthKind.OIDC and not self.hostname:
            raise problem("hostname", "an OIDC provider redirects back to a public URL; set hostname")
        if self.kind is AuthKind.OIDC and not (self.allowed_domains or self.allowed_emails):
            raise problem(
                "allowedDomains",
                "kind oidc lets in every account of the provider unless you list who may sign in; "
                "set allowedDomains (e.g. [acme.com]) and/or allowedEmails",
            )
        if self.kind is AuthKind.DEX and (self.allowed_domains or self.allowed_emails):
            raise problem(
                "allowedDomains" if self.allowed_domains else "allowedEmails",
                "allowedDomains and allowedEmails are for kind oidc; with dex, staticUsers are who may sign in",
            )
        if self.kind is AuthKind.DEX and self.oidc is not None:
            raise problem("oidc", "oidc settings need kind: oidc")
        return self


class KubeflowConfig(Toggle):
    """Kubeflow multi-user core: dashboard, profiles + KFAM, PodDefaults, notebooks, auth."""

    auth: KubeflowAuth = Field(default=KubeflowAuth(), description="How people sign in.")
    notebook_registry: str | None = Field(
        default=None,
        description="Where the platform's notebook images are pulled from (`<registry>/notebook:<tag>`, "
        "images/notebook/Dockerfile). Default: the stack's Artifact Registry repository on gke, "
        "`localhost/mlplatform` on kind (`make notebook-images` builds them and loads them into the cluster).",
    )

    @field_validator("notebook_registry")
    @classmethod
    def _notebook_registry(cls, value: str | None) -> str | None:
        if value is not None and not REGISTRY_PATH.match(value):
            raise ValueError(
                f"{value!r} is not a registry path such as europe-docker.pkg.dev/acme/images: "
                "host and path, no scheme and no tag"
            )
        return value



class JobSetConfig(Toggle):
    """JobSet, installed once (Trainer's own copy is switched off)."""

    values: ChartValues = chart_values_field("the JobSet chart")


class TrainerConfig(Toggle):
    """Kubeflow Trainer v2 controller; our runtimes come from runtimes/."""

    values: ChartValues = chart_values_field("the Kubeflow Trainer chart")


class RaySource(str, Enum):
    OPERATOR = "operator"
    GKE_ADDON = "gke-addon"


class KubeRayConfig(Toggle):
    """KubeRay: the upstream operator, or GKE's managed Ray operator add-on (never both)."""

    source: RaySource = Field(
        default=RaySource.OPERATOR,
        description="operator: the KubeRay chart; gke-addon: GKE's managed Ray operator (gke only).",
    )
    values: ChartValues = chart_values_field("the kuberay-operator chart (source operator)")


class WaitForPodsReady(Model):
    """Kueue's all-or-nothing admission (its `waitForPodsReady`): a workload Kueue admitted whose
    pods are not all ready in time is evicted, its quota freed, and requeued with backoff, so
    a half-started multi-node job never holds GPUs for long."""

    timeout: str = Field(
        default="20m",
        description="How long an admitted workload may take until every pod is scheduled, running and ready "
        "(a GPU pool scaling from zero plus the image pull) before Kueue evicts and requeues it; a duration "
        "such as 20m or 1h30m.",
    )
    block_admission: StrictBool = Field(
        default=False,
        description="Admit nothing else until the admitted workload's pods are all ready: strict one-at-a-time "
        "admission, at the price of admissions waiting on every node scale-up.",
    )
    backoff_limit_count: StrictInt | None = Field(
        default=None,
        ge=1,
        le=1000,
        description="Evictions for unready pods after which Kueue deactivates the workload; none: requeue "
        "it forever, backing off 60s doubling up to an hour.",
    )

    @field_validator("timeout")
    @classmethod
    def _timeout(cls, value: str) -> str:
        if not DURATION.match(value) or not any(c.isdigit() and c != "0" for c in value):
            raise ValueError(f"{value!r} is not a duration such as 20m or 1h30m: positive numbers with h, m or s")
        seconds = sum(
            Decimal(number) * {"h": 3600, "m": 60, "s": 1}[unit] for number, unit in re.findall(r"([0-9]+)([hms])", value)
        )
        if seconds > GO_DURATION_MAX_SECONDS:
            raise ValueError(
                f"{value!r} is longer than a Go duration holds (about 292 years): Kueue reads it with Go's "
                "time.ParseDuration, which refuses it; use a timeout such as 1h"
            )
        return value


class KueueConfig(Toggle):
    """Kueue with the TrainJob, JobSet and Ray integrations; one ResourceFlavor per GPU pool,
    and a ProvisioningRequest admission check per queued pool."""

    wait_for_pods_ready: WaitForPodsReady = Field(
        default=WaitForPodsReady(),
        description="All-or-nothing admission: a multi-node TrainJob or RayJob starts whole, or is evicted "
        "and requeued.",
    )
    values: ChartValues = chart_values_field("the Kueue chart")


class MetricsBackend(str, Enum):
    KUBE_PROMETHEUS_STACK = "kube-prometheus-stack"
    GKE_MANAGED = "gke-managed"


class MonitoringConfig(Toggle):
    """Prometheus + Grafana with GPU, Ray, Kueue and per-team dashboards, and GPU alerts.
    Grafana signs people in with the identity the Kubeflow gateway asserts: Viewer, or Admin
    for grafanaAdmins; it has no shared admin login."""

    backend: MetricsBackend = Field(
        default=MetricsBackend.KUBE_PROMETHEUS_STACK,
        description="kube-prometheus-stack in the cluster, or gke-managed: Google Cloud Managed Service "
        "for Prometheus (needs cluster.managedPrometheus).",
    )
    retention: str = Field(
        default="15d", description="kube-prometheus-stack: how long Prometheus keeps data, e.g. 15d (h, d, w or y)."
    )
    storage_size: VolumeSize = Field(
        default="50Gi", description="kube-prometheus-stack: Prometheus volume size, a Kubernetes quantity such as 50Gi."
    )
    idle_gpu_threshold: StrictInt = Field(
        default=10, ge=1, le=100, description="Alert when allocated GPUs stay below this utilisation (%)."
    )
    idle_gpu_minutes: StrictInt = Field(
        default=30, ge=5, le=1440, description="... for this many minutes (the idle-GPU alert's `for`)."
    )
    pending_workload_minutes: StrictInt = Field(
        default=30, ge=1, le=10080, description="Alert when a workload waits in Kueue longer than this."
    )
    gpu_temperature_celsius: StrictInt = Field(default=85, ge=50, le=110, description="Alert above this GPU temperature.")
    grafana_admins: list[Email] = Field(
        default_factory=list,
        description="Who is Admin in Grafana (dashboards, data sources, alerting); everyone else who signs in is a Viewer.",
    )
    values: ChartValues = chart_values_field("the kube-prometheus-stack chart (backend kube-prometheus-stack)")
    grafana_values: ChartValues = chart_values_field("the Grafana chart")

    @field_validator("retention")
    @classmethod
    def _retention(cls, value: str) -> str:
        if not RETENTION.match(value):
            raise ValueError(f"{value!r} is not a Prometheus retention such as 15d: a positive number and h, d, w or y")
        if Decimal(value[:-1]) * RETENTION_SECONDS[value[-1]] > GO_DURATION_MAX_SECONDS:
            raise ValueError(
                f"{value!r} is longer than Prometheus can hold (a Go duration, about 292 years: it refuses "
                "'duration out of range'); use a shorter retention such as 10y"
            )
        return value

    @field_validator("grafana_admins")
    @classmethod
    def _grafana_admins(cls, admins: list[str]) -> list[str]:
        _unique(admins, str.lower)
        return admins


class DcgmSource(str, Enum):
    CHART = "chart"
    GKE_MANAGED = "gke-managed"


class DcgmExporterConfig(Model):
    """NVIDIA DCGM exporter: GPU metrics per pod. Default: on for GKE stacks with GPUs, off otherwise."""

    enabled: StrictBool | None = Field(
        default=None, description="Default: on for gke stacks with GPU pools or GPU autoprovisioning limits, off otherwise."
    )
    source: DcgmSource = Field(default=DcgmSource.CHART, description="NVIDIA's chart, or GKE's managed DCGM metrics.")
    values: ChartValues = chart_values_field("NVIDIA's dcgm-exporter chart (source chart)")


# --- Kubeflow Pipelines (components/pipelines.py) -----------------------------------------

# Cloud SQL machine tiers (cloud.google.com/sql/docs/mysql/instance-settings, "Machine types"):
# custom `db-custom-<vCPUs>-<memory MiB>` and the shared-core `db-f1-micro` / `db-g1-small`.
CLOUD_SQL_TIER = re.compile(r"^db-custom-(?P<vcpus>[0-9]+)-(?P<mib>[0-9]+)$|^db-(f1-micro|g1-small)$")
HOUR_MINUTE = re.compile(r"^([01][0-9]|2[0-3]):[0-5][0-9]$")


class PipelinesCloudSql(Model):
    """GKE: the pipelines database, Cloud SQL for MySQL on the stack's VPC (private IP only),
    with automated backups and point-in-time recovery; deletion-protected where the stack is."""

    tier: str = Field(
        default="db-custom-1-3840",
        description="Machine tier: db-custom-<vCPUs>-<memory MiB> (memory 0.9 to 6.5 GiB per vCPU, a multiple of "
        "256 MiB) or a shared core (db-f1-micro, db-g1-small: no SLA).",
    )
    disk_size_gb: StrictInt = Field(default=10, ge=10, le=65536, description="SSD size (GB); grows by itself when full, never shrinks.")
    high_availability: StrictBool = Field(
        default=False, description="A standby in a second zone with automatic failover (REGIONAL); doubles the price."
    )
    backup_start_time: str = Field(default="03:00", description="When the daily backup starts (UTC, HH:MM).")
    retained_backups: StrictInt = Field(default=7, ge=1, le=365, description="Daily backups kept.")
    log_retention_days: StrictInt = Field(
        default=7, ge=1, le=7, description="Days of binary logs kept for point-in-time recovery (at most 7)."
    )
    private_service_access: StrictBool | None = Field(
        default=None,
        description="Create the network's Private Service Access (a /20 for Google's services and the "
        "servicenetworking peering) the private IP needs. Default: on a network the stack creates; an existing one "
        "(cluster.network.existing) usually has one already (`gcloud services vpc-peerings list --network <name>`).",
    )

    @field_validator("tier")
    @classmethod
    def _tier(cls, value: str) -> str:
        found = CLOUD_SQL_TIER.match(value)
        if found is None:
            raise ValueError(f"{value!r} is not a Cloud SQL tier such as db-custom-2-7680 (db-custom-<vCPUs>-<memory MiB>)")
        if found["vcpus"]:
            vcpus, mib = int(found["vcpus"]), int(found["mib"])
            if vcpus != 1 and vcpus % 2:
                raise ValueError(f"{value!r}: a custom tier has 1 or an even number of vCPUs")
            if mib % 256 or not 0.9 * 1024 * vcpus <= mib <= 6.5 * 1024 * vcpus:
                raise ValueError(f"{value!r}: memory must be a multiple of 256 MiB, 0.9 to 6.5 GiB per vCPU")
        return value

    @field_validator("backup_start_time")
    @classmethod
    def _start(cls, value: str) -> str:
        if not HOUR_MINUTE.match(value):
            raise ValueError(f"{value!r} is not a time of day such as 03:00 (UTC, HH:MM)")
        return value


class PipelinesConfig(Toggle):
    """Kubeflow Pipelines, multi-user: the API server, UI, Argo Workflows, its database and object
    store, behind the Kubeflow gateway; every team's runs keep their artifacts in the team's bucket
    (gke) or its own prefix of the in-cluster store."""

    database_storage: VolumeSize = Field(
        default="20Gi",
        description="kind, existingContext: the in-cluster MySQL's volume (protected and retained). Grows where the "
        "storage class allows expansion; never shrinks.",
    )
    object_store_storage: VolumeSize = Field(
        default="20Gi",
        description="The in-cluster SeaweedFS volume (protected and retained): the API server's own store (pipeline "
        "packages), and on kind every team's artifacts. Grows where the storage class allows; never shrinks.",
    )
    cloud_sql: PipelinesCloudSql = Field(
        default=PipelinesCloudSql(), description="gke: the pipelines database on Cloud SQL for MySQL."
    )


class Components(Model):
    """In-cluster components. Each is on unless `enabled: false`."""

    cert_manager: CertManagerConfig = Field(default=CertManagerConfig(), description="Webhook certificates; kubeflow needs it.")
    istio: IstioConfig = Field(default=IstioConfig(), description="Service mesh and ingress gateway; kubeflow needs it.")
    kubeflow: KubeflowConfig = Field(default=KubeflowConfig(), description="Dashboard, notebooks, profiles and sign-in; teams need it.")
    jobset: JobSetConfig = Field(default=JobSetConfig(), description="JobSet, which TrainJobs run as; trainer needs it.")
    trainer: TrainerConfig = Field(default=TrainerConfig(), description="Kubeflow Trainer and our training runtimes.")
    kuberay: KubeRayConfig = Field(default=KubeRayConfig(), description="Ray operator; team Ray clusters need it.")
    kueue: KueueConfig = Field(default=KueueConfig(), description="Queues and quotas per team; queued GPU pools need it.")
    monitoring: MonitoringConfig = Field(default=MonitoringConfig(), description="Prometheus, Grafana, dashboards and GPU alerts.")
    dcgm_exporter: DcgmExporterConfig = Field(default=DcgmExporterConfig(), description="GPU metrics per pod.")
    pipelines: PipelinesConfig = Field(
        default=PipelinesConfig(), description="Kubeflow Pipelines; needs kubeflow, certManager and istio."
    )

    @model_validator(mode="after")
    def _needs(self) -> Components:
        needs = {
            "kubeflow": ("istio", "certManager"),
            "trainer": ("jobset",),
            "pipelines": ("kubeflow", "certManager", "istio"),
        }
        enabled = {name for name, on in self.enabled_by_key().items() if on}
        found = [
            (f"{dependency}.enabled", f"{component} needs {dependency}; enable {dependency} or disable {component}")
            for component, required in needs.items()
            for dependency in required
            if component in enabled and dependency not in enabled
        ]
        if found:
            raise problems(found)
        return self

    def enabled_by_key(self) -> dict[str, bool]:
        return {
            (field.alias or name): bool(getattr(self, name).enabled)
            for name, field in type(self).model_fields.items()
        }


# --- where upstream software comes from ------------------------------------------------

REMOTE_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://")


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


def _gcp_region(value: str | None) -> str | None:
    if value is not None and not GCP_REGION.match(value):
        hint = f"; {value!r} is a zone, its region is {zone_region(value)}" if GCP_ZONE.match(value) else ""
        raise ValueError(f"{value!r} is not a GCP region such as us-central1{hint}")
    return value


def _gcp_zone(value: str | None) -> str | None:
    if value is not None and not GCP_ZONE.match(value):
        raise ValueError(f"{value!r} is not a GCP zone such as us-central1-a")
    return value


class PlatformConfig(Model):
    """Everything a stack file may say, keyed as it is written."""

    project: str | None = Field(default=None, alias="gcp:project", description="GCP project; required for gke.")
    region: Annotated[str, AfterValidator(_gcp_region)] | None = Field(
        default=None,
        alias="gcp:region",
        description="The Google provider's default region; if set, the cluster's region (the program places "
        "everything there).",
    )
    zone: Annotated[str, AfterValidator(_gcp_zone)] | None = Field(
        default=None, alias="gcp:zone", description="The Google provider's default zone; if set, one of the cluster's region."
    )
    environment: Environment = Field(
        default=Environment.DEV,
        alias="mlplatform:environment",
        description="prod turns deletion protection on and the prod policy rules.",
    )
    cluster: ClusterConfig = Field(alias="mlplatform:cluster", description="The cluster; `kind` picks the model.")
    components: Components = Field(
        default=Components(), alias="mlplatform:components", description="In-cluster components."
    )
    teams: list[Team] = Field(
        default_factory=list, alias="mlplatform:teams", description="One Kubeflow profile namespace each."
    )
    sources: Sources = Field(
        default=Sources(),
        alias="mlplatform:sources",
        description="Where charts and Kubeflow manifests come from; default: the public upstreams.",
    )
    images: Images = Field(
        default=Images(),
        alias="mlplatform:images",
        description="Where the cluster pulls images from; default: each image's own registry.",
    )
    overrides: Overrides = Field(
        default=Overrides(),
        alias="mlplatform:overrides",
        description="Values the catalogs do not list yet, accepted knowingly (the error that refuses one names this key).",
    )

    @field_validator("project")
    @classmethod
    def _project(cls, value: str | None) -> str | None:
        if value is not None and not GCP_PROJECT_ID.match(value):
            hint = " (the project ID, not its number)" if value.isdigit() else ""
            raise ValueError(
                f"{value!r} is not a GCP project ID{hint}: 6-30 lowercase letters, digits and '-', "
                "a letter first, no '-' last (gcloud projects list shows the IDs)"
            )
        return value

    def enabled_components(self) -> dict[str, bool]:
        """Which components this stack installs, with defaults that depend on the cluster resolved."""
        enabled = self.components.enabled_by_key()
        cluster = self.cluster
        if self.components.dcgm_exporter.enabled is None:
            enabled["dcgmExporter"] = isinstance(cluster, GkeClusterConfig) and (
                bool(cluster.gpu_pools) or any(k in ACCELERATORS for k in cluster.autoprovisioning.limits)
            )
        return enabled

    @property
    def deletion_protection(self) -> bool:
        cluster = self.cluster
        if isinstance(cluster, GkeClusterConfig) and cluster.deletion_protection is not None:
            return cluster.deletion_protection
        return self.environment is Environment.PROD

