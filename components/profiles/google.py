"""A team's Google identity on GKE: the Google service account its `default-editor` acts as
(Workload Identity), the team bucket with that account as object admin, and with
`pushImages` write access to the stack's image repository."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_gcp as gcp

from components.profiles.args import GoogleCloud
from components.profiles.namespace import EDITOR_SA
from components.profiles.pod_default import bucket_name
from facts import naming
from facts.labels import WORKLOAD_IDENTITY_ANNOTATION
from infra.registry import WRITER, ImageRegistry
from plumbing.base import workload_identity_account
from stackmodel.schema import Team as TeamConfig


def team_service_account_id(team: TeamConfig) -> str:
    """The id of the team's Google service account: `team-<name>`, length-safe."""
    return naming.team_service_account_id(team.name)



def editor_service_account(team: TeamConfig, gcp_service_account: pulumi.Input[str]) -> dict[str, Any]:
    """`default-editor`, made by us with its Workload Identity annotation. Not the profile
    controller's WorkloadIdentity plugin: that plugin calls IAM to grant the binding itself,
    with credentials the controller lacks here, and error-loops; our IAM member grants it.
    The controller creates the account only when absent and leaves an existing one alone
    (kubeflow/dashboard components/profile-controller/controllers/profile_controller.go
    updateServiceAccount: Get, Create on NotFound)."""
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": EDITOR_SA, "namespace": team.name, "annotations": {WORKLOAD_IDENTITY_ANNOTATION: gcp_service_account}},
    }


def google_identity(
    team: TeamConfig,
    google: GoogleCloud,
    registry: ImageRegistry | None,
    child: Callable[..., pulumi.ResourceOptions],
    also_for: tuple[str, ...] = (),
) -> pulumi.Output[str]:
    """A Google service account for the namespace's default-editor (Workload Identity),
    the team bucket with that account as object admin, and with `pushImages` write
    access to the stack's image repository (pulling needs nothing: the nodes pull); the
    account's e-mail. `child`: the team component's options for a child, with resource options."""
    account = workload_identity_account(
        f"{team.name}-gsa",
        google.project or "",
        team_service_account_id(team),
        f"Kubeflow profile {team.name} (default-editor)",
        (team.name, EDITOR_SA),
        child(),
    )
    for service_account in also_for:  # the namespace's other accounts that act as the team (Spark's)
        gcp.serviceaccount.IAMMember(
            f"{team.name}-gsa-{service_account}-workload-identity",
            gcp.serviceaccount.IAMMemberArgs(
                service_account_id=account.name,
                role="roles/iam.workloadIdentityUser",
                member=f"serviceAccount:{google.project or ''}.svc.id.goog[{team.name}/{service_account}]",
            ),
            opts=child(),
        )
    if team.bucket:
        bucket = gcp.storage.Bucket(
            f"{team.name}-bucket",
            gcp.storage.BucketArgs(
                project=google.project,
                name=bucket_name(team, google),
                location=(team.bucket.location or google.region).upper(),
                uniform_bucket_level_access=True,
                public_access_prevention="enforced",
                force_destroy=False,
            ),
            # Datasets and checkpoints outlive the team: never deleted by Pulumi, even on a
            # deliberate removal (force_destroy off: GCS would refuse a non-empty one anyway).
            opts=child(protect=True, retain_on_delete=True),
        )
        gcp.storage.BucketIAMMember(
            f"{team.name}-bucket-admin",
            gcp.storage.BucketIAMMemberArgs(
                bucket=bucket.name,
                role="roles/storage.objectAdmin",
                member=account.email.apply(lambda e: f"serviceAccount:{e}"),
            ),
            opts=child(),
        )
    if team.push_images:
        if registry is None:  # stackmodel/rules/ team-push-images-needs-registry refuses such a stack
            raise ValueError(f"team {team.name} pushes images but the stack has no image registry")
        registry.member(
            f"{team.name}-image-pusher",
            WRITER,
            account.email.apply(lambda e: f"serviceAccount:{e}"),
            opts=child(),
        )
    return account.email

