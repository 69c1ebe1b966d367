"""`python -m stacks diff OLD NEW`: what a move does to the cluster, before `pulumi up`.

OLD and NEW are full renders (directories `python -m stacks render <stack> --full --out DIR`
wrote: platform.yaml, index.yaml) or git refs of this repository, each rendered in a
temporary worktree with the same mirror. The diff lists the objects added, removed and
changed, and flags each change the API server refuses in place, with what the program
does about it:

- Kubernetes' rules are the update validation of kube-apiserver (kubernetes/kubernetes
  pkg/apis/{apps,batch,core,rbac,storage}/validation, `Validate*Update`; their error texts
  are quoted per class) and, for CRDs, apiextensions-apiserver v0.34.10 (29718398)
  pkg/apis/apiextensions/validation/validation.go `validateCustomResourceDefinitionSpecUpdate`
  (scope and names.kind once established; group and names.plural always) and
  `ValidateCustomResourceDefinitionStoredVersions` (a version in status.storedVersions must
  stay in spec.versions).
- pulumi-kubernetes (provider/pkg/provider/diff.go `forceNew`, unchanged since 2026-02-18;
  read at 94977969, the newest stored commit, as no v4.34.2 tag is stored) replaces an
  object when a listed field changes, and provider.go `Diff` makes that delete-before-replace
  for an object with a fixed name in the same namespace, which is every object we render.
  A refused change it does not list is sent as an update, which the API server rejects:
  a stop that needs a person.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import yaml

from tooling.fullrender import object_key

REPO = Path(__file__).resolve().parents[1]
Key = tuple[str, str, str, str]
"""(group, kind, namespace, name)"""
MAX_PATHS = 8
"""Changed field paths shown per object in the human output (--json has all)."""


class Action(str, Enum):
    REPLACE = "delete-before-replace"
    """pulumi-kubernetes deletes the object, then creates it again (the same name)"""
    STOP = "stop"
    """the update is refused (or the replacement would delete data): a person acts before `pulumi up`"""
    NOTE = "note"
    """accepted in place, with a consequence worth knowing"""


class DiffError(Exception):
    """A render directory or git ref that cannot be read; the message names it."""


@dataclass(frozen=True)
class Finding:
    """One change Kubernetes refuses in place (or that deletes data), and what happens."""

    rule: str
    path: str
    action: Action
    kubernetes: str
    program: str

    def as_dict(self) -> dict[str, str]:
        return {"rule": self.rule, "path": self.path, "action": self.action.value, "kubernetes": self.kubernetes, "program": self.program}


@dataclass
class Change:
    key: Key
    source: str
    paths: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


@dataclass
class Diff:
    old: str
    new: str
    added: list[tuple[Key, str]] = field(default_factory=list)
    removed: list[tuple[Key, str, list[Finding]]] = field(default_factory=list)
    changed: list[Change] = field(default_factory=list)

    def findings(self) -> list[tuple[Key, Finding]]:
        found = [(c.key, f) for c in self.changed for f in c.findings]
        return found + [(key, f) for key, _, fs in self.removed for f in fs]

    @property
    def stops(self) -> int:
        return sum(1 for _, f in self.findings() if f.action is Action.STOP)


def label(key: Key) -> str:
    group, kind, namespace, name = key
    return f"{kind}{'.' + group if group else ''} {namespace + '/' if namespace else ''}{name}"


# --- reading renders ----------------------------------------------------------------------


def read_render(directory: Path) -> dict[Key, tuple[dict[str, Any], str]]:
    """Key -> (object, source) of a `render --full` directory."""
    platform, index = directory / "platform.yaml", directory / "index.yaml"
    for path in (platform, index):
        if not path.is_file():
            raise DiffError(f"{path}: no such file; give a directory `python -m stacks render <stack> --full --out DIR` wrote")
    sources = {
        (e["apiVersion"].split("/")[0] if "/" in e["apiVersion"] else "", e["kind"], e["namespace"] or "", e["name"]): e["source"]
        for e in (yaml.safe_load(index.read_text()) or {}).get("objects") or []
    }
    objects = {}
    for obj in yaml.safe_load_all(platform.read_text()):
        if obj:
            key = object_key(obj)
            objects[key] = (obj, sources.get(key, "?"))
    return objects


def render_ref(ref: str, stack: str, mirror: Path | None, workdir: Path, repo: Path = REPO) -> Path:
    """The full render of `stack` at git ref `ref` of `repo`, written under `workdir`: the ref
    checked out in a temporary worktree (removed again), rendered by its own code with this
    interpreter and the given mirror. The worktree sits beside a link to `repo`'s ../shared,
    so the ref finds the shared CRDs where it expects them."""
    commit = _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", what=f"{ref!r} is not a git ref of {repo}")
    commit = commit.strip()
    place = workdir / commit[:12]
    place.mkdir(parents=True)
    shared = repo.parent / "shared"
    if shared.exists():
        (place / "shared").symlink_to(shared.resolve())
    tree, out = place / "repo", place / "render"
    _git(repo, "worktree", "add", "--detach", str(tree), commit, what=f"git worktree add {ref}")
    try:
        args = [sys.executable, "-m", "stacks", "render", stack, "--full", "--out", str(out)]
        if mirror is not None:
            args += ["--mirror", str(mirror.resolve())]
        result = subprocess.run(args, cwd=tree, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise DiffError(f"rendering {stack} at {ref} ({commit[:12]}) failed (exit {result.returncode}):\n{result.stderr.strip()[-2000:]}")
    finally:
        _git(repo, "worktree", "remove", "--force", str(tree), what=f"git worktree remove {tree}")
    return out


def _git(repo: Path, *args: str, what: str) -> str:
    result = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise DiffError(f"{what}: {result.stderr.strip() or 'failed'}")
    return result.stdout


def resolve(side: str, stack: str | None, mirror: Path | None, workdir: Path) -> Path:
    """A render directory as given, or the render of a git ref (needs the stack's name)."""
    if Path(side).is_dir():
        return Path(side)
    if stack is None:
        raise DiffError(f"{side!r} is not a directory; to render it as a git ref, name the stack with --stack")
    return render_ref(side, stack, mirror, workdir)


# --- comparing ------------------------------------------------------------------------------


def changed_paths(old: Any, new: Any, path: str = "") -> Iterator[str]:
    """Every leaf path where `old` and `new` differ (`spec.template.spec.containers[0].image`)."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(old.keys() | new.keys(), key=str):
            child = f"{path}.{key}" if path else str(key)
            if key not in old or key not in new:
                yield child
            else:
                yield from changed_paths(old[key], new[key], child)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            yield from changed_paths(a, b, f"{path}[{i}]")
    elif old != new:
        yield path


def _under(path: str, field_path: str) -> bool:
    """Whether a change at `path` touches `field_path` (itself, inside it, or around it)."""
    if path == field_path or field_path.startswith((path + ".", path + "[")):
        return True
    return path.startswith((field_path + ".", field_path + "["))


def _get(obj: dict[str, Any], dotted: str) -> Any:
    value: Any = obj
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


@dataclass(frozen=True)
class Immutable:
    """A field Kubernetes refuses to change in place on some kinds, and what pulumi-kubernetes does."""

    rule: str
    kinds: frozenset[tuple[str, str]]
    paths: tuple[str, ...]
    action: Action
    kubernetes: str
    program: str


REPLACED = "pulumi-kubernetes replaces it (diff.go forceNew): deletes it, then creates it under the same name"
WORKLOADS = frozenset({("apps", "Deployment"), ("apps", "DaemonSet")})
IMMUTABLE: tuple[Immutable, ...] = (
    Immutable(
        "workload-selector",
        WORKLOADS,
        ("spec.selector",),
        Action.REPLACE,
        "apps/v1 spec.selector: field is immutable (ValidateDeploymentUpdate, ValidateDaemonSetUpdate)",
        REPLACED + "; its pods stop until the new one's are ready",
    ),
    Immutable(
        "statefulset-spec",
        frozenset({("apps", "StatefulSet")}),
        ("spec.selector", "spec.volumeClaimTemplates", "spec.serviceName", "spec.podManagementPolicy"),
        Action.REPLACE,
        "\"updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', "
        "'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden\"",
        REPLACED + "; the claims of its volumeClaimTemplates stay (unless persistentVolumeClaimRetentionPolicy.whenDeleted is Delete)",
    ),
    Immutable(
        "statefulset-history",
        frozenset({("apps", "StatefulSet")}),
        ("spec.revisionHistoryLimit",),
        Action.REPLACE,
        "accepted in place by Kubernetes (revisionHistoryLimit is among the fields a StatefulSet update may change)",
        REPLACED + " all the same: diff.go lists .spec.revisionHistoryLimit",
    ),
    Immutable(
        "job-template",
        frozenset({("batch", "Job")}),
        ("spec.template", "spec.selector", "spec.completions", "spec.parallelism"),
        Action.REPLACE,
        "batch/v1 spec.template, spec.selector and spec.completions: field is immutable (ValidateJobSpecUpdate)",
        REPLACED + ": the Job runs again",
    ),
    Immutable(
        "service-cluster-ip",
        frozenset({("", "Service")}),
        ("spec.clusterIP",),
        Action.REPLACE,
        "spec.clusterIP: field is immutable (ValidateServiceUpdate; only a move to or from type ExternalName may clear or set it)",
        REPLACED + "; it gets a new address, so clients that cached the old one break until they resolve again",
    ),
    Immutable(
        "service-cluster-ips",
        frozenset({("", "Service")}),
        ("spec.clusterIPs", "spec.loadBalancerClass"),
        Action.STOP,
        "spec.clusterIPs and spec.loadBalancerClass: may not change once set (ValidateServiceUpdate)",
        "pulumi-kubernetes sends an update (diff.go lists only .spec.clusterIP) and the API server refuses it: "
        "delete the Service before `pulumi up`, or keep the field",
    ),
    Immutable(
        "storageclass-parameters",
        frozenset({("storage.k8s.io", "StorageClass")}),
        ("parameters", "provisioner"),
        Action.REPLACE,
        "\"updates to parameters are forbidden.\", \"updates to provisioner are forbidden.\" (ValidateStorageClassUpdate)",
        REPLACED + "; existing volumes keep what they were provisioned with, new claims get the new class",
    ),
    Immutable(
        "storageclass-policy",
        frozenset({("storage.k8s.io", "StorageClass")}),
        ("reclaimPolicy", "volumeBindingMode"),
        Action.STOP,
        "\"updates to reclaimPolicy are forbidden.\", \"updates to volumeBindingMode are forbidden.\" (ValidateStorageClassUpdate)",
        "pulumi-kubernetes sends an update (diff.go lists only parameters and provisioner) and the API server "
        "refuses it: delete the StorageClass before `pulumi up` (its volumes stay)",
    ),
    Immutable(
        "role-ref",
        frozenset({("rbac.authorization.k8s.io", "RoleBinding"), ("rbac.authorization.k8s.io", "ClusterRoleBinding")}),
        ("roleRef",),
        Action.REPLACE,
        "roleRef: cannot change roleRef (ValidateRoleBindingUpdate)",
        REPLACED + "; its subjects lack the permissions between the two",
    ),
    Immutable(
        "secret-type",
        frozenset({("", "Secret")}),
        ("type",),
        Action.REPLACE,
        "type: field is immutable (ValidateSecretUpdate)",
        REPLACED,
    ),
    Immutable(
        "crd-scope",
        frozenset({("apiextensions.k8s.io", "CustomResourceDefinition")}),
        ("spec.scope", "spec.names.kind"),
        Action.STOP,
        "spec.scope and spec.names.kind: field is immutable once the CRD is established",
        "pulumi-kubernetes sends an update (CRDs are not in diff.go forceNew) and the API server refuses it; "
        "deleting the CRD deletes every object of it: export them, delete the CRD, `pulumi up`, restore",
    ),
)


def _immutable_data(key: Key, old: dict[str, Any], paths: list[str]) -> Iterator[Finding]:
    """ConfigMaps and Secrets created `immutable: true` refuse data changes."""
    if key[:2] not in (("", "ConfigMap"), ("", "Secret")) or old.get("immutable") is not True:
        return
    for path in paths:
        if path.split(".")[0].split("[")[0] in ("data", "stringData", "binaryData"):
            yield Finding("immutable-data", path, Action.REPLACE, "data: field is immutable when `immutable` is set", REPLACED)
            return


def _claim(key: Key, old: dict[str, Any], new: dict[str, Any], paths: list[str]) -> Iterator[Finding]:
    """A PersistentVolumeClaim's spec: only resources.requests (storage may grow) and
    volumeAttributesClassName change in place; any replacement would delete its data."""
    if key[:2] != ("", "PersistentVolumeClaim"):
        return
    for path in paths:
        if not path.startswith("spec"):
            continue
        if path == "spec.volumeAttributesClassName":
            continue
        if path == "spec.resources.requests.storage":
            before, after = _get(old, path), _get(new, path)
            if before is not None and after is not None and _quantity(after) >= _quantity(before):
                continue
            yield Finding(
                "claim-spec",
                path,
                Action.STOP,
                "spec.resources.requests.storage: field can not be less than previous value",
                "the API server refuses the update: a volume does not shrink; keep the size",
            )
            continue
        forced = any(_under(path, p) for p in ("spec.accessModes", "spec.selector", "spec.storageClassName", "spec.volumeName"))
        yield Finding(
            "claim-spec",
            path,
            Action.STOP,
            "\"spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\"",
            "pulumi-kubernetes would replace the claim (diff.go forceNew): deleting it deletes the volume's data; "
            "copy the data to a new claim first, or keep the field"
            if forced
            else "pulumi-kubernetes sends an update and the API server refuses it: keep the field, or move the data to a new claim",
        )


def _quantity(value: Any) -> float:
    from stackmodel.quantity import parse

    return float(parse(str(value)))


def _crd_versions(key: Key, old: dict[str, Any], new: dict[str, Any]) -> Iterator[Finding]:
    """A CRD version that was stored may not leave spec.versions; one no longer served stops
    serving whatever still uses it."""
    if key[:2] != ("apiextensions.k8s.io", "CustomResourceDefinition"):
        return
    before = {v.get("name"): v for v in (old.get("spec") or {}).get("versions") or []}
    after = {v.get("name"): v for v in (new.get("spec") or {}).get("versions") or []}
    for name, version in before.items():
        if name not in after and version.get("storage"):
            yield Finding(
                "crd-stored-version",
                f"spec.versions[{name}]",
                Action.STOP,
                f"status.storedVersions: {name} \"was previously a storage version, and must remain in spec.versions until a "
                "storage migration ensures no data remains persisted\" (ValidateCustomResourceDefinitionStoredVersions)",
                "pulumi-kubernetes sends the update and the API server refuses it: migrate the stored objects to the new "
                "storage version and remove the old one from the CRD's status.storedVersions first",
            )
        elif version.get("served") and (name not in after or not after[name].get("served")):
            yield Finding(
                "crd-served-version",
                f"spec.versions[{name}]",
                Action.NOTE,
                f"accepted in place; {key[3]} is no longer served at {name}",
                f"anything that still reads or writes {name} (manifests, controllers, clients) fails after `pulumi up`",
            )


def findings(key: Key, old: dict[str, Any], new: dict[str, Any], paths: list[str]) -> list[Finding]:
    """Every change of `paths` the API server refuses in place, or that replaces the object."""
    found: list[Finding] = []
    for rule in IMMUTABLE:
        if key[:2] not in rule.kinds:
            continue
        for field_path in rule.paths:
            touched = [p for p in paths if _under(p, field_path)]
            if touched:
                program = rule.program
                if rule.rule == "statefulset-spec" and (_get(old, "spec.persistentVolumeClaimRetentionPolicy.whenDeleted") == "Delete"):
                    found.append(Finding(rule.rule, field_path, Action.STOP, rule.kubernetes, program.split(";")[0] + "; with persistentVolumeClaimRetentionPolicy.whenDeleted: Delete that deletes its claims and their data: set it to Retain first"))
                    continue
                found.append(Finding(rule.rule, field_path, rule.action, rule.kubernetes, program))
    found += _immutable_data(key, old, paths)
    found += _claim(key, old, new, paths)
    found += _crd_versions(key, old, new)
    return found


REMOVALS = {
    ("", "Namespace"): "deleting a Namespace deletes every object in it",
    ("apiextensions.k8s.io", "CustomResourceDefinition"): "deleting a CRD deletes every object of its kind",
    ("", "PersistentVolumeClaim"): "deleting a claim deletes its volume's data (reclaimPolicy Delete, the default of dynamic volumes)",
    ("", "PersistentVolume"): "deleting a volume object releases the disk under its reclaimPolicy",
}


def compare(old_dir: Path, new_dir: Path, old_label: str | None = None, new_label: str | None = None) -> Diff:
    old, new = read_render(old_dir), read_render(new_dir)
    result = Diff(old_label or str(old_dir), new_label or str(new_dir))
    for key in sorted(new.keys() - old.keys()):
        result.added.append((key, new[key][1]))
    for key in sorted(old.keys() - new.keys()):
        why = REMOVALS.get(key[:2])
        found = [Finding("removed-data", "", Action.STOP, why, "pulumi-kubernetes deletes it: move or back up what it holds first, or keep it")] if why else []
        result.removed.append((key, old[key][1], found))
    for key in sorted(old.keys() & new.keys()):
        (before, _), (after, source) = old[key], new[key]
        paths = list(changed_paths(before, after))
        if paths:
            result.changed.append(Change(key, source, paths, findings(key, before, after, paths)))
    return result


# --- output --------------------------------------------------------------------------------


def report(diff: Diff) -> list[str]:
    found = diff.findings()
    lines = [
        f"diff {diff.old} -> {diff.new}: {len(diff.added)} added, {len(diff.removed)} removed, {len(diff.changed)} changed; "
        f"{sum(1 for _, f in found if f.action is Action.REPLACE)} replaced, {diff.stops} stops"
    ]
    if found:
        lines.append("")
        lines.append("changes Kubernetes refuses in place (or that delete data):")
        for action in (Action.STOP, Action.REPLACE, Action.NOTE):
            for key, f in found:
                if f.action is action:
                    where = f" {f.path}" if f.path else " (removed)"
                    lines.append(f"  {action.value.upper()}: {label(key)}{where} [{f.rule}]")
                    lines.append(f"      Kubernetes: {f.kubernetes}")
                    lines.append(f"      program: {f.program}")
    for title, items, sign in (("added", diff.added, "+"), ("removed", [(k, s) for k, s, _ in diff.removed], "-")):
        if items:
            lines += ["", f"{title}:"] + [f"  {sign} {label(k)}  [{s}]" for k, s in items]
    if diff.changed:
        lines += ["", "changed:"]
        for change in diff.changed:
            shown = ", ".join(change.paths[:MAX_PATHS]) + (f" (+{len(change.paths) - MAX_PATHS} more)" if len(change.paths) > MAX_PATHS else "")
            lines.append(f"  ~ {label(change.key)}  [{change.source}]: {shown}")
    return lines


def as_json(diff: Diff) -> str:
    def obj(key: Key, source: str) -> dict[str, str]:
        return {"group": key[0], "kind": key[1], "namespace": key[2], "name": key[3], "source": source}

    return json.dumps(
        {
            "old": diff.old,
            "new": diff.new,
            "added": [obj(k, s) for k, s in diff.added],
            "removed": [{**obj(k, s), "findings": [f.as_dict() for f in fs]} for k, s, fs in diff.removed],
            "changed": [{**obj(c.key, c.source), "paths": c.paths, "findings": [f.as_dict() for f in c.findings]} for c in diff.changed],
            "stops": diff.stops,
        },
        indent=2,
    )


def run(old: str, new: str, stack: str | None, mirror: Path | None) -> Diff:
    """Render what needs rendering (in a temporary directory, removed after) and compare."""
    with tempfile.TemporaryDirectory(prefix="mlplatform-diff-") as workdir:
        old_dir = resolve(old, stack, mirror, Path(workdir) / "old")
        new_dir = resolve(new, stack, mirror, Path(workdir) / "new")
        return compare(old_dir, new_dir, old, new)
