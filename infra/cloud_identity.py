"""The members of a stack's `source: cloudIdentity` groups, read from Cloud Identity while the
program is evaluated (every `pulumi preview` and `pulumi up`), so that the surfaces that check
the signed-in person only (the web apps, Pipelines, the dashboard's list, the team's sidecars)
follow the Google group without a stack edit (docs/teams.md, "Groups").

pulumi-gcp 10.2.0's invokes, called with plain arguments, answer plain results at once
(pulumi/runtime/invoke.py `invoke` awaits the RPC), so the members can name resources:
`cloudidentity.get_group_lookup` (groups.lookup: the group's resource name `groups/<id>` by its
e-mail) and `get_group_transitive_memberships` (groups.memberships.searchTransitiveMemberships:
direct members and those of nested groups). Each membership's `member` is `users/<id>` or
`groups/<id>`, its `preferredMemberKeys` the e-mail (no namespace for Google-managed accounts).
Kept: users' e-mails; left out: nested groups themselves (their members are listed), service
accounts (they never sign in through a browser) and external-identity keys (a namespace).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pulumi_gcp as gcp
from pulumi_gcp.cloudidentity.outputs import GetGroupTransitiveMembershipsMembershipResult

USER_KEY = "users/"
"""A user's membership key (pulumi_gcp/cloudidentity/outputs.py GetGroupTransitiveMembershipsMembershipResult.member)."""
SERVICE_ACCOUNT_DOMAIN = ".gserviceaccount.com"
"""Where every Google service account's address ends (cloud.google.com/iam/docs/service-account-overview)."""


def read_failed(group: str, project: str | None, reason: str) -> str:
    """What `pulumi up` says when a group cannot be read: the provider's reason, and each fix."""
    return (
        f"group {group} (source cloudIdentity) could not be read from Cloud Identity: {reason}. Enable the API "
        f"(gcloud services enable cloudidentity.googleapis.com --project {project or '<project>'}); let whoever runs "
        "`pulumi up` see the group's members (Google Admin console: the Groups Reader admin role, or a group whose "
        "membership its members may view); check the group's e-mail; with user credentials (gcloud auth "
        "application-default login) set gcp:billingProject and gcp:userProjectOverride: true (docs/gke.md, \"Google "
        "groups\")"
    )


def user_emails(memberships: Iterable[GetGroupTransitiveMembershipsMembershipResult]) -> list[str]:
    """The people among a group's transitive memberships, each once (letter case aside), sorted so
    that one membership gives one plan whatever order Cloud Identity answers in."""
    found: dict[str, str] = {}
    for membership in memberships:
        if not str(membership.member).startswith(USER_KEY):
            continue
        for key in membership.preferred_member_keys or ():
            email = str(key.id)
            if key.namespace or email.lower().endswith(SERVICE_ACCOUNT_DOMAIN):
                continue
            found.setdefault(email.lower(), email)
    return [found[k] for k in sorted(found)]


def read_members(groups: Sequence[str], project: str | None) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Each group's (by e-mail) people, and why each group that could not be read was not."""
    read: dict[str, list[str]] = {}
    failed: dict[str, str] = {}
    for group in groups:
        try:
            found = gcp.cloudidentity.get_group_lookup(group_key={"id": group})
            memberships = gcp.cloudidentity.get_group_transitive_memberships(group=found.name).memberships
        except Exception as err:  # the provider's failure (API off, 403, 404) as the SDK raises it
            failed[group] = read_failed(group, project, str(err))
            continue
        read[group] = user_emails(memberships or ())
    return read, failed
