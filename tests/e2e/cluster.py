"""Talking to the e2e cluster: Kubernetes API reads as plain JSON, a port-forward to the
Kubeflow gateway, removing what the tests submitted, and the logs of unhealthy pods."""

from __future__ import annotations

import queue
import re
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kubernetes import client
from kubernetes import config as kube_config
from kubernetes.client.exceptions import ApiException

from tests.e2e.checks import unhealthy_pods
from tooling.waiting import wait_for

FORWARDING = re.compile(r"Forwarding from 127\.0\.0\.1:(\d+) ->")
GATEWAY = ("istio-system", "istio-ingressgateway", 80)
"""The Kubeflow gateway's Service: namespace, name, port (kubeflow/manifests common/istio)."""
WORKLOADS = (
    ("trainer.kubeflow.org", "v1alpha1", "trainjobs"),
    ("ray.io", "v1", "rayjobs"),
    ("ray.io", "v1", "rayclusters"),
)
"""What the tests submit into team namespaces; removed before the platform is torn down."""


class Cluster:
    """The e2e cluster through one kubeconfig; reads return the objects' JSON."""

    def __init__(self, kubeconfig: Path):
        self.kubeconfig = kubeconfig
        self.api = kube_config.new_client_from_config(config_file=str(kubeconfig))
        self.core = client.CoreV1Api(self.api)
        self.apps = client.AppsV1Api(self.api)
        self.custom = client.CustomObjectsApi(self.api)
        self.extensions = client.ApiextensionsV1Api(self.api)
        self.authorization = client.AuthorizationV1Api(self.api)

    def json(self, obj: Any) -> Any:
        return self.api.sanitize_for_serialization(obj)

    def items(self, listing: Any) -> list[dict[str, Any]]:
        return list(self.json(listing).get("items") or [])

    def custom_items(self, group: str, version: str, plural: str, namespace: str) -> list[dict[str, Any]]:
        return list(self.custom.list_namespaced_custom_object(group, version, namespace, plural).get("items") or [])

    def get_or_none(self, read: Any, *args: Any) -> Any:
        """`read(*args)` as JSON, or None when the object does not exist."""
        try:
            return self.json(read(*args))
        except ApiException as error:
            if error.status == 404:
                return None
            raise

    def allowed(self, user: str, namespace: str, verb: str, group: str, resource: str) -> bool:
        review = client.V1SubjectAccessReview(
            spec=client.V1SubjectAccessReviewSpec(
                user=user,
                groups=["system:authenticated"],
                resource_attributes=client.V1ResourceAttributes(
                    namespace=namespace, verb=verb, group=group, resource=resource
                ),
            )
        )
        return bool(self.authorization.create_subject_access_review(review).status.allowed)

    def delete_workloads(self, namespaces: list[str], timeout: float) -> None:
        """Delete TrainJobs, RayJobs and RayClusters in `namespaces` and wait until they are gone."""

        def remaining() -> list[str]:
            left = []
            for namespace in namespaces:
                for group, version, plural in WORKLOADS:
                    try:
                        items = self.custom_items(group, version, plural, namespace)
                    except ApiException as error:
                        if error.status == 404:  # namespace or CRD already gone
                            continue
                        raise
                    left += [f"{plural} {namespace}/{i['metadata']['name']}" for i in items]
            return left

        for namespace in namespaces:
            for group, version, plural in WORKLOADS:
                try:
                    self.custom.delete_collection_namespaced_custom_object(group, version, namespace, plural)
                except ApiException as error:
                    if error.status != 404:
                        raise
        wait_for("test workloads deleted", remaining, timeout)

    def collect_logs(self, out: Path) -> list[Path]:
        """Logs of every unhealthy pod (and its previous container run) plus warning events, into `out`."""
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for namespace, pod, containers in unhealthy_pods(self.items(self.core.list_pod_for_all_namespaces())):
            for container in containers:
                for previous in (False, True):
                    try:
                        text = self.core.read_namespaced_pod_log(pod, namespace, container=container, previous=previous)
                    except ApiException:
                        continue  # never started, or no previous run
                    path = out / f"{namespace}_{pod}_{container}{'.previous' if previous else ''}.log"
                    path.write_text(text)
                    written.append(path)
        events = [
            f"{e['metadata']['namespace']} {e.get('involvedObject', {}).get('kind')}/"
            f"{e.get('involvedObject', {}).get('name')}: {e.get('reason')}: {e.get('message')}"
            for e in self.items(self.core.list_event_for_all_namespaces(field_selector="type=Warning"))
        ]
        (out / "warning-events.txt").write_text("\n".join(events) + "\n")
        return [*written, out / "warning-events.txt"]


def forwarded_port(line: str) -> int | None:
    """The local port in a `kubectl port-forward` line such as
    `Forwarding from 127.0.0.1:40123 -> 8080`, or None."""
    match = FORWARDING.search(line)
    return int(match.group(1)) if match else None


@contextmanager
def port_forward(kubeconfig: Path, namespace: str, service: str, port: int, timeout: float = 60) -> Iterator[int]:
    """`kubectl port-forward svc/<service> :<port>` for the duration; yields the local port."""
    process = subprocess.Popen(
        ["kubectl", "--kubeconfig", str(kubeconfig), "-n", namespace, "port-forward", f"svc/{service}", f":{port}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()

    def read_output() -> None:  # a pipe read blocks: keep it off the polling thread
        for line in process.stdout or []:
            lines.put(line)

    threading.Thread(target=read_output, daemon=True).start()
    found: list[int] = []
    seen: list[str] = []

    def pending() -> list[str]:
        while not lines.empty():
            line = lines.get()
            seen.append(line.strip())
            port_number = forwarded_port(line)
            if port_number:
                found.append(port_number)
        if not found and process.poll() is not None:
            raise RuntimeError(f"kubectl port-forward exited {process.returncode}: {' | '.join(seen)}")
        return [] if found else ["kubectl port-forward has not printed its local port"]

    try:
        wait_for(f"port-forward to {namespace}/{service}", pending, timeout, interval=0.5)
        yield found[0]
    finally:
        process.terminate()
        process.wait(timeout=10)
