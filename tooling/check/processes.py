"""The platform as it runs: every file a process reads is in its pod, configuration read at start
rolls its pods, critical pods only where GKE admits them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import yaml

from facts.config_reload import reloads
from facts.image_files import ENV_NOT_READ, image_provides
from plumbing.base import CONFIG_DIGEST_ANNOTATION
from plumbing.images import image_transform
from tooling.check.platform import WORKLOAD_KINDS, Platform, Violation, check_rule, label
from tooling.fullrender import Rendered

ABSOLUTE_PATH = re.compile(r"^/[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*/?$")
CONFIG_LINE = re.compile(r"^\s*([A-Za-z0-9_.-]+)\s*=\s*(.+?)\s*$", re.MULTILINE)
FILE_KEY = re.compile(r"(?i)(file|dir|cert|key|logo|ca|certificate)$|^(data|logs|plugins|provisioning)$")
"""Keys of a configuration that name a file or directory to read (cert_file, tlsCert, caFile,
custom_sign_in_logo, authenticated_emails_file; Grafana's [paths] data, logs, plugins,
provisioning)."""
FILE_ENV = re.compile(r"(?<!LIBRARY)(?<!METRICS)(?<!PPROF)_(FILE|PATH|DIR)$|^GF_PATHS_")
"""Environment variables that name a file or directory to read (VIEWER_..._SPEC_PATH,
GF_PATHS_DATA; not LD_LIBRARY_PATH, a search path, nor METRICS_PATH and PPROF_PATH, the HTTP
paths a metrics server answers on: kubernetes-sigs/dra-driver-nvidia-gpu v0.4.1
templates/kubeletplugin.yaml and controller.yaml, "HTTP_ENDPOINT and METRICS_PATH are used to
configure the metrics HTTP server")."""
POD_SPEC_KEYS = frozenset({"workingDir", "mountPath"})
"""Keys of a pod spec a configuration carries for pods it starts (a viewer's, a step's): not
files of the process that reads it."""
# GKE admits pods of these priority classes outside kube-system only where a ResourceQuota
# scoped to the class exists (cloud.google.com/kubernetes-engine/docs/how-to/
# node-auto-provisioning and kubernetes.io/docs/concepts/policy/resource-quotas
# "Limit Priority Class consumption by default", which GKE configures).
CRITICAL_PRIORITY_CLASSES = frozenset({"system-node-critical", "system-cluster-critical"})


@check_rule("critical-priority", "critical-priority pods only where GKE admits them")
def critical_priority(platform: Platform) -> Iterator[Violation]:
    """On GKE, pods of a system-critical priority class outside kube-system need a
    ResourceQuota scoped to that class in their namespace, or GKE rejects them."""
    if platform.gke is None:
        return
    quotas: dict[str, set[str]] = {}
    for quota in platform.of_kind("ResourceQuota"):
        for expression in (((quota.obj.get("spec") or {}).get("scopeSelector")) or {}).get("matchExpressions") or []:
            if expression.get("scopeName") == "PriorityClass" and expression.get("operator") == "In":
                quotas.setdefault(quota.key[2], set()).update(expression.get("values") or [])
    for o in platform.objects:
        if o.obj.get("kind") not in WORKLOAD_KINDS or o.key[2] == "kube-system":
            continue
        priority = ((((o.obj.get("spec") or {}).get("template")) or {}).get("spec") or {}).get("priorityClassName")
        if priority in CRITICAL_PRIORITY_CLASSES and priority not in quotas.get(o.key[2], set()):
            yield Violation("critical-priority", label(o), o.source, f"priority class {priority} in {o.key[2]} without a ResourceQuota scoped to it")


def config_refs(pod_spec: dict[str, Any]) -> set[tuple[str, str]]:
    """(kind, name) of every ConfigMap and Secret a pod reads: volumes (projected too),
    envFrom, and env valueFrom of its containers and init containers."""
    found: set[tuple[str, str]] = set()
    for volume in pod_spec.get("volumes") or []:
        sources = [volume, *((volume.get("projected") or {}).get("sources") or [])]
        for source in sources:
            if "configMap" in source:
                found.add(("ConfigMap", source["configMap"].get("name", "")))
            if "secret" in source:
                found.add(("Secret", source["secret"].get("secretName") or source["secret"].get("name", "")))
    for container in [*(pod_spec.get("containers") or []), *(pod_spec.get("initContainers") or [])]:
        for source in container.get("envFrom") or []:
            if "configMapRef" in source:
                found.add(("ConfigMap", source["configMapRef"].get("name", "")))
            if "secretRef" in source:
                found.add(("Secret", source["secretRef"].get("name", "")))
        for var in container.get("env") or []:
            value_from = var.get("valueFrom") or {}
            if "configMapKeyRef" in value_from:
                found.add(("ConfigMap", value_from["configMapKeyRef"].get("name", "")))
            if "secretKeyRef" in value_from:
                found.add(("Secret", value_from["secretKeyRef"].get("name", "")))
    return found


def written_by_program(o: Rendered) -> bool:
    """Our own object, or an upstream one our transforms changed."""
    return not o.upstream or (o.original is not None and o.original != o.obj)


@check_rule("config-rolls", "configuration the program writes rolls the pods that read it at start")
def config_rolls(platform: Platform) -> Iterator[Violation]:
    """Configuration the program writes or changes reaches the processes that read it: a
    workload reading such a ConfigMap or Secret at start (environment variables, a subPath
    mount, a process that loads its config once) carries plumbing.base CONFIG_DIGEST_ANNOTATION
    on its pod template, so a change rolls its pods; exceptions are processes known to reload
    (facts/config_reload.py)."""
    configs = {(o.key[1], o.key[2], o.key[3]): o for o in platform.of_kind("ConfigMap", "Secret")}
    mirrored = image_transform(platform.images)
    for o in platform.of_kind("Deployment", "StatefulSet", "DaemonSet"):
        template = (o.obj.get("spec") or {}).get("template") or {}
        if CONFIG_DIGEST_ANNOTATION in ((template.get("metadata") or {}).get("annotations") or {}):
            continue
        # The stack's image mirror moves this workload's own images too: its template changes
        # whenever the mirror does, and with it the image references it reads from a config.
        follows_mirror = o.original is not None and mirrored(o.original) is not None
        for kind, name in sorted(config_refs(template.get("spec") or {})):
            config = configs.get((kind, o.key[2], name))
            if config is None or not written_by_program(config) or reloads(o.key[3], kind, name):
                continue
            if follows_mirror and config.original is not None and mirrored(config.original) == config.obj:
                continue
            what = "writes" if not config.upstream else "changes"
            yield Violation(
                "config-rolls", label(o), o.source,
                f"reads {kind} {name}, which the program {what}, but nothing rolls its pods when it changes; "
                f"give its pod template a digest of what the program writes (plumbing.base.with_config_digest)",
            )


def _absolute(value: Any) -> str | None:
    """`value` if it is an absolute file-system path (no URL, pattern or space), else None."""
    return value if isinstance(value, str) and ABSOLUTE_PATH.match(value) else None


URL_PATH_FLAGS = frozenset({"--metrics-endpoint"})
"""Flags whose value is the path of an HTTP endpoint the process serves, not a file: the Spark
operator's (kubeflow/spark-operator v2.5.0 cmd/operator/controller/start.go and
cmd/operator/webhook/start.go, `--metrics-endpoint`, "Metrics endpoint", default /metrics)."""


def _flag_paths(words: list[Any]) -> Iterator[tuple[str, str]]:
    """(path, how it is named) of every absolute path among a container's arguments:
    `--flag=/path`, `--flag /path` and positional paths (not the URL paths of URL_PATH_FLAGS)."""
    for word in (str(w) for w in words):
        if word.split("=", 1)[0] in URL_PATH_FLAGS:
            continue
        value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
        if path := _absolute(value):
            yield path, f"argument {word!r}"


def _config_paths(text: str, file: str) -> Iterator[tuple[str, str]]:
    """(path, key) of every file a configuration file names, by its format (file's extension):
    `key = "/path"` lines of oauth2-proxy's TOML and Grafana's INI, and keys of YAML or JSON
    whose name says they hold a file (FILE_KEY: tlsCert, caFile, cert_file, ...)."""
    if file.endswith((".cfg", ".ini", ".conf", ".toml")):
        for match in CONFIG_LINE.finditer(text):
            key, value = match.group(1), match.group(2).strip().strip('"')
            if FILE_KEY.search(key) and (path := _absolute(value)):
                yield path, key
        return
    if not file.endswith((".yaml", ".yml", ".json")):
        return
    try:
        tree = yaml.safe_load(text)
    except yaml.YAMLError:
        return
    stack: list[tuple[str, Any]] = [("", tree)]
    while stack:
        key, node = stack.pop()
        if isinstance(node, dict):
            stack.extend((str(k), v) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((key, v) for v in node)
        elif FILE_KEY.search(key) and key not in POD_SPEC_KEYS and (path := _absolute(node)):
            yield path, key


def _mount_provides(path: str, mount: dict[str, Any], volume: dict[str, Any] | None, data: dict[str, Any] | None) -> bool:
    """Whether `mount` (of `volume`; `data`: the keys of the ConfigMap or Secret it holds, if
    the render has it) puts a file or directory at `path`."""
    at = str(mount.get("mountPath", "")).rstrip("/")
    if at.startswith(path.rstrip("/") + "/"):
        return True  # a directory that holds a mount exists
    if path != at and not path.startswith(at + "/"):
        return False
    if data is None or volume is None:
        return True  # not a ConfigMap or Secret of the render: its content is not ours to see
    # A ConfigMap or Secret: its keys (or its items' paths, of keys it has) are the files.
    source = volume.get("configMap") or volume.get("secret") or {}
    items = source.get("items")
    files = [item.get("path") for item in items if item.get("key") in data] if items else list(data)
    inside = mount.get("subPath") or (path[len(at) + 1 :] if path != at else "")
    if not inside:
        return True  # the directory itself
    if mount.get("subPath") and path != at:
        inside = f"{inside}/{path[len(at) + 1 :]}"
    return any(inside == f or inside.startswith(f"{f}/") for f in files)


@check_rule("files-provided", "every file a process is told to read is mounted or in its image")
def files_provided(platform: Platform) -> Iterator[Violation]:
    """Every file a process is told to read is there: a path in a container's arguments or in a
    configuration file mounted into it (oauth2-proxy's, Dex's, Grafana's, Argo's, Pipelines')
    is provided by one of its volume mounts (a ConfigMap or Secret mounted as a directory must
    hold the key) or by its image (facts/image_files.py). A missing one stops the process at
    start (oauth2-proxy exits when authenticated_emails_file cannot be opened)."""
    configs = {(o.key[1], o.key[2], o.key[3]): o.obj for o in platform.of_kind("ConfigMap", "Secret")}
    for o in platform.of_kind(*WORKLOAD_KINDS):
        spec = ((o.obj.get("spec") or {}).get("template") or {}).get("spec") or {}
        volumes = {v.get("name"): v for v in spec.get("volumes") or []}

        def data_of(volume: dict[str, Any] | None, namespace: str = o.key[2]) -> dict[str, Any] | None:
            if volume is None or not ("configMap" in volume or "secret" in volume):
                return None
            kind, ref = ("ConfigMap", volume["configMap"]) if "configMap" in volume else ("Secret", volume["secret"])
            obj = configs.get((kind, namespace, ref.get("name") or ref.get("secretName") or ""))
            return None if obj is None else {**(obj.get("data") or {}), **(obj.get("stringData") or {}), **(obj.get("binaryData") or {})}

        for container in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
            mounts = container.get("volumeMounts") or []
            named = list(_flag_paths([*(container.get("command") or [])[1:], *(container.get("args") or [])]))
            program = next((str(w) for w in [*(container.get("command") or []), *(container.get("args") or [])] if str(w).startswith("/")), "")
            unread, _ = ENV_NOT_READ.get(program, (frozenset(), ""))
            named += [
                (path, f"env {var['name']}")
                for var in container.get("env") or []
                if FILE_ENV.search(str(var.get("name", ""))) and var.get("name") not in unread and (path := _absolute(var.get("value")))
            ]
            for mount in mounts:
                volume = volumes.get(mount.get("name"))
                data = data_of(volume)
                for key, text in (data or {}).items():
                    if mount.get("subPath") not in (None, key) or not isinstance(text, str):
                        continue
                    file = f"{str(mount.get('mountPath', '')).rstrip('/')}" + ("" if mount.get("subPath") else f"/{key}")
                    named += [(path, f"{key} in {file}") for path, key in _config_paths(text, file)]
            for path, how in named:
                provided = any(_mount_provides(path, m, volumes.get(m.get("name")), data_of(volumes.get(m.get("name")))) for m in mounts)
                if provided or image_provides(str(container.get("image", "")), path):
                    continue
                yield Violation(
                    "files-provided", label(o), o.source,
                    f"container {container.get('name')}: {how} names {path}, which no volume mount or image provides; "
                    "mount the ConfigMap key or volume that holds it",
                )
