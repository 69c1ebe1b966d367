"""The stack file's teams: each a Kubeflow profile namespace with its people, quota,
container defaults, bucket and Ray cluster; and the namespaces a team may not take."""

from __future__ import annotations

from decimal import Decimal
from enum import Enum
from typing import Annotated

from pydantic import (
    Field,
    StrictBool,
    StrictInt,
    field_validator,
    model_validator,
)

from facts.naming import bucket_name_problem
from stackmodel import quantity
from stackmodel.schema.common import (
    BUCKET_DUAL_REGIONS,
    BUCKET_MULTI_REGIONS,
    DNS_SUBDOMAIN,
    DNS_SUBDOMAIN_MAX,
    GCP_REGION,
    GCP_ZONE,
    RESERVED_NAMESPACE_PREFIXES,
    RESERVED_NAMESPACES,
    Email,
    GroupName,
    Int64,
    MemoryQuantity,
    Model,
    ResourceQuantity,
    ShortName,
    _dns_label,
    _text,
    problem,
    rule,
    zone_region,
)

# --- teams ----------------------------------------------------------------------------


class Role(str, Enum):
    ADMIN = "admin"
    """A group's only (an owner group): the owner's ClusterRole kubeflow-admin; a team has one owner person."""
    EDIT = "edit"
    VIEW = "view"


PERSON_ROLES = (Role.EDIT, Role.VIEW)


class Contributor(Model):
    """Someone besides the owner with access to the team namespace: a person (`email`) or a
    group (`group`, defined under mlplatform:components.kubeflow.auth.groups), each with a role."""

    email: Email | None = Field(default=None, description="A person: the address they sign in with.")
    group: GroupName | None = Field(
        default=None,
        description="A group: every member gets the role (docs/teams.md, \"Groups\"); one of "
        "mlplatform:components.kubeflow.auth.groups, spelled as the identity provider sends it.",
    )
    role: Role = Field(
        description="edit (ClusterRole kubeflow-edit) or view (kubeflow-view) in the namespace; a group may also be "
        "admin (kubeflow-admin, an owner group)."
    )

    @model_validator(mode="after")
    @rule("contributor-person-or-group")
    def _person_or_group(self) -> Contributor:
        if (self.email is None) == (self.group is None):
            raise problem(
                "group" if self.group is not None else "email",
                "a contributor is a person ({email: ana@acme.com, role: edit}) or a group "
                "({group: ml-vision@acme.com, role: edit}): give one of email and group",
            )
        if self.email is not None and self.role not in PERSON_ROLES:
            raise problem(
                "role",
                f"a person's role is 'edit' or 'view', not {self.role.value!r}: the team's one owner is `owner`; "
                "for more owners name a group with role admin",
            )
        return self

    @property
    def who(self) -> str:
        """The person's address or the group's name."""
        return self.email if self.email is not None else str(self.group)

    @property
    def key(self) -> str:
        """Where the stack file names who it is: `email` or `group`."""
        return "email" if self.email is not None else "group"


class TeamQuota(Model):
    """What the team's pods may request at once: the namespace's ResourceQuota and, with kueue,
    the nominal quota of the team's ClusterQueue."""

    gpus: dict[str, Int64] = Field(default_factory=dict, description="GPUs per accelerator name, e.g. nvidia-l4: 8.")
    cpu: ResourceQuantity = Field(default="32", description="CPU cores, a Kubernetes quantity such as 64 or 500m.")
    memory: MemoryQuantity = Field(default="128Gi", description="Memory, a Kubernetes quantity with its unit such as 256Gi.")
    notebooks: StrictInt = Field(
        default=2,
        ge=1,
        le=1000,
        description="Notebooks of the form's default size (0.5 CPU, 1Gi) the namespace keeps room for beside what its "
        "queue admits: CPU-only notebooks are not queued, and GPU ones count against the namespace's quota while "
        "they wait in the queue. The namespace's ResourceQuota is the queue's nominal CPU and memory, plus what its "
        "cohort lends, plus this room, pipelineSteps' and the mesh sidecars of queued Ray pods; GPUs are the queue's "
        "alone (Kueue admits every GPU pod of the namespace).",
    )
    pipeline_steps: StrictInt = Field(
        default=2,
        ge=0,
        le=1000,
        description="With pipelines: CPU-only pipeline steps running at once the namespace keeps room for beside what "
        "its queue admits, each with its driver pod and Argo's executor containers, its own container at "
        "containerDefaults (Kueue queues only GPU steps). Steps beyond it take room the queue counts on.",
    )


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
    @rule("container-requests-within-limits")
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
    head_cpu: ResourceQuantity = Field(
        default="2",
        description="CPU of the head's Ray container, request and limit (Kubernetes quantity), more than 0: it "
        "runs no tasks but GCS, the dashboard, the Jobs API and the autoscaler.",
    )
    head_memory: MemoryQuantity = Field(
        default="8Gi",
        description="Memory of the head's Ray container, request and limit, a Kubernetes quantity with its unit "
        "such as 8Gi; more than 0.",
    )

    @model_validator(mode="after")
    @rule("team-ray-sizes")
    def _sizes(self) -> TeamRay:
        if self.min_workers > self.max_workers:
            raise problem("minWorkers", f"minWorkers {self.min_workers} is above maxWorkers {self.max_workers}")
        sizes = (
            ("workerCpu", self.worker_cpu, "4"),
            ("workerMemory", self.worker_memory, "16Gi"),
            ("headCpu", self.head_cpu, "2"),
            ("headMemory", self.head_memory, "8Gi"),
        )
        for key, size, example in sizes:
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
        default=None,
        description="Kueue cohort: teams in one cohort borrow each other's unused quota, and each gets back what it "
        "lent by preempting the borrowers' jobs (docs/teams.md, \"Sharing GPUs\").",
    )
    weight: Decimal = Field(
        default=Decimal(1),
        ge=0,
        le=1000,
        decimal_places=3,
        description="The team's fair-share weight in its cohort (Kueue's ClusterQueue fairSharing.weight): of what "
        "the cohort leaves idle, a team of weight 2 gets twice the share of a team of weight 1; 0: only what no "
        "other team wants, given back first. Needs a cohort and kueue.fairSharing.",
    )
    bucket: TeamBucket | None = Field(default=None, description="A GCS bucket for the team (gke only).")
    ray: TeamRay | None = Field(default=None, description="A RayCluster in the namespace (needs kuberay).")
    push_images: StrictBool = Field(
        default=False,
        description="The team's Google service account (its notebooks and jobs, through Workload Identity) may push "
        "to the stack's Artifact Registry repository (gke).",
    )

    @field_validator("weight", mode="before")
    @classmethod
    def _weight(cls, value: object) -> object:
        if isinstance(value, bool) or not isinstance(value, (int, float, str, Decimal)):
            raise ValueError(f"{value!r} is not a weight: a number such as 1, 2 or 0.5")
        return value

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
    @rule("team-contributors-once")
    def _people(self) -> Team:
        seen: dict[tuple[str, str], int] = {}
        for i, entry in enumerate(self.contributors):
            who = entry.who.lower()
            if entry.email is not None and who == self.owner.lower():
                raise problem(f"contributors[{i}].email", f"{entry.email} is the owner; remove them from contributors")
            if (entry.key, who) in seen:
                raise problem(
                    f"contributors[{i}].{entry.key}",
                    f"{entry.who} is listed twice (also at contributors[{seen[entry.key, who]}]); keep one entry",
                )
            seen[entry.key, who] = i
        return self

    @property
    def people(self) -> list[Contributor]:
        """The contributors who are persons."""
        return [c for c in self.contributors if c.email is not None]

    @property
    def groups(self) -> list[Contributor]:
        """The contributors who are groups."""
        return [c for c in self.contributors if c.group is not None]
