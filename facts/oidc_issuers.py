"""OpenID Connect issuers as their providers publish them, as data.

Dex's OIDC connector (dexidp/dex v2.45.0 connector/oidc/oidc.go `getProvider`) calls
go-oidc's NewProvider, which fetches `<issuer without a trailing slash>/.well-known/
openid-configuration` and then refuses the provider unless the document's `issuer` equals
the configured one byte for byte (coreos/go-oidc v3.10.0 oidc/oidc.go NewProvider: "oidc:
issuer did not match the issuer returned by provider"; Dex v2.45.0 pins go-oidc v3.17.0,
not in the stored copy, whose comparison is the same line). So `https://accounts.google.com/`
fetches the right document and still fails: Dex does not start its connector and nobody
signs in.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

PUBLISHED: Mapping[str, str] = MappingProxyType(
    {
        # Google "OpenID Connect" reference, Discovery Document (developers.google.com/
        # identity/openid-connect/reference, read 2026-12-01): "The modern value is
        # https://accounts.google.com".
        "accounts.google.com": "https://accounts.google.com",
    }
)
"""host -> the exact issuer its discovery document names."""
