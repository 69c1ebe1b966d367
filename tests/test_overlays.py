"""Chart `values` overlays that undo the platform's own settings are refused by the loader
(plumbing/overlays.py): keys the program sets, keys it relies on, types the chart takes; with
the config path, the value, the reason and the stack key to use instead. What the platform does
not depend on stays the overlay's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml

from components.monitoring import ini_variable
from facts.versions import PINS
from plumbing.base import overlay_values
from plumbing.charts import ChartValues
from plumbing.installation import installation
from plumbing.overlays import _expand, chart_archive, overlays, read_chart
from plumbing.sources import mirror_sources
from program import args_of as platform_args
from stackmodel.components.monitoring import MONITORING
from stackmodel.config import ConfigError, load, validate
from stackmodel.registry import COMPONENTS
from tests.conftest import base_gke, base_kind, with_changes
from tests.support import mirror
from tests.support.cases import Case
from tests.support.every_component import every_component
from tooling import cli
from tooling.cli import EXIT_CONFIG_ERROR, main
from tooling.plan import Plan, evaluate
from tooling.render import upstream

K = "mlplatform:components"
ON = {f"{K}.monitoring": {"enabled": True}, f"{K}.dcgmExporter": {"enabled": True}}
"""The base GKE stack with the charts it leaves off (monitoring's, the DCGM exporter's) on."""
CHARTS: dict[str, ChartValues[Any]] = {chart.pin.name: chart for spec in COMPONENTS for chart in installation(spec).charts}
"""Every chart of every component of the list, as its Installation declares it."""
KUEUE_CONFIG = f"{K}.kueue.values.managerConfig.controllerManagerConfigYaml"
REPLACED = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nwebhook: {port: 9443}\n"
CHANGED_TIMEOUT = "waitForPodsReady: {timeout: 1h, blockAdmission: false, requeuingStrategy: {timestamp: Eviction}}"
PLATFORM = "no stack key sets it: the key is the platform's, leave it out of the overlay"
DEFAULT = "no stack key changes it: the platform needs the chart's default, leave it out of the overlay"


def values(component: str, overlay: dict[str, Any], field: str = "values") -> dict[str, Any]:
    """The change that gives `component` the overlay, every chart of the base GKE stack on."""
    return {**ON, f"{K}.{component}": {"enabled": True, field: overlay}}


def refused(config: dict[str, Any], tmp_path: Path) -> list[tuple[str, str]]:
    """The problems `python -m stacks plan` reports for the stack (tooling/cli.py load)."""
    path = tmp_path / "Pulumi.overlay.yaml"
    path.write_text(yaml.safe_dump({"config": config}, sort_keys=False))
    with pytest.raises(ConfigError) as err:
        cli.load(str(path))
    return [(p.path, p.message) for p in err.value.problems]


# Each written from the chart at its pinned version (../shared/upstream/charts), not from the code.
CASES = [
    # CRDs switched off where the platform needs them.
    Case("cert-manager without its CRDs", values("certManager", {"crds": {"enabled": False}}), f"{K}.certManager.values.crds.enabled",
         "false: the platform sets true here (components/cert_manager.py cert_manager_values): the chart installs cert-manager's CRDs only so"),
    Case("Trainer without its CRDs", values("trainer", {"crds": {"enabled": False}}), f"{K}.trainer.values.crds.enabled",
         "false: the platform relies on crds.enabled true, the chart's default (kubeflow-trainer 2.3.0 values.yaml, templates/crd/*.yaml"),
    Case("Prometheus Operator without its CRDs", values("monitoring", {"crds": {"enabled": False}}), f"{K}.monitoring.values.crds.enabled",
         "the platform's alerts, monitors and the operators' ServiceMonitors are of the Prometheus Operator's kinds; " + DEFAULT),
    # A second copy of what the platform installs once.
    Case("JobSet inside Trainer's chart", values("trainer", {"jobset": {"install": True}}), f"{K}.trainer.values.jobset.install",
         f"true: the platform sets false here (components/trainer.py trainer_values): JobSet is installed once, by the jobset component, "
         f"before Trainer; a second copy from Trainer's chart would claim the same CRDs, webhooks and controller; set {K}.jobset (its chart "
         f"values: {K}.jobset.values) instead"),
    Case("Grafana inside kube-prometheus-stack", values("monitoring", {"grafana": {"enabled": True}}), f"{K}.monitoring.values.grafana.enabled",
         f"Grafana is installed once, from its own chart; set {K}.monitoring.grafanaValues instead"),
    Case("Trainer's own runtimes", values("trainer", {"runtimes": {"torchDistributed": {"enabled": True}}}), f"{K}.trainer.values.runtimes.torchDistributed.enabled",
         "the chart installs its runtimes from a Helm hook Job, which helm.v4.Chart never runs"),
    Case("a torchtune runtime", values("trainer", {"runtimes": {"torchtuneDistributed": {"llama3_2_1B": {"enabled": True}}}}),
         f"{K}.trainer.values.runtimes.torchtuneDistributed.llama3_2_1B.enabled", "each built-in runtime off, the chart's default"),
    # Kueue's controller configuration.
    Case("Kueue's configuration replaced wholesale", values("kueue", {"managerConfig": {"controllerManagerConfigYaml": REPLACED}}), KUEUE_CONFIG,
         "leaves out waitForPodsReady, which the platform writes as {\"timeout\": \"20m\""),
    Case("Kueue's integrations dropped with it", values("kueue", {"managerConfig": {"controllerManagerConfigYaml": REPLACED}}), KUEUE_CONFIG,
         "leaves out integrations, which the platform writes as {\"frameworks\": [\"batch/job\""),
    Case("Kueue's timeout in its configuration", values("kueue", {"managerConfig": {"controllerManagerConfigYaml": REPLACED + CHANGED_TIMEOUT}}), KUEUE_CONFIG,
         f"sets waitForPodsReady.timeout to \"1h\", which the platform writes as \"20m\" (Kueue's all-or-nothing admission: a multi-node job starts "
         f"whole or is evicted and requeued; set {K}.kueue.waitForPodsReady instead)"),
    Case("Kueue's configuration not YAML", values("kueue", {"managerConfig": {"controllerManagerConfigYaml": "waitForPodsReady: [\n"}}), KUEUE_CONFIG,
         "the platform sets \"apiVersion: config.kueue.x-k8s.io/v1beta2"),
    Case("Kueue's own ServiceMonitor", values("kueue", {"enablePrometheus": True}), f"{K}.kueue.values.enablePrometheus", "would make Kueue wait for it"),
    Case("Kueue's webhook certificate from cert-manager", values("kueue", {"enableCertManager": True}), f"{K}.kueue.values.enableCertManager",
         "Kueue makes its own webhook certificate"),
    Case("KueueViz, which would show every team's queue to anyone", values("kueue", {"enableKueueViz": True}), f"{K}.kueue.values.enableKueueViz",
         "true: the platform relies on enableKueueViz false, the chart's default"),
    # An operator limited to a namespace.
    Case("KubeRay in its own namespace only", values("kuberay", {"singleNamespaceInstall": True}), f"{K}.kuberay.values.singleNamespaceInstall",
         "true: the platform relies on singleNamespaceInstall false, the chart's default (kuberay-operator 1.7.0 values.yaml, templates/deployment.yaml"),
    Case("KubeRay watching some namespaces", values("kuberay", {"watchNamespace": ["team-a"]}), f"{K}.kuberay.values.watchNamespace",
         "the teams' RayClusters and RayJobs live in their profile namespaces, which the operator must watch; " + DEFAULT),
    Case("the Prometheus Operator in its namespace", values("monitoring", {"prometheusOperator": {"namespaces": {"releaseNamespace": True}}}),
         f"{K}.monitoring.values.prometheusOperator.namespaces", "the monitors the operator must read live in other namespaces"),
    Case("the Prometheus Operator denied namespaces", values("monitoring", {"prometheusOperator": {"denyNamespaces": ["kueue-system"]}}),
         f"{K}.monitoring.values.prometheusOperator.denyNamespaces", "(--deny-namespaces)"),
    Case("cert-manager in one namespace (flag)", values("certManager", {"extraArgs": ["--namespace=cert-manager"]}), f"{K}.certManager.values.extraArgs",
         "ClusterIssuers disabled"),
    Case("cert-manager in one namespace (config)", values("certManager", {"config": {"namespace": "cert-manager"}}), f"{K}.certManager.values.config.namespace",
         "kubeflow-self-signing-issuer"),
    Case("cainjector in one namespace", values("certManager", {"cainjector": {"extraArgs": ["--namespace", "cert-manager"]}}),
         f"{K}.certManager.values.cainjector.extraArgs", "cainjector writes the CA bundles of the webhooks of every namespace"),
    Case("the exporter in another namespace", values("dcgmExporter", {"namespaceOverride": "gpu"}), f"{K}.dcgmExporter.values.namespaceOverride",
         "only under the ResourceQuota of namespace dcgm-exporter"),
    # Grafana's sign-in.
    Case("Grafana anonymous as Admin", values("monitoring", {"grafana.ini": {"auth.anonymous": {"enabled": True, "org_role": "Admin"}}}, "grafanaValues"),
         f"{K}.monitoring.grafanaValues.grafana.ini.auth.anonymous.enabled", "true: the platform sets false here (components/monitoring.py grafana_values): "
         "Grafana signs people in only with the identity the Kubeflow gateway asserts"),
    Case("Grafana's auth-proxy header any client sends", values("monitoring", {"grafana.ini": {"auth.proxy": {"header_name": "X-WEBAUTH-USER"}}}, "grafanaValues"),
         f"{K}.monitoring.grafanaValues.grafana.ini.auth.proxy.header_name", "\"X-WEBAUTH-USER\": the platform sets \"kubeflow-userid\" here"),
    Case("Grafana's role header", values("monitoring", {"grafana.ini": {"auth.proxy": {"headers": "Role:X-Role"}}}, "grafanaValues"),
         f"{K}.monitoring.grafanaValues.grafana.ini.auth.proxy.headers", f"set {K}.monitoring.grafanaAdmins instead"),
    Case("Grafana anonymous through its environment", values("monitoring", {"env": {"GF_AUTH_ANONYMOUS_ENABLED": "true"}}, "grafanaValues"),
         f"{K}.monitoring.grafanaValues.env.GF_AUTH_ANONYMOUS_ENABLED", "Grafana reads GF_AUTH_ANONYMOUS_ENABLED over grafana.ini's [auth.anonymous] enabled, "
         "which the platform sets to false"),
    Case("Grafana's proxy header through envValueFrom", values("monitoring", {"envValueFrom": {"GF_AUTH_PROXY_HEADER_NAME": {"configMapKeyRef": {"name": "x", "key": "y"}}}}, "grafanaValues"),
         f"{K}.monitoring.grafanaValues.envValueFrom.GF_AUTH_PROXY_HEADER_NAME", "[auth.proxy] header_name"),
    Case("Grafana with a login form", values("monitoring", {"grafana.ini": {"auth": {"disable_login_form": False}}}, "grafanaValues"),
         f"{K}.monitoring.grafanaValues.grafana.ini.auth.disable_login_form", "a login form or basic auth"),
    Case("Grafana's shared admin", values("monitoring", {"env": {"GF_SECURITY_DISABLE_INITIAL_ADMIN_CREATION": "false"}}, "grafanaValues"),
         f"{K}.monitoring.grafanaValues.env.GF_SECURITY_DISABLE_INITIAL_ADMIN_CREATION", "no shared admin login"),
    Case("Grafana in another namespace", values("monitoring", {"namespaceOverride": "grafana"}, "grafanaValues"),
         f"{K}.monitoring.grafanaValues.namespaceOverride", "Grafana's route through the gateway and its NetworkPolicies are in namespace monitoring"),
    # Retention and storage: the stack's own keys.
    Case("retention against the stack's key", values("monitoring", {"prometheus": {"prometheusSpec": {"retention": "90d"}}}),
         f"{K}.monitoring.values.prometheus.prometheusSpec.retention", f"\"90d\": the platform sets \"15d\" here (components/monitoring.py "
         f"prometheus_stack_values): how long Prometheus keeps data is the stack's to say; set {K}.monitoring.retention instead"),
    Case("storage against the stack's key", values("monitoring", {"prometheus": {"prometheusSpec": {"storageSpec": {"volumeClaimTemplate": {"spec": {"resources": {"requests": {"storage": "10Gi"}}}}}}}}),
         f"{K}.monitoring.values.prometheus.prometheusSpec.storageSpec.volumeClaimTemplate.spec.resources.requests.storage", f"set {K}.monitoring.storageSize instead"),
    Case("Prometheus as an agent", values("monitoring", {"prometheus": {"agentMode": True}}), f"{K}.monitoring.values.prometheus.agentMode",
         "an agent answers no queries"),
    Case("Prometheus on another port", values("monitoring", {"prometheus": {"service": {"port": 80}}}), f"{K}.monitoring.values.prometheus.service.port",
         "Grafana's data source calls Prometheus on port 9090"),
    Case("Prometheus selecting fewer monitors", values("monitoring", {"prometheus": {"prometheusSpec": {"serviceMonitorSelector": {"matchLabels": {"release": "x"}}}}}),
         f"{K}.monitoring.values.prometheus.prometheusSpec.serviceMonitorSelector", "{\"matchLabels\": {\"release\": \"x\"}}: the platform sets {} here"),
    Case("Prometheus selecting fewer rules", values("monitoring", {"prometheus": {"prometheusSpec": {"ruleSelector": {"matchLabels": {"team": "a"}}}}}),
         f"{K}.monitoring.values.prometheus.prometheusSpec.ruleSelector", "Prometheus must select every ServiceMonitor, and the platform's PodMonitors and rules"),
    # Lists the platform sets: the overlay's replaces them whole.
    Case("KubeRay's env without the platform's", values("kuberay", {"env": [{"name": "CLUSTER_DOMAIN", "value": "cluster.local"}]}), f"{K}.kuberay.values.env",
         "this list leaves out [{\"name\": \"ENABLE_INIT_CONTAINER_INJECTION\", \"value\": \"false\"}], which the platform sets (components/kuberay.py kuberay_values)"),
    Case("the exporter's DRA attribution switched on", values("dcgmExporter", {"kubernetesDRA": {"enabled": True}}), f"{K}.dcgmExporter.values.kubernetesDRA.enabled",
         "the pinned exporter (4.8.2) attributes DRA GPUs to pods only through resource.k8s.io/v1beta1 ResourceSlices"),
    Case("the exporter's tolerations replaced", values("dcgmExporter", {"tolerations": [{"key": "acme.com/dedicated", "operator": "Exists"}]}), f"{K}.dcgmExporter.values.tolerations",
         "set mlplatform:cluster.gpuPools[].taints instead"),
    # A word where a number goes (the chart's values.yaml, or its values.schema.json).
    Case("a word for Kueue's replicas", values("kueue", {"controllerManager": {"replicas": "two"}}), f"{K}.kueue.values.controllerManager.replicas",
         "\"two\" is not a whole number: kueue 0.19.2 values.yaml has 1 here"),
    Case("a quoted number for Prometheus' replicas", values("monitoring", {"prometheus": {"prometheusSpec": {"replicas": "2"}}}),
         f"{K}.monitoring.values.prometheus.prometheusSpec.replicas", "\"2\" is not a whole number: kube-prometheus-stack 88.5.3 values.yaml has 1 here"),
    Case("a fraction for Grafana's replicas", values("monitoring", {"replicas": 1.5}, "grafanaValues"), f"{K}.monitoring.grafanaValues.replicas",
         "1.5 is not a whole number: grafana 12.11.1 values.yaml has 1 here"),
    Case("a word in a subchart", values("monitoring", {"kube-state-metrics": {"replicas": "one"}}), f"{K}.monitoring.values.kube-state-metrics.replicas",
         "\"one\" is not a whole number: kube-prometheus-stack 88.5.3 values.yaml has 1 here"),
    Case("a word for KubeRay's client QPS", values("kuberay", {"kubeClient": {"qps": "fast"}}), f"{K}.kuberay.values.kubeClient.qps",
         "\"fast\" is not a number: kuberay-operator 1.7.0 values.yaml has 100.0 here"),
    Case("a word for JobSet's replicas", values("jobset", {"controller": {"replicas": "three"}}), f"{K}.jobset.values.controller.replicas",
         "jobset 0.12.0 values.yaml has 1 here"),
    Case("a word for the exporter's port", values("dcgmExporter", {"service": {"port": "metrics"}}), f"{K}.dcgmExporter.values.service.port",
         "dcgm-exporter 4.8.2 values.yaml has 9400 here"),
    Case("a word for cert-manager's replicas", values("certManager", {"replicaCount": "two"}), f"{K}.certManager.values.replicaCount",
         "\"two\": cert-manager v1.21.1 values.schema.json refuses it ('two' is not of type 'number'); Helm would stop on it"),
    Case("a key cert-manager does not take", values("certManager", {"replicaCont": 2}), f"{K}.certManager.values.replicaCont",
         "cert-manager v1.21.1 takes no value 'replicaCont' here (values.schema.json: no such key)"),
]


@mirror.needed
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_an_overlay_that_undoes_the_platform_is_refused_with_its_path_and_fix(case: Case, tmp_path: Path) -> None:
    problems = refused(case.stack(), tmp_path)
    assert [m for p, m in problems if p == case.path and case.message in m], problems


ALLOWED = {
    "Kueue's controller resources (the shipped fixture's overlay)": values("kueue", {"controllerManager": {"manager": {"resources": {"limits": {"memory": "1Gi"}}}}}),
    "Kueue's configuration with every platform key, and more": values(
        "kueue",
        {"managerConfig": {"controllerManagerConfigYaml": "\n".join(
            [
                "apiVersion: config.kueue.x-k8s.io/v1beta2",
                "kind: Configuration",
                "health: {healthProbeBindAddress: ':8081'}",
                "metrics: {bindAddress: ':8443', enableClusterQueueResources: true}",
                "webhook: {port: 9443}",
                "leaderElection: {leaderElect: true, resourceName: c1f6bfd2.kueue.x-k8s.io}",
                "internalCertManagement: {enable: true}",
                "waitForPodsReady: {timeout: 20m, blockAdmission: false, requeuingStrategy: {timestamp: Eviction}}",
                "managedJobsNamespaceSelector: {matchExpressions: [{key: app.kubernetes.io/part-of, operator: In, values: [kubeflow-profile]}]}",
                "integrations: {frameworks: [batch/job, jobset.x-k8s.io/jobset, trainer.kubeflow.org/trainjob, ray.io/rayjob, ray.io/raycluster, pod]}",
                "fairSharing: {preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]}",
                "objectRetentionPolicies: {workloads: {afterFinished: 1h}}",
            ]
        )}},
    ),
    "KubeRay's env with the platform's and more": values("kuberay", {"env": [{"name": "ENABLE_INIT_CONTAINER_INJECTION", "value": "false"}, {"name": "CLUSTER_DOMAIN", "value": "cluster.local"}]}),
    "the platform's own value again": values("certManager", {"crds": {"enabled": True}, "replicaCount": 2}),
    "a storage class for Prometheus' volume, and a size limit": values(
        "monitoring", {"prometheus": {"prometheusSpec": {"retentionSize": "40GB", "storageSpec": {"volumeClaimTemplate": {"spec": {"storageClassName": "premium-rwo"}}}}}}
    ),
    "Grafana's log level through its environment": values("monitoring", {"env": {"GF_LOG_LEVEL": "debug"}, "grafana.ini": {"log": {"level": "debug"}}}, "grafanaValues"),
    "a named target port and a percentage": values("monitoring", {"service": {"targetPort": "grafana"}, "podDisruptionBudget": {"maxUnavailable": "50%"}}, "grafanaValues"),
    "a quantity where the chart has a number": values("jobset", {"controller": {"resources": {"limits": {"cpu": "1500m"}}}}),
    "a namespace the operator still covers": values("monitoring", {"prometheusOperator": {"namespaces": {}}}),
}


@mirror.needed
@pytest.mark.parametrize("changes", ALLOWED.values(), ids=list(ALLOWED))
def test_an_overlay_may_change_what_the_platform_does_not_depend_on(changes: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.overlay.yaml"
    path.write_text(yaml.safe_dump({"config": with_changes(base_gke(), changes)}, sort_keys=False))
    assert cli.load(str(path)).components is not None


@mirror.needed
def test_every_problem_of_every_overlay_at_once(tmp_path: Path) -> None:
    changes = {
        **values("trainer", {"jobset": {"install": True}}),
        f"{K}.kueue": {"values": {"controllerManager": {"replicas": "two"}, "enablePrometheus": True}},
        f"{K}.monitoring": {"grafanaValues": {"grafana.ini": {"auth.anonymous": {"enabled": True}}}, "values": {"prometheus": {"prometheusSpec": {"retention": "1y"}}}},
    }
    paths = [p for p, _ in refused(with_changes(base_gke(), changes), tmp_path)]
    assert sorted(paths) == sorted(
        [
            f"{K}.trainer.values.jobset.install",
            f"{K}.kueue.values.controllerManager.replicas",
            f"{K}.kueue.values.enablePrometheus",
            f"{K}.monitoring.values.prometheus.prometheusSpec.retention",
            f"{K}.monitoring.grafanaValues.grafana.ini.auth.anonymous.enabled",
        ]
    )


def test_the_retention_an_overlay_may_not_change_is_the_stacks_own(tmp_path: Path) -> None:
    """The table of keys the program sets is its builders' output for this stack: the overlay
    that repeats the stack's own retention changes nothing, another is refused."""
    same = with_changes(base_gke(), {f"{K}.monitoring": {"enabled": True, "retention": "30d", "values": {"prometheus": {"prometheusSpec": {"retention": "30d"}}}}})
    assert validate(same, "same.yaml").components[MONITORING].retention == "30d"
    path = tmp_path / "Pulumi.same.yaml"
    path.write_text(yaml.safe_dump({"config": same}))
    cli.load(str(path))
    other = with_changes(same, {f"{K}.monitoring.retention": "7d"})
    assert [p for p, _ in refused(other, tmp_path)] == [f"{K}.monitoring.values.prometheus.prometheusSpec.retention"]


# --- the table is the program's ---------------------------------------------------------------


@pytest.mark.parametrize("stack", ["kind", "dev", "dev-shared-vpc", "prod"])
def test_the_table_is_what_the_program_passes_to_each_chart(stack: str, shipped_plan: Callable[[str], Plan]) -> None:
    """Each chart's values in the plan are the builder's output with the stack's overlay over it:
    `overlays` calls the builders as the components do, for every chart the stack installs."""
    charts = {e["name"]: e["values"] for e in upstream(shipped_plan(stack)) if e["kind"] == "helm"}
    found = overlays(platform_args(load(stack), {}).components)
    assert sorted(o.pin.name for o in found) == sorted(charts)
    for overlay in found:
        assert charts[overlay.pin.name] == overlay_values(overlay.platform, overlay.values), overlay.pin.name


def _sets(node: Any, key: tuple[str, ...]) -> bool:
    """Whether the platform's values set `key`, inside the YAML documents it writes in strings too."""
    for part in key:
        if isinstance(node, str):
            node = yaml.safe_load(node)
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def test_every_hint_explains_a_key_the_program_sets() -> None:
    """A hint whose key the builders no longer set would explain nothing: the hints rot loudly.
    The charts' values from stacks that between them install every component of the list."""
    platform = {o.pin.name: o.platform for _, config in every_component() for o in overlays(platform_args(config, {}).components)}
    assert sorted(platform) == sorted(CHARTS), "a chart of the list that no stack of every_component() installs"
    stale = [f"{name} {'.'.join(h.key)}" for name, chart in CHARTS.items() for h in chart.hints if not _sets(platform[name], h.key)]
    assert stale == []


@mirror.needed
@pytest.mark.parametrize("chart", sorted(name for name, chart in CHARTS.items() if chart.relied))
def test_what_the_platform_relies_on_is_the_charts_own_default(chart: str) -> None:
    """Each relied-on key is read in the pinned chart: its place exists there, and the chart's
    default (where it has one) keeps what the platform needs."""
    (pin,) = [p for p in PINS if p.name == chart]
    archive = chart_archive(pin, [mirror_sources(mirror.MIRROR)])
    assert archive is not None, f"{pin.label} is not in the mirror"
    defaults = read_chart(archive, pin.label).defaults
    for relied in CHARTS[chart].relied:
        parents = list(_expand(defaults, relied.key[:-1]))
        assert parents, f"{chart}: no {'.'.join(relied.key[:-1])} in its values.yaml"
        for keys, default in _expand(defaults, relied.key):
            assert relied.keeps(default), f"{chart} {'.'.join(keys)}: its default {default!r} is not what the platform needs"


def test_grafana_reads_its_environment_over_grafana_ini() -> None:
    assert ini_variable("auth.anonymous", "enabled") == "GF_AUTH_ANONYMOUS_ENABLED"
    assert ini_variable("auth.generic_oauth", "client-id") == "GF_AUTH_GENERIC_OAUTH_CLIENT_ID"


# --- one verdict: plan, check and pulumi up ------------------------------------------------------


@mirror.needed
def test_check_refuses_what_plan_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "Pulumi.overlay.yaml"
    path.write_text(yaml.safe_dump({"config": with_changes(base_kind(), {f"{K}.trainer": {"values": {"jobset": {"install": True}}}})}))
    verdicts = []
    for command in ("plan", "check"):
        assert main([command, str(path)]) == EXIT_CONFIG_ERROR
        verdicts.append(capsys.readouterr().err)
    assert verdicts[0] == verdicts[1] and f"{K}.trainer.values.jobset.install: true: the platform sets false" in verdicts[0]


def test_pulumi_up_stops_on_an_overlay_before_any_resource() -> None:
    config = validate(with_changes(base_kind(), {f"{K}.kuberay": {"values": {"singleNamespaceInstall": True}}}), "kind.yaml")
    with pytest.raises(pulumi.RunError) as err:
        evaluate(config, "overlay")
    assert f"{K}.kuberay.values.singleNamespaceInstall: true: the platform relies on singleNamespaceInstall false" in str(err.value)


def test_without_a_copy_of_the_chart_the_types_are_noted_unchecked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(cli, "mirror_for", lambda _option: None)
    path = tmp_path / "Pulumi.overlay.yaml"
    path.write_text(yaml.safe_dump({"config": with_changes(base_kind(), {f"{K}.kueue": {"values": {"controllerManager": {"replicas": 2}}}})}))
    cli.load(str(path))
    assert f"note: {K}.kueue.values: not checked against kueue 0.19.2's values.yaml or values.schema.json" in capsys.readouterr().err
