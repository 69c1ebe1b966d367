"""Who may sign in: the sign-in's settings, its groups and where their members come from, the
people the stack names."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from facts.naming import SECRET_KEY_MAX, dex_password_env
from facts.oidc_issuers import PUBLISHED as PUBLISHED_ISSUERS
from stackmodel.components.kubeflow import KUBEFLOW
from stackmodel.components.monitoring import MONITORING
from stackmodel.rules.rule import AUTH, CLUSTER, KIND, OVERRIDES, TEAMS, Found, gke_cluster, stack_rule, team_path
from stackmodel.schema import GOOGLE_ISSUER, AuthKind, GroupSource
from stackmodel.stack import PlatformConfig


def sign_in_problem(config: PlatformConfig, email: str) -> str | None:
    """Why `email` could never sign in to this stack, or None (it can, or the stack does not
    say who may: Dex without static users)."""
    auth = config.components[KUBEFLOW].auth
    address = email.lower()
    if auth.kind is AuthKind.OIDC:
        if address in {e.lower() for e in auth.allowed_emails} or address.rsplit("@", 1)[-1] in auth.allowed_domains:
            return None
        return f"{email} cannot sign in: its domain is not in {AUTH}.allowedDomains and it is not in allowedEmails; add one of them, or correct the address"
    if auth.static_users and address not in {u.lower() for u in auth.static_users}:
        return f"{email} cannot sign in: it is not one of {AUTH}.staticUsers; add it there (with its hash in mlplatform:dexPasswordHashes), or correct the address"
    return None


@stack_rule("oidc-issuer-as-published", "An OIDC issuer ending in '/' is taken only knowingly (most providers publish theirs without).", reads=(f"{KUBEFLOW.path}.auth", OVERRIDES))
def _oidc_issuer_as_published(config: PlatformConfig) -> Found:
    """Dex's OIDC library compares the issuer with the one the provider publishes byte for
    byte (facts/oidc_issuers.py). Nearly every provider publishes it without a trailing '/',
    so one written with it is refused unless the stack says the provider publishes it so."""
    auth = config.components[KUBEFLOW].auth
    if auth.kind is not AuthKind.OIDC or auth.oidc is None:
        return
    issuer = auth.oidc.issuer
    host = issuer.removeprefix("https://").split("/", 1)[0]
    if issuer.endswith("/") and host not in PUBLISHED_ISSUERS and issuer not in config.overrides.oidc_issuers:
        yield (
            f"{AUTH}.oidc.issuer",
            f"{issuer!r} ends in '/': Dex's OIDC library (go-oidc) refuses the provider unless its discovery document "
            f"names the issuer exactly so, and most publish it without (https://accounts.google.com); write "
            f"{issuer.rstrip('/')!r}, or, if {issuer.rstrip('/')}/.well-known/openid-configuration says {issuer!r}, take "
            f"it knowingly with mlplatform:overrides: {{oidcIssuers: [{issuer!r}]}}",
        )


def _addresses(config: PlatformConfig) -> Iterator[tuple[str, str]]:
    """(config path, address) of everyone the stack names, the identity provider's own
    lists first: Dex sends a static user as staticUsers writes it."""
    auth = config.components[KUBEFLOW].auth
    yield from ((f"{AUTH}.staticUsers[{i}]", e) for i, e in enumerate(auth.static_users))
    yield from ((f"{AUTH}.allowedEmails[{i}]", e) for i, e in enumerate(auth.allowed_emails))
    yield from ((f"{MONITORING.path}.grafanaAdmins[{i}]", e) for i, e in enumerate(config.components[MONITORING].grafana_admins))
    for i, team in enumerate(config.teams):
        yield f"{team_path(i)}.owner", team.owner
        yield from ((f"{team_path(i)}.contributors[{j}].email", c.email) for j, c in enumerate(team.contributors) if c.email)
    for k, group in enumerate(auth.groups):
        yield from ((f"{AUTH}.groups[{k}].members[{m}]", e) for m, e in enumerate(group.members))


@stack_rule("identities-spelled-alike", "One person is spelled one way throughout the stack (upstream compares exactly).", reads=(f"{KUBEFLOW.path}.auth", f"{MONITORING.path}.grafanaAdmins", TEAMS))
def _identities_spelled_alike(config: PlatformConfig) -> Found:
    """Dex and oauth2-proxy take `Ana@acme.com` and `ana@acme.com` for one account, but the
    profile controller, KFAM and Istio compare the kubeflow-userid header exactly (stackmodel/schema/common.py,
    "e-mail addresses"): only the spelling the identity provider sends reaches the team. So
    one person is spelled one way throughout the stack."""
    first: dict[str, tuple[str, str]] = {}
    for path, address in _addresses(config):
        key = address.lower()
        if key not in first:
            first[key] = (path, address)
            continue
        other_path, other = first[key]
        if other != address:
            source = "Dex signs static users in as staticUsers writes them" if ".staticUsers[" in other_path else (
                "the identity provider sends one spelling"
            )
            yield (
                path,
                f"{address} and {other} ({other_path}) differ only in letter case: Dex and oauth2-proxy take them for one "
                f"account, but the profile controller, KFAM and Istio compare addresses exactly, and {source}; "
                f"write {other} here too",
            )


@stack_rule("gateway-exposed-on-gke", "A public hostname and IAP for the Kubeflow gateway only on GKE.", reads=(f"{KUBEFLOW.path}.auth", KIND))
def _gateway_exposed_on_gke(config: PlatformConfig) -> Found:
    auth = config.components[KUBEFLOW].auth
    if gke_cluster(config) is None and (auth.hostname or auth.iap):
        yield f"{KUBEFLOW.path}.auth", "hostname and iap expose the gateway on GKE; on kind remove them"


@stack_rule("stack-groups-not-also-googles", "A stack group is not also a Google group that Google Groups for RBAC hands kubectl.", reads=(f"{KUBEFLOW.path}.auth", f"{CLUSTER}.securityGroup"))
def _stack_groups_not_also_googles(config: PlatformConfig) -> Found:
    """With Google Groups for RBAC the API server gives RBAC the Google groups a person is in,
    so a group's RoleBinding (a Group subject) follows Google's membership for kubectl, while a
    stack group's members are the stack's everywhere else: two memberships of one group."""
    gke = gke_cluster(config)
    if gke is None or gke.security_group is None:
        return
    for k, group in enumerate(config.components[KUBEFLOW].auth.groups):
        if group.source is GroupSource.STACK and "@" in group.name:
            yield (
                f"{AUTH}.groups[{k}].source",
                f"group {group.name} lists its members in the stack, but {CLUSTER}.securityGroup makes kubectl "
                "follow the Google group of that name (Google Groups for RBAC): the two memberships would "
                "disagree; use source: cloudIdentity (Google's membership on every surface), or drop securityGroup",
            )


@stack_rule("groups-can-be-supplied", "Each group's membership has a source in this stack's sign-in; its members can sign in.", reads=(f"{KUBEFLOW.path}.auth",))
def _groups_can_be_supplied(config: PlatformConfig) -> Found:
    """Where each group's membership comes from exists in this stack: a provider group needs an
    OIDC upstream that sends groups; a stack group's members are people who can sign in."""
    auth = config.components[KUBEFLOW].auth
    for k, group in enumerate(auth.groups):
        path = f"{AUTH}.groups[{k}]"
        if group.source is GroupSource.PROVIDER:
            if auth.kind is AuthKind.DEX:
                yield (
                    f"{path}.source",
                    f"group {group.name}: with Dex static users there is no identity provider to send groups; the stack "
                    "is the group's source (source: stack, with its members)",
                )
            elif auth.oidc is not None and auth.oidc.issuer.rstrip("/") == GOOGLE_ISSUER:
                yield (
                    f"{path}.source",
                    f"group {group.name}: this stack signs in with Google, whose ID token carries no groups claim; use "
                    "source: cloudIdentity (gke: its members read from Cloud Identity at `pulumi up`) or list the group's "
                    "members with source: stack (docs/teams.md, \"Google Workspace\"; kubectl on GKE follows the Google "
                    "group itself through mlplatform:cluster.securityGroup)",
                )
            elif auth.oidc is None or auth.oidc.groups is None:
                yield (
                    f"{path}.source",
                    f"group {group.name}: this stack's sign-in sends no groups ({AUTH}.oidc.groups is not set); set it "
                    "(claim, scopes) as docs/teams.md says for your identity provider, or list the members with "
                    "source: stack",
                )
        if group.source is GroupSource.CLOUD_IDENTITY and gke_cluster(config) is None:
            yield (
                f"{path}.source",
                f"group {group.name}: Cloud Identity is read through the Google provider, on gke stacks only; on "
                f"{config.cluster.kind} list the group's members with source: stack",
            )
        for m, member in enumerate(group.members):
            found = sign_in_problem(config, member)
            if found:
                yield f"{path}.members[{m}]", found


def with_read_members(config: PlatformConfig, read: Mapping[str, Sequence[str]]) -> tuple[PlatformConfig, list[tuple[str, str]]]:
    """`config` with each cloudIdentity group's members as Cloud Identity gave them (`read`: group
    -> member e-mails, infra/cloud_identity.py), so they feed exactly what a stack group's members
    feed; and (path, why) of each member left out. A member who could never sign in to this
    stack (the rule stack members meet, _sign_in_problem) is left out and reported, not refused:
    who joins a Google group is not the stack's to edit, and a binding for them would open nothing."""
    auth = config.components[KUBEFLOW].auth
    groups, left_out = [], []
    for k, group in enumerate(auth.groups):
        if group.source is not GroupSource.CLOUD_IDENTITY:
            groups.append(group)
            continue
        members = []
        for member in read.get(group.name, ()):
            found = sign_in_problem(config, member)
            if found:
                left_out.append((f"{AUTH}.groups[{k}]", f"group {group.name} (Cloud Identity): left out, {found}"))
            else:
                members.append(member)
        groups.append(group.model_copy(update={"members": members}))
    kubeflow = config.components[KUBEFLOW]
    components = config.components.replaced(KUBEFLOW, kubeflow.model_copy(update={"auth": auth.model_copy(update={"groups": groups})}))
    return config.model_copy(update={"components": components}), left_out


@stack_rule("grafana-signs-in-through-kubeflow", "Grafana trusts the Kubeflow gateway's identity, so monitoring needs kubeflow.", reads=(MONITORING.path, KUBEFLOW.path))
def _grafana_signs_in_through_kubeflow(config: PlatformConfig) -> Found:
    if config.components[MONITORING].enabled and not config.components[KUBEFLOW].enabled:
        yield (
            f"{MONITORING.path}.enabled",
            "Grafana signs people in with the identity the Kubeflow gateway asserts and has no login of its own; "
            "enable kubeflow or disable monitoring",
        )


@stack_rule("dex-has-static-users", "With Dex, someone can sign in: at least one static user.", reads=(KUBEFLOW.path,))
def _dex_has_static_users(config: PlatformConfig) -> Found:
    kubeflow = config.components[KUBEFLOW]
    if kubeflow.enabled and kubeflow.auth.kind is AuthKind.DEX and not kubeflow.auth.static_users:
        yield (
            f"{AUTH}.staticUsers",
            "Dex without static users lets nobody sign in (it has no other login); list who may sign in, "
            "each with a bcrypt hash in mlplatform:dexPasswordHashes, or use kind: oidc",
        )


@stack_rule("dex-password-envs-unique", "Every Dex static user reads its password hash from an environment variable of its own.", reads=(f"{KUBEFLOW.path}.auth",))
def _dex_password_envs_unique(config: PlatformConfig) -> Found:
    """Each static user's hash reaches Dex as an environment variable named after the
    e-mail (facts/naming.py dex_password_env); two users sharing a name would share one
    hash, so one person's password would sign in as the other. The encoding is injective,
    so this holds by construction; the rule refuses the stack anyway should it ever not."""
    auth = config.components[KUBEFLOW].auth
    if auth.kind is not AuthKind.DEX:
        return
    first: dict[str, int] = {}
    for i, email in enumerate(auth.static_users):
        name = dex_password_env(email)
        if len(name) > SECRET_KEY_MAX:
            yield (
                f"{AUTH}.staticUsers[{i}]",
                f"its password hash would go into the Secret key {name[:40]}... of {len(name)} characters, and "
                f"Kubernetes allows {SECRET_KEY_MAX} (each character other than a letter or digit takes 3); "
                "use a shorter address",
            )
        elif name in first and auth.static_users[first[name]] != email:
            yield (
                f"{AUTH}.staticUsers[{i}]",
                f"{email} and staticUsers[{first[name]}] {auth.static_users[first[name]]} would read their password "
                f"hash from one environment variable {name}, so either password would sign in as both; "
                "report this as a bug of facts/naming.py dex_password_env",
            )
        first.setdefault(name, i)


@stack_rule("grafana-admins-can-sign-in", "Every Grafana admin is someone the stack lets sign in.", reads=(KUBEFLOW.path, f"{MONITORING.path}.grafanaAdmins"))
def _grafana_admins_can_sign_in(config: PlatformConfig) -> Found:
    if not config.components[KUBEFLOW].enabled:
        return
    for i, email in enumerate(config.components[MONITORING].grafana_admins):
        found = sign_in_problem(config, email)
        if found:
            yield f"{MONITORING.path}.grafanaAdmins[{i}]", found


@stack_rule("people-not-groups", "An owner, a person contributor and a Grafana admin are not a group the stack defines.", reads=(TEAMS, f"{KUBEFLOW.path}.auth", f"{CLUSTER}.securityGroup", f"{MONITORING.path}.grafanaAdmins"))
def _people_not_groups(config: PlatformConfig) -> Found:
    """An owner, a person contributor and a Grafana admin are people: a group's address there
    would be compared with the signed-in person's and match no one."""
    groups = {g.name.lower(): f"{AUTH}.groups[{k}]" for k, g in enumerate(config.components[KUBEFLOW].auth.groups)}
    gke = gke_cluster(config)
    if gke and gke.security_group:
        groups.setdefault(gke.security_group.lower(), f"{CLUSTER}.securityGroup")
    if not groups:
        return
    for i, team in enumerate(config.teams):
        where = groups.get(team.owner.lower())
        if where:
            yield (
                f"{team_path(i)}.owner",
                f"{team.owner} is a group ({where}), and a team's owner is one person; name a person as owner and the "
                f"group as a contributor, {{group: {team.owner}, role: admin}}",
            )
        for j, entry in enumerate(team.contributors):
            where = groups.get(entry.email.lower()) if entry.email else None
            if where:
                yield (
                    f"{team_path(i)}.contributors[{j}].email",
                    f"{entry.email} is a group ({where}): as email it is taken for one person, who does not exist; "
                    f"write {{group: {entry.email}, role: {entry.role.value}}}",
                )
    for j, admin in enumerate(config.components[MONITORING].grafana_admins):
        where = groups.get(admin.lower())
        if where:
            yield (
                f"{MONITORING.path}.grafanaAdmins[{j}]",
                f"{admin} is a group ({where}), and Grafana admins are people (the gateway asserts a person); list the "
                "group's members here instead",
            )
