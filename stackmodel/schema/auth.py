"""The stack file's sign-in (mlplatform:components.kubeflow.auth): Dex's static users or an
upstream OIDC provider, who may sign in, and the groups teams name as contributors."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

from pydantic import AfterValidator, Field, StrictBool, field_validator, model_validator
from pydantic_core import PydanticCustomError

from facts.oidc_issuers import PUBLISHED as PUBLISHED_ISSUERS
from stackmodel.schema.common import (
    EMAIL_DOMAIN,
    REMOTE_SCHEME,
    Email,
    GroupName,
    Model,
    ValueKind,
    _email,
    _hostname,
    _text,
    _unique,
    problem,
    rule,
)


class AuthKind(str, Enum):
    DEX = "dex"
    """Dex static users (passwords from the secret config key mlplatform:dexPasswordHashes)."""
    OIDC = "oidc"
    """Dex with an upstream OIDC connector (e.g. Google); client secret from mlplatform:oidcClientSecret."""


GOOGLE_ISSUER = "https://accounts.google.com"
"""Google's issuer (facts/oidc_issuers.py): its ID token carries no groups claim
(developers.google.com/identity/openid-connect/openid-connect, "An ID token's payload")."""


class OidcGroups(Model):
    """The identity provider's groups, which Dex copies into the token it issues (its `groups`
    claim, the gateway's `kubeflow-groups` header). Dex v2.45.1 connector/oidc/oidc.go: groups
    only with `insecureEnableGroups`, read from `claimMapping.groups` (default `groups`), with
    the scopes of `scopes` (which replace Dex's default profile and email), from the userinfo
    endpoint too with `getUserInfo`. docs/teams.md, "Groups", per provider."""

    claim: Annotated[str, _text("groups claim's name")] = Field(
        default="groups",
        description="The claim of the provider's ID token (or userinfo) that lists a person's groups (Entra ID, "
        "Okta, Keycloak: groups, as docs/teams.md sets them up).",
    )
    scopes: list[Annotated[str, _text("scope")]] = Field(
        default_factory=list,
        description="Scopes Dex asks for besides openid, profile and email, e.g. [groups] for Okta; none for Entra ID "
        "(its groups claim is set in the app registration) and Keycloak (a client scope mapper).",
    )
    user_info: StrictBool = Field(
        default=False,
        description="Read the claims from the provider's userinfo endpoint too (Dex getUserInfo), for providers that "
        "leave groups out of the ID token.",
    )

    @field_validator("scopes")
    @classmethod
    def _scopes(cls, scopes: list[str]) -> list[str]:
        _unique(scopes, lambda s: s)
        for i, scope in enumerate(scopes):
            if scope in DEX_DEFAULT_SCOPES:
                raise PydanticCustomError("config", f"{scope!r}: Dex always asks for openid, profile and email; remove it", {"field": i})
        return scopes


DEX_DEFAULT_SCOPES = ("openid", "profile", "email")
"""What our Dex connector always asks the provider for (components/kubeflow.py dex_config)."""


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
    groups: OidcGroups | None = Field(
        default=None,
        description="The provider sends people's groups and Dex passes them on, for groups of source provider "
        "(docs/teams.md, \"Groups\"); unset: the token carries no groups.",
    )

    @model_validator(mode="after")
    @rule("oidc-groups-from-the-provider")
    def _groups_of_the_provider(self) -> OidcConnector:
        if self.groups is not None and self.issuer.rstrip("/") == GOOGLE_ISSUER:
            raise problem(
                "groups",
                "Google's ID token carries no groups claim, so Dex cannot pass Google groups on; remove groups and define "
                "the teams' Google groups with source: cloudIdentity (gke: their members read at `pulumi up`) or source: "
                "stack and their members (docs/teams.md, \"Google Workspace\"); kubectl on GKE still follows the Google "
                "group itself (mlplatform:cluster.securityGroup)",
            )
        return self

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


class GroupSource(str, Enum):
    STACK = "stack"
    """The stack lists the members (with Dex, its static users; Dex puts the group into their token)."""
    PROVIDER = "provider"
    """The upstream identity provider's groups claim (auth.oidc.groups): the gateway follows it live."""
    CLOUD_IDENTITY = "cloudIdentity"
    """gke: a Google group whose members (nested groups' too) the program reads from Cloud Identity
    at every `pulumi preview` / `pulumi up` (infra/cloud_identity.py)."""


class GroupDefinition(Model):
    """A group that teams name as a contributor. Surfaces that check the signed-in person only
    (the web apps, Pipelines, the dashboard's namespace list, the sidecars' policies) learn its
    members at `pulumi up`, from `members` or, for a cloudIdentity group, from Cloud Identity;
    the gateway follows a provider group's claim live (docs/teams.md, "Groups")."""

    name: GroupName = Field(
        description="The group as the identity provider names it in the token (source stack: any name; source "
        "cloudIdentity: the Google group's e-mail)."
    )
    source: GroupSource = Field(
        default=GroupSource.STACK,
        description="stack: the members listed here are the group; provider: the identity provider's groups claim "
        "(kind oidc with auth.oidc.groups), the members listed here being those the web apps and Pipelines let in; "
        "cloudIdentity (gke): the Google group, its members read from Cloud Identity at every `pulumi up`.",
    )
    members: list[Email] = Field(
        default_factory=list,
        description="Who is in it, each once. source stack: the group (with Dex, each a static user); source provider: "
        "the members known at `pulumi up`, for the surfaces that check the person only; source cloudIdentity: none "
        "(Cloud Identity says who is in it).",
    )

    @field_validator("members")
    @classmethod
    def _members(cls, members: list[str]) -> list[str]:
        _unique(members, str.lower, "; Dex and oauth2-proxy take addresses in any letter case for one")
        return members

    @model_validator(mode="after")
    @rule("group-members-by-source")
    def _members_by_source(self) -> GroupDefinition:
        if self.source is GroupSource.STACK and not self.members:
            raise problem(
                "members",
                f"group {self.name} (source stack) has no members; list them (members: [ana@acme.com, ...]), or take "
                "the group from the identity provider (source: provider, with auth.oidc.groups)",
            )
        if self.source is GroupSource.CLOUD_IDENTITY:
            if self.members:
                raise problem(
                    "members",
                    f"group {self.name} (source cloudIdentity): its members are read from Cloud Identity at `pulumi up`, "
                    "so a list here would be a second truth; remove members, or list them with source: stack",
                )
            try:
                _email(self.name)
            except ValueError:
                raise problem(
                    "name",
                    f"group {self.name!r} (source cloudIdentity): Cloud Identity looks a Google group up by its e-mail; "
                    "write the group's address, e.g. ml-vision@acme.com",
                ) from None
        return self


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
    groups: list[GroupDefinition] = Field(
        default_factory=list,
        description="Groups that teams name as contributors, each once (docs/teams.md, \"Groups\").",
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

    @field_validator("groups")
    @classmethod
    def _groups(cls, groups: list[GroupDefinition]) -> list[GroupDefinition]:
        _unique(groups, lambda g: g.name.lower(), "; group names differ in more than letter case")
        return groups

    @field_validator("allowed_domains")
    @classmethod
    def _allowed_domains(cls, domains: list[str]) -> list[str]:
        _unique(domains, lambda d: d)
        return domains

    @model_validator(mode="after")
    @rule("auth-settings-of-its-kind")
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
