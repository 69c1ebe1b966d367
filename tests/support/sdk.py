"""The Kubeflow SDK's TrainerClient (Kubernetes backend) against a fake cluster: its API
clients are mocks that answer with the ClusterTrainingRuntimes we render and record what
the SDK creates."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest.mock import Mock, patch


def _thread(value: Any) -> Mock:
    """What the client's `async_req=True` calls return: an object with `.get(timeout)`."""
    return Mock(get=Mock(return_value=value))


@contextmanager
def fake_sdk(
    runtimes: list[dict[str, Any]], namespace: str = "vision", client: str = "trainer"
) -> Iterator[tuple[Any, list[dict[str, Any]]]]:
    """A TrainerClient (or, with `client="optimizer"`, the SDK's OptimizerClient for Katib, which
    builds its trials with the Trainer backend) whose cluster has `runtimes` as
    ClusterTrainingRuntimes and no namespaced TrainingRuntimes; yields it and the list of
    objects it creates."""
    from kubeflow.optimizer import OptimizerClient
    from kubeflow.trainer import KubernetesBackendConfig, TrainerClient
    from kubernetes.client import ApiException

    created: list[dict[str, Any]] = []

    def get_namespaced(*args: Any, **kwargs: Any) -> Mock:
        raise ApiException(status=404)

    def get_cluster(group: str, version: str, plural: str, name: str, **kwargs: Any) -> Mock:
        return _thread(next(r for r in runtimes if r["metadata"]["name"] == name))

    def create(group: str, version: str, ns: str, plural: str, body: dict[str, Any], **kwargs: Any) -> None:
        created.append(body)

    custom = Mock(
        list_cluster_custom_object=Mock(return_value=_thread({"items": runtimes})),
        list_namespaced_custom_object=Mock(return_value=_thread({"items": []})),
        get_namespaced_custom_object=Mock(side_effect=get_namespaced),
        get_cluster_custom_object=Mock(side_effect=get_cluster),
        create_namespaced_custom_object=Mock(side_effect=create),
    )
    with (
        patch("kubernetes.config.load_kube_config", return_value=None),
        patch("kubeflow.common.utils.is_running_in_k8s", return_value=False),
        patch("kubernetes.client.CustomObjectsApi", return_value=custom),
        patch("kubernetes.client.CoreV1Api", return_value=Mock()),
    ):
        make = {"trainer": TrainerClient, "optimizer": OptimizerClient}[client]
        yield make(KubernetesBackendConfig(namespace=namespace)), created
