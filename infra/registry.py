"""The stack's Artifact Registry: one Docker repository in the stack's project for the
platform's images (the notebook images, images/notebook/) and the teams' own, which the
cluster's nodes pull from.

pulumi-gcp 10.2.0 `artifactregistry.Repository` (format DOCKER) and `RepositoryIamMember`;
roles and the image path `<location>-docker.pkg.dev/<project>/<repository>/<image>` from
cloud.google.com/artifact-registry/docs/access-control and .../docs/docker/names. The
project needs the Artifact Registry API (`gcloud services enable artifactregistry.googleapis.com`).
"""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from infra.args import ImageRegistryArgs
from infra.component import Component

READER = "roles/artifactregistry.reader"
WRITER = "roles/artifactregistry.writer"


def repository_args(args: ImageRegistryArgs) -> gcp.artifactregistry.RepositoryArgs:
    return gcp.artifactregistry.RepositoryArgs(
        project=args.project,
        location=args.location,
        repository_id=args.repository_id,
        format="DOCKER",
        description="Images of the ML platform (notebook images) and of its teams",
    )


class ImageRegistry(Component):
    """The Docker repository the platform's notebook images and the teams' images live in."""

    repository: pulumi.Output[str]
    """The repository's id, for IAM members on it."""
    url: pulumi.Output[str]
    """`<location>-docker.pkg.dev/<project>/<repository>`: where images are pushed and pulled."""
    location: str
    project: str | None

    def __init__(
        self,
        name: str,
        args: ImageRegistryArgs,
        node_service_account: pulumi.Output[str],
        opts: pulumi.ResourceOptions | None = None,
    ):
        """`node_service_account`: the e-mail of the nodes' account, which pulls."""
        super().__init__(name, opts)
        repository = gcp.artifactregistry.Repository(
            name, repository_args(args), opts=pulumi.ResourceOptions(parent=self, protect=args.deletion_protection)
        )
        self.location, self.project = args.location, args.project
        # The nodes' project-wide artifactregistry.reader (infra/gke.py NODE_SA_ROLES) already
        # reads every repository of the project; this binding keeps the platform's own
        # readable should that role be narrowed.
        self.member(f"{name}-nodes", READER, pulumi.Output.concat("serviceAccount:", node_service_account), repository)
        for member in args.pushers:
            self.member(f"{name}-pusher-{member}", WRITER, member, repository)
        self.repository = repository.repository_id
        self.url = pulumi.Output.from_input(args.path)
        self.register_outputs({"repository": self.repository, "url": self.url})

    def member(
        self,
        name: str,
        role: str,
        member: pulumi.Input[str],
        repository: gcp.artifactregistry.Repository | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> gcp.artifactregistry.RepositoryIamMember:
        """`member` gets `role` on the repository (a team's writer binding lives under the team)."""
        return gcp.artifactregistry.RepositoryIamMember(
            name,
            gcp.artifactregistry.RepositoryIamMemberArgs(
                project=self.project,
                location=self.location,
                repository=repository.repository_id if repository else self.repository,
                role=role,
                member=member,
            ),
            opts=opts or pulumi.ResourceOptions(parent=self),
        )
