"""The objects themselves: each valid against its schema, none null where a value is wanted, none
from two sources, CRDs and namespaces before their users, every volume claim kept, no credential
an upstream release publishes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from facts.support import minor, minor_label
from tooling import cluster_version
from tooling.check.platform import BUILTIN_NAMESPACES, Platform, Violation, check_rule, label, mappings_where
from tooling.fullrender import Rendered
from tooling.plan import SECRET
from tooling.schemas import GKE_PROVIDED_KINDS, Validator, is_builtin, schemas_of
from tooling.unknowns import null_sites

MASKED = frozenset({SECRET, "W3NlY3JldF0="})  # "[secret]" and its base64
CREDENTIAL_WORDS = ("password", "secret", "token", "cookie", "key")
DATABASE_USER_KEYS = frozenset({"username", "user", "db_user", "dbuser"})
SUPERUSERS = frozenset({"root", "cm9vdA=="})  # and its base64
# The docker-library/mysql entrypoint's switch for a root account without a password (8.4
# docker-entrypoint.sh docker_verify_minimum_env): what the Pipelines tree's MySQL sets.
EMPTY_PASSWORD_SWITCHES = frozenset({"MYSQL_ALLOW_EMPTY_PASSWORD"})
WELL_KNOWN_CREDENTIALS = {
    "minio123": "the object-store secret key Kubeflow Pipelines publishes (third-party/seaweedfs mlpipeline-minio-artifact)",
    "bWluaW8xMjM=": "the object-store secret key Kubeflow Pipelines publishes, base64 (minio123)",
}
"""Example credentials upstream releases publish, found anywhere in an object (Secrets, env, ConfigMaps)."""


@check_rule("schema", "every object valid against its schema")
def schema_valid(platform: Platform) -> Iterator[Violation]:
    """Every object valid against its schema: built-ins strictly, for the Kubernetes minor the
    stack's cluster is created at; custom kinds against the CRDs in the render itself, else
    the pinned upstream CRDs."""
    created_at = minor_label(minor(cluster_version.kubernetes_version(platform.config)))
    validator = Validator(schemas_of(o.obj for o in platform.of_kind("CustomResourceDefinition")), created_at)
    for o in platform.objects:
        errors = validator.errors(o.obj)
        if errors:
            yield Violation("schema", label(o), o.source, "; ".join(errors[:3]) + (f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""))


@check_rule("null", "no null where an object's schema wants a value")
def no_nulls(platform: Platform) -> Iterator[Violation]:
    """No `null` where an object's schema wants a value (a list item, a map value, a required
    field: tooling/unknowns.py): the API server refuses it, or stores an empty value. The full
    render gives our objects' unknowns (values only the cloud knows) typed placeholders."""
    created_at = minor_label(minor(cluster_version.kubernetes_version(platform.config)))
    validator = Validator(schemas_of(o.obj for o in platform.of_kind("CustomResourceDefinition")), created_at)
    for o in platform.objects:
        for site in null_sites(o.obj, validator):
            yield Violation(
                "null",
                label(o),
                o.source,
                f"{site.field}: null where the schema wants a {site.wants} ({site.why}); the API server refuses it or "
                "stores an empty value: give it a value or leave the entry out (a value only the cloud knows: a "
                "placeholder in the offline render, tooling/unknowns.py)",
            )


@check_rule("duplicate", "no object from two sources")
def no_duplicates(platform: Platform) -> Iterator[Violation]:
    """No object (group, kind, namespace, name) created twice: Pulumi would fight itself."""
    seen: dict[tuple[str, str, str, str], Rendered] = {}
    for o in platform.objects:
        first = seen.setdefault(o.key, o)
        if first is not o:
            yield Violation("duplicate", label(o), o.source, f"also created by {first.source}")


@check_rule("order", "CRDs and namespaces come from installs their users wait for")
def created_before(platform: Platform) -> Iterator[Violation]:
    """Every custom resource's CRD and every namespaced object's namespace come from an
    install it waits for in the Pulumi graph (or from the same install, which orders them)."""
    crds: dict[tuple[str, str], Rendered] = {}
    for o in platform.of_kind("CustomResourceDefinition"):
        spec = o.obj.get("spec") or {}
        crds[(spec.get("group", ""), (spec.get("names") or {}).get("kind", ""))] = o
    namespaces = {o.key[3]: o for o in platform.of_kind("Namespace")}
    for o in platform.objects:
        group, kind, namespace, _ = o.key
        waits = platform.waits_for(o.urn)
        if not is_builtin(o.obj):
            crd = crds.get((group, kind))
            if crd is None:
                if (o.obj.get("apiVersion"), kind) not in GKE_PROVIDED_KINDS and not _gke_serves(platform, group):
                    yield Violation("order", label(o), o.source, f"no CustomResourceDefinition for {kind}.{group} in the platform")
            elif crd.urn not in waits:
                yield Violation("order", label(o), o.source, f"does not wait for its CRD (from {crd.source})")
        if namespace and namespace not in BUILTIN_NAMESPACES:
            creator = namespaces.get(namespace)
            if creator is None:
                yield Violation("order", label(o), o.source, f"namespace {namespace} is created by nothing in the platform")
            elif creator.urn not in waits:
                yield Violation("order", label(o), o.source, f"does not wait for namespace {namespace} (from {creator.source})")


def _gke_serves(platform: Platform, group: str) -> bool:
    """API groups GKE itself serves on every cluster (managed Prometheus, managed certificates)."""
    return platform.gke is not None and group in {"monitoring.googleapis.com", "cloud.google.com", "networking.gke.io"}


def _secret_values(obj: dict[str, Any]) -> dict[str, Any]:
    return {**(obj.get("data") or {}), **(obj.get("stringData") or {})}


def _strings(node: Any) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


def _pod_specs(node: Any) -> Iterator[dict[str, Any]]:
    """Every pod spec in an object (anything with a `containers` list: workloads and custom resources)."""
    return mappings_where(node, lambda m: isinstance(m.get("containers"), list))


@check_rule("upstream-secret", "no well-known, empty or superuser credential from an upstream release")
def no_upstream_secrets(platform: Platform) -> Iterator[Violation]:
    """No credential the upstream release publishes survives: every credential-like key
    (password, secret, token, cookie, key) of an upstream Secret holds a Pulumi secret, no
    password is empty, no database user is root, no container allows an empty MySQL password,
    and no well-known example credential (WELL_KNOWN_CREDENTIALS) is anywhere in the platform."""
    for o in platform.of_kind("Secret"):
        for key, value in _secret_values(o.obj).items():
            lowered = key.lower()
            if "password" in lowered and value in ("", None):
                yield Violation("upstream-secret", label(o), o.source, f"{key} is empty; a password must be a generated Pulumi secret")
            elif lowered in DATABASE_USER_KEYS and value in SUPERUSERS:
                yield Violation("upstream-secret", label(o), o.source, f"{key} is the database superuser {value!r}; give the platform a user of its own")
            elif o.upstream and value and value not in MASKED and any(word in lowered for word in CREDENTIAL_WORDS):
                yield Violation("upstream-secret", label(o), o.source, f"{key} is the value the upstream release publishes; replace it with a Pulumi secret")
    for o in platform.objects:
        # One pass in C over the whole object first: most objects (CRDs are megabytes) hold
        # neither a switch's name nor a credential, and JSON writes both as they are.
        whole = json.dumps(o.obj, default=str, ensure_ascii=False)
        for template in _pod_specs(o.obj) if any(switch in whole for switch in EMPTY_PASSWORD_SWITCHES) else ():
            for container in [*(template.get("containers") or []), *(template.get("initContainers") or [])]:
                for var in container.get("env") or []:
                    if var.get("name") in EMPTY_PASSWORD_SWITCHES and str(var.get("value", "")).lower() not in ("", "false", "no", "0"):
                        yield Violation("upstream-secret", label(o), o.source, f"container {container.get('name')}: {var['name']} lets MySQL run without a root password; set MYSQL_ROOT_PASSWORD from a Pulumi secret")
        if not any(credential in whole for credential in WELL_KNOWN_CREDENTIALS):
            continue
        for text in _strings(o.obj):
            for credential, what in WELL_KNOWN_CREDENTIALS.items():
                if credential in text:
                    yield Violation("upstream-secret", label(o), o.source, f"holds {credential!r}, {what}; replace it with a generated Pulumi secret")


@check_rule("data-kept", "every volume claim protected and retained")
def data_kept(platform: Platform) -> Iterator[Violation]:
    """Every PersistentVolumeClaim the platform installs (a database's, an object store's) is
    protected and retained: a config mistake or a refactor stops `pulumi up` at it instead of
    deleting the volume and its data (plumbing/base.py `keep`)."""
    for o in platform.of_kind("PersistentVolumeClaim"):
        if not o.kept:
            yield Violation("data-kept", label(o), o.source, "holds data but Pulumi may delete it; give it plumbing.base.keep() (protect, retainOnDelete)")
