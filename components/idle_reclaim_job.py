"""The idle reclaim's job: what runs every few minutes in the cluster (a CronJob of
components/idle_reclaim.py, this very file from a ConfigMap, on the pinned Python image). Standard
library only. It reads how busy every running GPU notebook's pod's GPUs are from Prometheus
(`utilisation_query`: DCGM_FI_DEV_GPU_UTIL, on a MIG slice DCGM_FI_PROF_GR_ENGINE_ACTIVE; per pod
the busiest of its GPUs), decides per notebook (`decide`, a pure function the tests run on
recorded DCGM samples) and acts as the notebook UI does:

- stop: the annotation `kubeflow-resource-stopped` with the time (the UI's JSON merge patch,
  kubeflow/notebooks v1.11.0 crud-web-apps/jupyter/backend/apps/common/routes/patch.py): the
  notebook controller scales the StatefulSet to 0, the volumes stay, Start brings it back;
- warn, once, `warning` ahead: a Warning event on the Notebook, which the UI lists with its events;
  a notebook is never stopped by the run that would first warn it (its idle time grows by a run's
  interval between two runs): that run warns, the next one stops;
- both recorded on the Notebook (annotations ANNOTATION_RECLAIMED, ANNOTATION_WARNED, which
  kube-state-metrics exports to Grafana) and logged, one JSON line per notebook judged.

Its service account may get, list and patch Notebooks and create events in the team namespaces,
nothing else (components/idle_reclaim.py).
"""

from __future__ import annotations

import argparse
import json
import os
import ssl
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from typing import Any

STOP_ANNOTATION = "kubeflow-resource-stopped"
EXEMPT_LABEL = "mlplatform.dev/idle-reclaim"
EXEMPT_VALUE = "exempt"
ANNOTATION_RECLAIMED = "mlplatform.dev/idle-reclaimed-at"
ANNOTATION_WARNED = "mlplatform.dev/idle-reclaim-warned-at"
GPU_RESOURCE = "nvidia.com/gpu"
COMPONENT = "mlplatform-idle-reclaim"
NOTEBOOKS = "/apis/kubeflow.org/v1/namespaces/{namespace}/notebooks"
SERVICE_ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"


class Action(str, Enum):
    KEEP = "keep"
    WARN = "warn"
    STOP = "stop"


@dataclass(frozen=True)
class Settings:
    """What the job is told (its ConfigMap's config.json, written by components/idle_reclaim.py)."""

    prometheus: str
    namespaces: tuple[str, ...]
    period_seconds: int
    warning_seconds: int
    threshold: float
    """Utilisation (%) below which a GPU is idle: the idle-GPU alert's."""
    step_seconds: int = 60

    @classmethod
    def from_json(cls, text: str) -> Settings:
        raw = json.loads(text)
        return cls(
            prometheus=str(raw["prometheus"]),
            namespaces=tuple(str(n) for n in raw["namespaces"]),
            period_seconds=int(raw["periodSeconds"]),
            warning_seconds=int(raw["warningSeconds"]),
            threshold=float(raw["threshold"]),
            step_seconds=int(raw.get("stepSeconds", 60)),
        )


@dataclass(frozen=True)
class Decision:
    action: Action
    reason: str
    idle_seconds: float


def _duration(value: float) -> str:
    minutes = int(value // 60)
    return f"{minutes // 60}h{minutes % 60:02d}m"


def decide(
    samples: Sequence[tuple[float, float]], now: float, settings: Settings, exempt: bool = False, not_before: float = 0.0
) -> Decision:
    """What to do with one running GPU notebook, from its pod's samples (time, utilisation % of
    its busiest GPU) up to `now`. Idle time runs back from the newest sample through samples
    below the threshold; a busy sample, or a gap of more than two steps (the pod was not seen:
    it did not run, or Prometheus missed it), ends it, so nothing unseen counts as idle.
    `not_before`: samples before it are of an earlier run of the notebook (the reclaim stopped
    it then; its pod comes back under the same name)."""
    if exempt:
        return Decision(Action.KEEP, f"exempt (label {EXEMPT_LABEL}={EXEMPT_VALUE})", 0.0)
    seen = sorted((t, u) for t, u in samples if not_before < t <= now)
    gap = 2 * settings.step_seconds
    if not seen or now - seen[-1][0] > gap:
        return Decision(Action.KEEP, "no recent GPU samples: not judged", 0.0)
    since = None
    later = now
    for when, utilisation in reversed(seen):
        if utilisation >= settings.threshold or later - when > gap:
            break
        since, later = when, when
    if since is None:
        return Decision(Action.KEEP, "busy", 0.0)
    idle = now - since
    if idle >= settings.period_seconds:
        return Decision(Action.STOP, f"GPUs below {settings.threshold:g}% for {_duration(idle)}", idle)
    if idle >= settings.period_seconds - settings.warning_seconds:
        left = settings.period_seconds - idle
        return Decision(Action.WARN, f"GPUs below {settings.threshold:g}% for {_duration(idle)}, stopped in {_duration(left)}", idle)
    return Decision(Action.KEEP, f"idle for {_duration(idle)}, under the period", idle)


def gpus(notebook: Mapping[str, Any]) -> int:
    """The GPUs a Notebook's containers ask for."""
    containers = (((notebook.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []
    total = 0
    for container in containers:
        resources = container.get("resources") or {}
        asked = {**(resources.get("requests") or {}), **(resources.get("limits") or {})}
        try:
            total += int(str(asked.get(GPU_RESOURCE, 0)))
        except ValueError:
            continue
    return total


@dataclass(frozen=True)
class Step:
    """What the job does to one notebook: its decision, the merge patch of its metadata (None:
    nothing to change) and the event to record (None: none)."""

    namespace: str
    notebook: str
    decision: Decision
    patch: dict[str, Any] | None
    event: tuple[str, str] | None
    """(reason, message) of a Warning event on the Notebook."""


def timestamp(now: float) -> str:
    """The UI's stop annotation format, UTC (routes/patch.py)."""
    return datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parsed(stamp: Any) -> float:
    """A `timestamp` back in seconds; 0 for none (or one a person mangled)."""
    try:
        return datetime.strptime(str(stamp), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp() if stamp else 0.0
    except ValueError:
        return 0.0


def plan(notebooks: Iterable[Mapping[str, Any]], series: Mapping[tuple[str, str], Sequence[tuple[float, float]]], now: float, settings: Settings) -> list[Step]:
    """The step for every running GPU notebook of `notebooks`; `series`: (namespace, pod) -> samples."""
    steps = []
    for notebook in notebooks:
        meta = notebook.get("metadata") or {}
        annotations = meta.get("annotations") or {}
        if STOP_ANNOTATION in annotations or gpus(notebook) == 0:
            continue
        namespace, name = str(meta.get("namespace")), str(meta.get("name"))
        exempt = (meta.get("labels") or {}).get(EXEMPT_LABEL) == EXEMPT_VALUE
        decision = decide(series.get((namespace, f"{name}-0"), ()), now, settings, exempt, parsed(annotations.get(ANNOTATION_RECLAIMED)))
        warned = ANNOTATION_WARNED in annotations
        if decision.action is Action.STOP and not warned:
            decision = Decision(Action.WARN, f"{decision.reason}: stopped at the reclaim's next run", decision.idle_seconds)
        patch: dict[str, Any] | None = None
        event = None
        if decision.action is Action.STOP:
            patch = {STOP_ANNOTATION: timestamp(now), ANNOTATION_RECLAIMED: timestamp(now), ANNOTATION_WARNED: None}
            event = (
                "IdleGpuReclaimed",
                f"Stopped by the platform: {decision.reason} (the stack's idle period is {_duration(settings.period_seconds)}). "
                "Its volumes are kept; start it again from the notebook list.",
            )
        elif decision.action is Action.WARN and not warned:
            patch = {ANNOTATION_WARNED: timestamp(now)}
            event = (
                "IdleGpuReclaimWarning",
                f"{decision.reason} unless its GPUs are used; its volumes are kept. A team owner may exempt it with the "
                f"label {EXEMPT_LABEL}={EXEMPT_VALUE}.",
            )
        elif decision.action is Action.KEEP and warned:
            patch = {ANNOTATION_WARNED: None}
        steps.append(Step(namespace, name, decision, {"metadata": {"annotations": patch}} if patch else None, event))
    return steps


def series_of(answer: Mapping[str, Any]) -> dict[tuple[str, str], list[tuple[float, float]]]:
    """(namespace, pod) -> samples of a Prometheus range answer of `utilisation_query`."""
    if answer.get("status") != "success":
        raise RuntimeError(f"Prometheus: {answer.get('error', answer)}")
    found: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for result in (answer.get("data") or {}).get("result") or []:
        labels = result.get("metric") or {}
        key = (str(labels.get("exported_namespace", "")), str(labels.get("exported_pod", "")))
        found.setdefault(key, []).extend((float(t), float(v)) for t, v in result.get("values") or [])
    return found


def utilisation_query(namespaces: Sequence[str], step_seconds: int) -> str:
    """Per pod of the team namespaces, its busiest GPU in % (the DCGM exporter's pod labels, as
    Prometheus renames them: components/dashboards/common.py WORKLOAD_NAMESPACE, WORKLOAD_POD).
    Each step reads the busiest sample of its own window (max_over_time over the step): the
    exporter collects every 30 s, so a plain query at a 60 s step would read one collection in
    two. A whole GPU by DCGM_FI_DEV_GPU_UTIL; a MIG slice (a series with GPU_I_ID), where that
    reads 0 or is absent, by DCGM_FI_PROF_GR_ENGINE_ACTIVE x 100 (components/dashboards/common.py
    gpu_activity, which tests/test_idle_reclaim.py holds this equal to)."""
    teams = "|".join(namespaces)
    selector = f'exported_namespace=~"{teams}"'
    window = f"[{step_seconds}s]"
    whole = f'max_over_time(DCGM_FI_DEV_GPU_UTIL{{{selector}, GPU_I_ID=""}}{window})'
    slices = f'100 * max_over_time(DCGM_FI_PROF_GR_ENGINE_ACTIVE{{{selector}, GPU_I_ID!=""}}{window})'
    return f"max by (exported_namespace, exported_pod) (({whole} or {slices}))"


class Cluster:
    """The few calls the job makes to the API server, as its service account."""

    def __init__(self) -> None:
        host, port = os.environ["KUBERNETES_SERVICE_HOST"], os.environ["KUBERNETES_SERVICE_PORT"]
        self.base = f"https://{host}:{port}"
        with open(f"{SERVICE_ACCOUNT}/token") as token:
            self.token = token.read().strip()
        self.context = ssl.create_default_context(cafile=f"{SERVICE_ACCOUNT}/ca.crt")

    def call(self, method: str, path: str, body: Any = None, content_type: str = "application/json") -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base + path, data=data, method=method)
        request.add_header("Authorization", f"Bearer {self.token}")
        request.add_header("Content-Type", content_type)
        with urllib.request.urlopen(request, context=self.context, timeout=30) as response:
            return json.loads(response.read() or b"{}")

    def notebooks(self, namespace: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = self.call("GET", NOTEBOOKS.format(namespace=namespace)).get("items") or []
        return items

    def apply(self, step: Step, now: float) -> None:
        if step.patch is not None:
            path = f"{NOTEBOOKS.format(namespace=step.namespace)}/{step.notebook}"
            self.call("PATCH", path, step.patch, "application/merge-patch+json")
        if step.event is not None:
            reason, message = step.event
            when = timestamp(now)
            self.call(
                "POST",
                f"/api/v1/namespaces/{step.namespace}/events",
                {
                    "apiVersion": "v1",
                    "kind": "Event",
                    "metadata": {"generateName": f"{step.notebook}.", "namespace": step.namespace},
                    "involvedObject": {"apiVersion": "kubeflow.org/v1", "kind": "Notebook", "name": step.notebook, "namespace": step.namespace},
                    "reason": reason,
                    "message": message,
                    "type": "Warning",
                    "source": {"component": COMPONENT},
                    "firstTimestamp": when,
                    "lastTimestamp": when,
                    "count": 1,
                },
            )


def prometheus_range(settings: Settings, now: float) -> dict[str, Any]:
    """The samples of the last period and a bit (two steps, to see the gap before it)."""
    query = urllib.parse.urlencode(
        {
            "query": utilisation_query(settings.namespaces, settings.step_seconds),
            "start": f"{now - settings.period_seconds - 2 * settings.step_seconds:.0f}",
            "end": f"{now:.0f}",
            "step": str(settings.step_seconds),
        }
    )
    with urllib.request.urlopen(f"{settings.prometheus.rstrip('/')}/api/v1/query_range?{query}", timeout=60) as response:
        answer: dict[str, Any] = json.loads(response.read())
        return answer


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Stop GPU notebooks whose GPUs stayed idle (mlplatform idle reclaim).")
    parser.add_argument("--config", required=True, help="config.json written by the platform")
    args = parser.parse_args(argv)
    with open(args.config) as config:
        settings = Settings.from_json(config.read())
    now = time.time()
    series = series_of(prometheus_range(settings, now))
    cluster = Cluster()
    failed = 0
    for namespace in settings.namespaces:
        for step in plan(cluster.notebooks(namespace), series, now, settings):
            record = {"namespace": step.namespace, "notebook": step.notebook, "action": step.decision.action.value,
                      "reason": step.decision.reason, "idleSeconds": round(step.decision.idle_seconds)}
            try:
                cluster.apply(step, now)
            except OSError as err:  # urllib's HTTPError and URLError are OSErrors
                failed += 1
                record["error"] = str(err)
            print(json.dumps(record, sort_keys=True), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
