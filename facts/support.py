"""Support windows as dated facts: per upstream release line, the Kubernetes minors it
supports and the day its support ends, each with the place it was read and when.

`python -m stacks check` judges the platform against these (the `support` and
`kubernetes-range` rules, tooling/check/upstreams.py) and `python -m stacks outdated` shows them per
pin. Nothing here is inferred: a window upstream does not publish is `NOT_STATED`, and an
upstream's own estimate ("~Nov 2026 (Expected)", "best effort for 6 months") is kept apart
from a firm date (`Ends.expected`). Re-read each source on a bump and add the new line
before moving a pin to it: a release line without a fact is itself a `check` violation.

Long by design: the one home of every upstream's support facts, an entry per upstream, which each
component adds beside its pins (docs/development.md, "Adding a component").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

READ = date(2026, 12, 1)
"""The day the sources below were read (stored copies of the pages and repositories named)."""

NOT_STATED = "not stated"
EXPECTED_GRACE_DAYS = 90
"""An upstream's expected end (an estimate, or a best-effort window) becomes a `check`
violation this many days after it: estimates slip by about a release (Istio's "~Nov 2026"
is "6 weeks after 1.32.0"), firm dates count from the day itself."""


@dataclass(frozen=True)
class Source:
    """Where a fact was read: a URL or `owner/repo path @ commit or tag`, and when."""

    where: str
    read: date = READ

    def __str__(self) -> str:
        return f"{self.where} (read {self.read.isoformat()})"


@dataclass(frozen=True)
class Ends:
    """The end of support of a release line. `on` is a firm date; `expected` an estimate
    upstream publishes; `when` says it in upstream's words (both None: not stated)."""

    on: date | None = None
    expected: date | None = None
    when: str = NOT_STATED

    def violated(self, day: date) -> date | None:
        """The day support ended if it has by `day` (an estimate counts after the grace), else None."""
        if self.on is not None and self.on <= day:
            return self.on
        if self.expected is not None and (day - self.expected).days >= EXPECTED_GRACE_DAYS:
            return self.expected
        return None

    def lapsed(self, day: date) -> date | None:
        """The day support ended or was expected to end, if `day` is past it (no grace): what
        `check` notes before it fails an estimate."""
        end = self.on or self.expected
        return end if end is not None and end <= day else None

    def describe(self) -> str:
        if self.on is not None:
            return f"ends {self.on.isoformat()}"
        if self.expected is not None:
            return f"expected to end about {self.expected.isoformat()} ({self.when})"
        return f"end of support {self.when}"


def minor(version: str) -> tuple[int, int]:
    """`v1.34.11@sha256:...`, `1.35.5-gke.1241004`, `1.34` -> (1, 34)."""
    found = re.match(r"v?(\d+)\.(\d+)", version)
    if not found:
        raise ValueError(f"{version!r} has no major.minor")
    return int(found.group(1)), int(found.group(2))


def minor_label(value: tuple[int, int]) -> str:
    return f"{value[0]}.{value[1]}"


@dataclass(frozen=True)
class Line:
    """One release line (`1.28`, `26.03`, or `*` for every line) of one upstream."""

    line: str
    ends: Ends
    source: Source
    kubernetes: tuple[str, str | None] | None = None
    """Supported Kubernetes minors, lowest and highest (None: no upper bound stated); None: not stated."""
    tested: str = ""
    """Kubernetes minors upstream tests on, where it states that but no supported range."""

    def matches(self, version: str) -> bool:
        if self.line == "*":
            return True
        wanted = tuple(int(p) for p in self.line.split("."))
        found = tuple(int(p) for p in re.findall(r"\d+", version.lstrip("v"))[: len(wanted)])
        return found == wanted

    def supports(self, kubernetes_minor: tuple[int, int]) -> bool | None:
        """Whether the line supports that Kubernetes minor; None when upstream does not say."""
        if self.kubernetes is None:
            return None
        lowest, highest = self.kubernetes
        return minor(lowest) <= kubernetes_minor and (highest is None or kubernetes_minor <= minor(highest))

    def range_label(self) -> str:
        if self.kubernetes is None:
            return f"Kubernetes {NOT_STATED}" + (f" (tested on {self.tested})" if self.tested else "")
        lowest, highest = self.kubernetes
        return f"Kubernetes {lowest} to {highest}" if highest else f"Kubernetes {lowest} or later"


@dataclass(frozen=True)
class Upstream:
    """An upstream the platform installs, how its version is read from the full render, and
    its release lines (newest first)."""

    name: str
    lines: tuple[Line, ...]
    image: str | None = None
    """A regular expression an image reference of this upstream matches; its tag is the version."""
    chart: str | None = None
    """The Helm chart whose version is this upstream's (where no image carries it)."""
    tree: str | None = None
    """A regular expression a kustomize tree of this upstream matches; its group `version` is the version."""
    pins: tuple[str, ...] = field(default=())
    """Names of the facts/versions.py pins of this upstream (`outdated` shows the status beside them)."""

    def line_of(self, version: str) -> Line | None:
        return next((line for line in self.lines if line.matches(version)), None)


# --- the sources -------------------------------------------------------------------------

ISTIO_SUPPORT = Source(
    "https://raw.githubusercontent.com/istio/istio.io/master/data/compatibility/supportStatus.yml (the table of "
    "istio.io/latest/docs/releases/supported-releases; stored copy listing 1.30 as newest)"
)
ISTIO_1_29_EOL = Source("istio/istio.io content/en/news/support/announcing-1.29-eol (\"support for 1.29 will end on the 12th of October, 2026\")")
CERT_MANAGER_SUPPORT = Source(
    "cert-manager/website content/docs/releases/README.md @ 776e5dba (2026-08-22; the 1.19 row as moved to "
    "'old releases' by c17bb3c8 'Finalise v1.21.0 release notes', 2026-07-08)"
)
KUBERNETES_RELEASES = "https://kubernetes.io/releases/{minor}/ (End Of Life Date)"
KUBEFLOW_README = "kubeflow/community-distribution README.md @ {tag} line 13: \"We try to BEST-EFFORT support each release for 6 months\""
KUBEFLOW_TESTS = "kubeflow/community-distribution tests/install_KinD_create_KinD_cluster_install_kustomize.sh @ {tag}"


def _chart(name: str, tag: str) -> Source:
    return Source(f"{name} Chart.yaml kubeVersion at {tag} (../shared/upstream/charts); no support policy read")


def _none_published(repo: str) -> Source:
    return Source(f"{repo}: no end-of-support date or supported Kubernetes range published in its README or chart")


# --- Kubernetes itself and GKE --------------------------------------------------------------

KUBERNETES = Upstream(
    "Kubernetes",
    lines=tuple(
        Line(release, Ends(on=end), Source(KUBERNETES_RELEASES.format(minor=release)))
        for release, end in (
            ("1.37", date(2027, 10, 28)),
            ("1.36", date(2027, 6, 28)),
            ("1.35", date(2027, 2, 28)),
            ("1.34", date(2026, 10, 27)),
            ("1.33", date(2026, 6, 28)),
        )
    ),
    pins=("kindest/node",),
)
"""Upstream Kubernetes: what a kind cluster runs (GKE supports its versions on its own schedule)."""


@dataclass(frozen=True)
class ChannelDefault:
    """The version a GKE release channel creates clusters at, as of a dated fact."""

    channel: str
    version: str
    as_of: str
    source: Source


GKE_CHANNEL_DEFAULTS: dict[str, ChannelDefault] = {
    c.channel: c
    for c in (
        ChannelDefault(
            "RAPID",
            "1.36.4-gke.1391000",
            "2026-09-23",
            Source("https://docs.cloud.google.com/feeds/gke-rapid-channel-release-notes.xml, entry September 23, 2026 "
                   "(2026-R40): \"now the default version for cluster creation in the Rapid channel\""),
        ),
        ChannelDefault(
            "REGULAR",
            "1.35.5-gke.1241004",
            "2026-07-09",
            Source("https://docs.cloud.google.com/feeds/gke-regular-channel-release-notes.xml, entry July 09, 2026 "
                   "(2026-R28): \"now the default version for cluster creation in the Regular channel\"; the main "
                   "feed of 2026-09-17 (issue 21) still creates Regular clusters at 1.35"),
        ),
        ChannelDefault(
            "STABLE",
            "1.35.6-gke.1250000",
            "September 2026",
            Source("https://docs.cloud.google.com/kubernetes-engine/docs/release-notes, 'Current versions' table, "
                   "'Default patch version for cluster creation' (stored copy, undated: its Rapid default "
                   "1.36.4-gke.1082000 was replaced on 2026-09-23)"),
        ),
    )
}
GKE_CHANNEL_MINORS: dict[str, tuple[str, str]] = {
    "RAPID": ("1.34", "1.37"),
    "REGULAR": ("1.34", "1.36"),
    "STABLE": ("1.34", "1.35"),
}
"""The oldest and newest minor each release channel offers for a new cluster (`minMasterVersion`):
https://docs.cloud.google.com/kubernetes-engine/docs/release-notes, 'Current versions' table,
'Available minor versions' (the stored copy whose Stable default is 1.35.6-gke.1250000, as
GKE_CHANNEL_DEFAULTS above; read 2026-12-02). A newer minor than these is refused until added
here, or taken knowingly with `mlplatform:overrides: {gkeVersions: [<version>]}`."""
GKE_CHANNEL_MINORS_SOURCE = Source(
    "https://docs.cloud.google.com/kubernetes-engine/docs/release-notes, 'Current versions', 'Available minor versions'",
    date(2026, 12, 2),
)

"""GKE's end of support per minor is not among these facts (its release schedule was not read):
GKE upgrades channel clusters itself, so the rules judge the minors a cluster is created at."""

# --- what the platform installs ------------------------------------------------------------

UPSTREAMS: tuple[Upstream, ...] = (
    Upstream(
        "Kubeflow",
        lines=(
            Line(
                "26.03.1",
                Ends(expected=date(2026, 12, 5), when="best effort for 6 months after the 26.03.1-rc.2 tag of 2026-06-05 (no final tag)"),
                Source(KUBEFLOW_README.format(tag="26.03.1-rc.2 (9fca80cb)")),
                tested="1.36 (kindest/node v1.36.1 in " + KUBEFLOW_TESTS.format(tag="26.03.1-rc.2") + ")",
            ),
            Line(
                "26.03",
                Ends(expected=date(2026, 9, 21), when="best effort for 6 months after the 26.03 tag of 2026-03-21"),
                Source(KUBEFLOW_README.format(tag="26.03 (d68ebc7f)")),
                tested="1.34 (kindest/node v1.34.0 in " + KUBEFLOW_TESTS.format(tag="26.03") + ")",
            ),
        ),
        tree=r"kubeflow[-/](?:manifests|community-distribution)(?:/|//.*[?&]ref=)(?P<version>[0-9][^/&?]*)",
        pins=("kubeflow/community-distribution",),
    ),
    Upstream(
        "Istio",
        image=r"(^|/)(istio|istio-release|release)/pilot:",
        lines=(
            Line("1.30", Ends(expected=date(2026, 11, 30), when="~Nov 2026 (Expected)"), ISTIO_SUPPORT, ("1.32", "1.36")),
            Line("1.29", Ends(on=date(2026, 10, 12)), ISTIO_1_29_EOL, ("1.31", "1.35")),
            Line("1.28", Ends(on=date(2026, 7, 1)), ISTIO_SUPPORT, ("1.30", "1.34")),
        ),
        pins=("istio",),
    ),
    Upstream(
        "cert-manager",
        image=r"(^|/)jetstack/cert-manager-controller:",
        lines=(
            Line("1.21", Ends(when="at the release of 1.23 (no date announced)"), CERT_MANAGER_SUPPORT, ("1.33", "1.36")),
            Line(
                "1.20",
                Ends(expected=date(2026, 11, 30), when="at the release of 1.22, planned ~Nov 2026"),
                CERT_MANAGER_SUPPORT,
                ("1.32", "1.35"),
            ),
            Line("1.19", Ends(on=date(2026, 7, 8)), CERT_MANAGER_SUPPORT, ("1.31", "1.35")),
        ),
        pins=("cert-manager",),
    ),
    Upstream(
        "kube-prometheus-stack",
        chart="kube-prometheus-stack",
        lines=(
            Line("88", Ends(), _chart("kube-prometheus-stack", "kube-prometheus-stack-88.5.3"), ("1.25", None)),
            Line("81", Ends(), _chart("kube-prometheus-stack", "kube-prometheus-stack-81.6.9"), ("1.25", None)),
        ),
        pins=("kube-prometheus-stack", "prometheus-operator/prometheus-operator"),
    ),
    Upstream(
        "Grafana",
        image=r"(^|/)grafana/grafana:",
        lines=(
            Line("13", Ends(), _chart("grafana (appVersion 13.2.0)", "grafana-12.11.1"), ("1.25", None)),
            Line("12.3", Ends(), _chart("grafana (appVersion 12.3.3)", "grafana-11.1.7"), ("1.25", None)),
        ),
        pins=("grafana",),
    ),
    Upstream(
        "Kubeflow Trainer",
        image=r"(^|/)kubeflow/trainer/trainer-controller-manager:",
        lines=(Line("*", Ends(), _none_published("kubeflow/trainer v2.3.0 (charts/kubeflow-trainer has no kubeVersion)")),),
        pins=("kubeflow-trainer",),
    ),
    Upstream(
        "JobSet",
        image=r"(^|/)jobset/jobset:",
        lines=(Line("*", Ends(), _none_published("kubernetes-sigs/jobset v0.12.0 (charts/jobset has no kubeVersion)")),),
        pins=("jobset",),
    ),
    Upstream(
        "KubeRay",
        image=r"(^|/)kuberay/operator:",
        lines=(Line("*", Ends(), _none_published("ray-project/kuberay v1.7.0 (helm-chart/kuberay-operator has no kubeVersion)")),),
        pins=("kuberay-operator",),
    ),
    Upstream(
        "Ray",
        image=r"(^|/)rayproject/ray:",
        lines=(Line("*", Ends(), _none_published("ray-project/ray (Ray publishes no support window for a release)")),),
        pins=("ray", "rayproject/ray"),
    ),
    Upstream(
        "Kueue",
        image=r"(^|/)kueue/kueue:",
        lines=(Line("*", Ends(), _none_published("kubernetes-sigs/kueue v0.19.2 (charts/kueue has no kubeVersion)")),),
        pins=("kueue",),
    ),
    Upstream(
        "NVIDIA DRA driver",
        image=r"(^|/)(nvidia/k8s-dra-driver-gpu|dra-driver-nvidia/dra-driver-nvidia-gpu):",
        lines=(
            Line(
                "*",
                Ends(),
                Source("kubernetes-sigs/dra-driver-nvidia-gpu v0.4.1 deployments/helm/dra-driver-nvidia-gpu/Chart.yaml "
                       "kubeVersion >=1.32.0-0 (as NVIDIA/k8s-dra-driver-gpu v25.12.0's before it); no support policy read"),
                ("1.32", None),
            ),
        ),
        pins=("dra-driver-nvidia-gpu",),
    ),
    Upstream(
        "DCGM exporter",
        image=r"(^|/)k8s/dcgm-exporter:",
        lines=(Line("*", Ends(), _chart("dcgm-exporter", "4.5.3-4.8.2 (chart 4.8.2)"), ("1.19", None)),),
        pins=("dcgm-exporter",),
    ),
    Upstream(
        "KServe",
        image=r"(^|/)kserve/kserve-controller:",
        lines=(
            Line(
                "0.20",
                Ends(),
                Source("https://kserve.github.io/website/docs/admin-guide/kubernetes-deployment (\"Installation "
                       "Requirements\": Kubernetes Version 1.32+, cert-manager 1.15.0+; stored copy of the current docs); "
                       "kserve/kserve v0.20.0 charts name no kubeVersion and RELEASES.md no end of support"),
                ("1.32", None),
            ),
        ),
        pins=("kserve-crd", "kserve-resources", "kserve-runtime-configs", "kserve", "kserve/storage-initializer", "kserve/agent"),
    ),
    Upstream(
        "KEDA",
        image=r"(^|/)kedacore/keda:",
        lines=(
            Line(
                "2.20",
                Ends(when="not stated: best effort, N-2 (kedacore/governance SUPPORT.md)"),
                Source("https://keda.sh/docs/2.20/operate/cluster/ (\"Kubernetes Compatibility\": the tested window, "
                       "v2.20 v1.33 - v1.35; v2.21 v1.34 - v1.36 in the 2.22 page) and kedacore/charts v2.20.2 keda/Chart.yaml "
                       "kubeVersion >=v1.23.0-0"),
                tested="1.33 to 1.35 (1.36, the kind stack's and GKE Rapid's, is in KEDA 2.21's window, not mirrored here)",
            ),
        ),
        pins=("keda",),
    ),
    Upstream(
        "vLLM",
        image=r"(^|/)vllm/vllm-openai:",
        lines=(Line("*", Ends(), _none_published("vllm-project/vllm (v0.24.0, the release KServe v0.20.0 builds its Hugging Face server with)")),),
        pins=("vllm/vllm-openai",),
    ),
    Upstream(
        "Dex",
        image=r"(^|/)dexidp/dex:",
        lines=(Line("*", Ends(), _none_published("dexidp/dex (v2.45.0 in Kubeflow 26.03, v2.45.1 in 26.03.1-rc.2)")),),
    ),
    Upstream(
        "oauth2-proxy",
        image=r"(^|/)oauth2-proxy/oauth2-proxy:",
        lines=(Line("*", Ends(), _none_published("oauth2-proxy/oauth2-proxy (v7.14.3 in Kubeflow 26.03, v7.15.2 in 26.03.1-rc.2)")),),
        pins=("oauth2-proxy",),
    ),
    Upstream(
        "Python",
        image=r"(^|/)library/python:",
        lines=(
            Line(
                "3.13",
                Ends(expected=date(2029, 10, 1), when="2029-10"),
                Source("python/devguide include/release-cycle.json: 3.13 end_of_life \"2029-10\" (PEP 719); no Kubernetes range (a language runtime)"),
            ),
        ),
        pins=("python",),
    ),
    Upstream(
        "GPUDirect installers",
        lines=(
            Line(
                "*",
                Ends(),
                _none_published(
                    "GoogleCloudPlatform/container-engine-accelerators (README.md: \"This is not an official Google product\"; "
                    "the GPUDirect manifests at the pinned commit name no GKE or Kubernetes range)"
                ),
            ),
        ),
        pins=("GoogleCloudPlatform/container-engine-accelerators",),
    ),
    Upstream(
        "Kubeflow Pipelines",
        image=r"(^|/)kubeflow/kfp-api-server:",
        lines=(Line("*", Ends(), _none_published("kubeflow/pipelines (2.16.1 in Kubeflow 26.03.1-rc.2; its manifests name no kubeVersion)")),),
        pins=("kubeflow/pipelines",),
    ),
    Upstream(
        "KServe LLM controller",
        image=r"(^|/)kserve/llmisvc-controller:",
        lines=(
            Line(
                "0.20",
                Ends(),
                Source("as KServe's: kserve/kserve v0.20.0 charts/kserve-llmisvc-{crd,resources} name no kubeVersion and "
                       "RELEASES.md no end of support; KServe's installation requirements (Kubernetes 1.32+) cover it"),
                ("1.32", None),
            ),
        ),
        pins=("kserve-llmisvc-crd", "kserve-llmisvc-resources"),
    ),
    Upstream(
        "llm-d",
        image=r"(^|/)llm-d/llm-d-(cuda|router-endpoint-picker):",
        lines=(Line("*", Ends(), _none_published("llm-d/llm-d (the images KServe v0.20.0's LLM presets name: llm-d-cuda v0.8.0, "
                                                 "the endpoint picker v0.9.0)")),),
        pins=("llm-d/llm-d-cuda", "llm-d/llm-d-router-endpoint-picker", "llm-d/llm-d-uds-tokenizer",
              "llm-d/llm-d-router-disagg-sidecar", "llm-d/llm-d-latency-predictor-training-server",
              "llm-d/llm-d-latency-predictor-prediction-server"),
    ),
    Upstream(
        "LeaderWorkerSet",
        image=r"(^|/)lws/lws:",
        lines=(
            Line(
                "0.8",
                Ends(),
                Source("kubernetes-sigs/lws v0.8.0 site/content/en/docs/installation/_index.md:28 (\"A Kubernetes cluster "
                       "with version >= 1.26 is Required\"); no end of support published, charts/lws names no kubeVersion"),
                ("1.26", None),
            ),
        ),
        pins=("lws",),
    ),
    Upstream(
        "Gateway API",
        lines=(Line("*", Ends(), _none_published("kubernetes-sigs/gateway-api v1.5.1 (config/crd/standard)")),),
        pins=("kubernetes-sigs/gateway-api",),
    ),
    Upstream(
        "Gateway API inference extension",
        lines=(Line("*", Ends(), _none_published("kubernetes-sigs/gateway-api-inference-extension v1.5.0 (config/crd/bases)")),),
        pins=("kubernetes-sigs/gateway-api-inference-extension",),
    ),
    Upstream(
        "Katib",
        image=r"(^|/)kubeflow/katib/katib-controller:",
        lines=(
            Line(
                "*",
                Ends(),
                _none_published("kubeflow/katib v0.19.0 (README.md and manifests/v1beta1 name no Kubernetes range; v0.19.0 in Kubeflow 26.03.1-rc.2)"),
            ),
        ),
        pins=("kubeflow/katib",),
    ),
    Upstream(
        "Kubeflow Hub (Model Registry)",
        image=r"(^|/)kubeflow/(hub|model-registry)/server:",
        lines=(
            Line(
                "*",
                Ends(),
                _none_published("kubeflow/hub v0.3.8 README.md and v0.3.9 manifests (applications/hub/upstream in Kubeflow 26.03.1-rc.2)"),
            ),
        ),
        pins=("kubeflow/hub", "kubeflow/hub/storage-initializer"),
    ),
    Upstream(
        "Spark operator",
        image=r"(^|/)kubeflow/spark-operator/controller:",
        lines=(
            Line(
                "*",
                Ends(),
                Source(
                    "kubeflow/spark-operator README.md @ v2.5.0 \"Version Matrix\": Kubernetes 1.16+ for v2.0.x to v2.3.x; "
                    "no row for 2.4 or 2.5, no support window, and charts/spark-operator-chart/Chart.yaml names no kubeVersion"
                ),
            ),
        ),
        pins=("kubeflow/spark-operator",),
    ),
)


def upstream_of_pin(pin_name: str) -> Upstream | None:
    """The upstream whose support facts stand beside a pin of facts/versions.py."""
    return next((u for u in (KUBERNETES, *UPSTREAMS) if pin_name in u.pins), None)
