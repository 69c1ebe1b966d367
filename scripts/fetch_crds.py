"""Download the upstream CRDs the schema tests validate against, at the pinned tags.

For forks without the shared data beside the repo: `make crds` fills the cache that
tooling/schemas.py looks in (or the folder given as the first argument).
Multi-document sources (Istio, cert-manager) are kept whole; the tests read every
CustomResourceDefinition document in a file.
"""

from __future__ import annotations

import sys
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tooling.schemas import CACHE  # noqa: E402

GITHUB = "https://raw.githubusercontent.com"
# (folder, repository, tag, path) — the same sources ../shared/crds/README.md names.
SOURCES: list[tuple[str, str, str, str]] = [
    ("kubeflow-trainer-v2.3.0", "kubeflow/trainer", "v2.3.0", f"manifests/base/crds/trainer.kubeflow.org_{p}.yaml")
    for p in ("clustertrainingruntimes", "trainingruntimes", "trainjobs")
] + [
    ("jobset-v0.12.0", "kubernetes-sigs/jobset", "v0.12.0", "config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml"),
] + [
    ("kuberay-v1.7.0", "ray-project/kuberay", "v1.7.0", f"ray-operator/config/crd/bases/ray.io_{p}.yaml")
    for p in ("rayclusters", "rayjobs", "rayservices", "raycronjobs")
] + [
    ("kueue-v0.19.2", "kubernetes-sigs/kueue", "v0.19.2", f"config/components/crd/bases/kueue.x-k8s.io_{p}.yaml")
    for p in (
        "admissionchecks", "clusterqueues", "cohorts", "localqueues", "multikueueclusters", "multikueueconfigs",
        "provisioningrequestconfigs", "resourceflavors", "topologies", "workloadpriorityclasses", "workloads",
    )
] + [
    ("kubeflow-dashboard-v2.0.0", "kubeflow/dashboard", "v2.0.0",
     "components/profile-controller/manifests/kustomize/base/crd/kubeflow.org_profiles.yaml"),
    ("kubeflow-dashboard-v2.0.0", "kubeflow/dashboard", "v2.0.0",
     "components/poddefaults-webhooks/manifests/kustomize/base/crd.yaml"),
    ("kubeflow-notebooks-v1.10.0", "kubeflow/kubeflow", "v1.10.0",
     "components/notebook-controller/config/crd/bases/kubeflow.org_notebooks.yaml"),
    ("istio-1.29.0", "kubeflow/manifests", "26.03", "common/istio/istio-crds/base/crd.yaml"),
    ("cert-manager-v1.19.4", "kubeflow/manifests", "26.03", "common/cert-manager/base/upstream/cert-manager.yaml"),
] + [
    ("prometheus-operator-v0.93.0", "prometheus-operator/prometheus-operator", "v0.93.0",
     f"example/prometheus-operator-crd/monitoring.coreos.com_{p}.yaml")
    for p in ("servicemonitors", "podmonitors", "prometheusrules")
]


def main(target: Path) -> int:
    for folder, repo, tag, path in SOURCES:
        destination = target / folder / f"{repo.replace('/', '_')}_{Path(path).name}"
        destination.parent.mkdir(parents=True, exist_ok=True)
        url = f"{GITHUB}/{repo}/{tag}/{path}"
        print(f"{url} -> {destination}")
        with urllib.request.urlopen(url, timeout=60) as response:
            destination.write_bytes(response.read())
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else CACHE))
