"""The stack file's GKE network (created, or an existing one / Shared VPC, its authorized
networks) and the image registry."""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated

from pydantic import (
    AfterValidator,
    Field,
    StrictBool,
    field_validator,
    model_validator,
)

from facts import networks
from stackmodel.schema.common import (
    COMPUTE_NAME,
    GCP_PROJECT_ID,
    GCP_REGION,
    IAM_MEMBER,
    REGISTRY_MULTI_REGIONS,
    REPOSITORY_ID,
    Cidr,
    Model,
    _text,
    _unique,
    problem,
    problems,
    rule,
)


class AuthorizedNetwork(Model):
    """An IPv4 range allowed to reach the cluster's control plane."""

    cidr: Cidr = Field(description="The range, e.g. 203.0.113.0/24.")
    name: Annotated[str, _text("range's display name", spaces=True)] = Field(description="Display name of the range in GKE.")

    @field_validator("cidr")
    @classmethod
    def _reachable(cls, cidr: ipaddress.IPv4Network) -> ipaddress.IPv4Network:
        for reserved, what in networks.RESERVED.items():
            if cidr.subnet_of(reserved):
                raise ValueError(f"{cidr} is inside {reserved}, {what}: no client reaches the control plane from there; give the range your clients' addresses are in")
        return cidr


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
    @rule("existing-network-ranges-differ")
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
    @rule("created-network-ranges")
    def _ranges(self) -> NetworkConfig:
        found: list[tuple[str, str]] = []
        if self.master_cidr.prefixlen != 28:
            found.append(("masterCidr", f"{self.master_cidr} must be a /28 range, e.g. 172.16.0.0/28"))
        created = {} if self.existing is not None else {key: getattr(self, name) for key, name in CREATED_RANGES.items()}
        for key, cidr in {**created, "masterCidr": self.master_cidr}.items():
            reserved = networks.reserved_overlap(cidr)
            if reserved:
                found.append((key, f"{cidr} overlaps {reserved}, which no VPC range may use; pick a range in 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16"))
            elif key in ("masterCidr", "servicesCidr") and cidr.overlaps(networks.DOCKER_BRIDGE):
                found.append(
                    (
                        key,
                        f"{cidr} overlaps {networks.DOCKER_BRIDGE}, the Docker bridge's range, which GKE keeps out of a "
                        "private cluster's control-plane and Service ranges (an address there is a host's own bridge); "
                        "pick another range, e.g. 172.16.0.0/28 for the control plane",
                    )
                )
        subnet = created.get("subnetCidr")
        if subnet is not None and subnet.prefixlen > networks.SUBNET_SMALLEST_PREFIX:
            found.append(
                ("subnetCidr", f"{subnet} is smaller than the smallest subnet GCP creates (/{networks.SUBNET_SMALLEST_PREFIX}); use a /20 or so")
            )
        pods = created.get("podsCidr")
        if pods is not None and pods.prefixlen > networks.POD_RANGE_PER_NODE_PREFIX:
            found.append(
                (
                    "podsCidr",
                    f"{pods} is smaller than the /{networks.POD_RANGE_PER_NODE_PREFIX} GKE gives each node for its Pods "
                    "(110 per node), so no node could join; use a /14 to /20",
                )
            )
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
