"""`python -m stacks diff`: objects added, removed and changed between two full renders, and
each class of change the API server refuses in place flagged with what the program does
about it (pulumi-kubernetes' delete-before-replace, or a stop), on literal objects."""

from __future__ import annotations

import copy
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tooling import diff
from tooling.cli import EXIT_CONFIG_ERROR, EXIT_DESTRUCTIVE, main
from tooling.diff import Action


def write(directory: Path, objects: list[dict[str, Any]]) -> Path:
    """A `render --full` directory: platform.yaml and index.yaml."""
    directory.mkdir(parents=True)
    (directory / "platform.yaml").write_text(yaml.safe_dump_all(objects))
    index = [
        {"apiVersion": o["apiVersion"], "kind": o["kind"], "namespace": o["metadata"].get("namespace", ""), "name": o["metadata"]["name"], "source": "c/install"}
        for o in objects
    ]
    (directory / "index.yaml").write_text(yaml.safe_dump({"stack": "t", "objects": index}))
    return directory


def obj(api_version: str, kind: str, name: str, namespace: str | None = "ns", **body: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **body}


def moved(tmp_path: Path, before: dict[str, Any], edit: Callable[[dict[str, Any]], None]) -> diff.Diff:
    after = copy.deepcopy(before)
    edit(after)
    return diff.compare(write(tmp_path / "old", [before]), write(tmp_path / "new", [after]))


def findings(d: diff.Diff) -> list[tuple[str, str, Action]]:
    return [(f.rule, f.path, f.action) for _, f in d.findings()]


def deployment(labels: dict[str, str]) -> dict[str, Any]:
    return obj(
        "apps/v1",
        "Deployment",
        "web",
        spec={"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "x:1"}]}}},
    )


def test_a_deployment_selector_is_replaced_delete_before_replace(tmp_path: Path) -> None:
    d = moved(tmp_path, deployment({"app": "web"}), lambda o: o["spec"]["selector"]["matchLabels"].update(tier="front"))
    assert findings(d) == [("workload-selector", "spec.selector", Action.REPLACE)]
    [(_, finding)] = d.findings()
    assert "field is immutable" in finding.kubernetes and "deletes it, then creates it" in finding.program


def test_an_image_change_is_a_plain_update(tmp_path: Path) -> None:
    d = moved(tmp_path, deployment({"app": "web"}), lambda o: o["spec"]["template"]["spec"]["containers"][0].update(image="x:2"))
    assert findings(d) == [] and d.changed[0].paths == ["spec.template.spec.containers[0].image"]


def test_a_daemonset_selector_too(tmp_path: Path) -> None:
    before = {**deployment({"app": "agent"}), "kind": "DaemonSet"}
    d = moved(tmp_path, before, lambda o: o["spec"]["selector"]["matchLabels"].update(app="agent2"))
    assert findings(d) == [("workload-selector", "spec.selector", Action.REPLACE)]


def statefulset(**spec: Any) -> dict[str, Any]:
    return obj("apps/v1", "StatefulSet", "db", spec={"serviceName": "db", "selector": {"matchLabels": {"app": "db"}}, "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"resources": {"requests": {"storage": "1Gi"}}}}], **spec})


def test_statefulset_claim_templates_service_name_and_pod_management_are_replaced(tmp_path: Path) -> None:
    def edit(o: dict[str, Any]) -> None:
        o["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] = "2Gi"
        o["spec"]["serviceName"] = "db-headless"
        o["spec"]["podManagementPolicy"] = "Parallel"

    d = moved(tmp_path, statefulset(), edit)
    assert sorted(findings(d)) == [
        ("statefulset-spec", "spec.podManagementPolicy", Action.REPLACE),
        ("statefulset-spec", "spec.serviceName", Action.REPLACE),
        ("statefulset-spec", "spec.volumeClaimTemplates", Action.REPLACE),
    ]
    assert "'replicas', 'ordinals', 'template'" in d.findings()[0][1].kubernetes


def test_a_statefulset_that_deletes_its_claims_with_it_is_a_stop(tmp_path: Path) -> None:
    before = statefulset(persistentVolumeClaimRetentionPolicy={"whenDeleted": "Delete"})
    d = moved(tmp_path, before, lambda o: o["spec"].update(serviceName="other"))
    [(_, finding)] = d.findings()
    assert finding.action is Action.STOP and "set it to Retain first" in finding.program


def test_statefulset_history_limit_is_replaced_though_kubernetes_would_allow_it(tmp_path: Path) -> None:
    d = moved(tmp_path, statefulset(revisionHistoryLimit=10), lambda o: o["spec"].update(revisionHistoryLimit=5))
    [(_, finding)] = d.findings()
    assert finding.rule == "statefulset-history" and finding.action is Action.REPLACE and "all the same" in finding.program


def test_statefulset_replicas_and_update_strategy_change_in_place(tmp_path: Path) -> None:
    d = moved(tmp_path, statefulset(replicas=1), lambda o: o["spec"].update(replicas=3, updateStrategy={"type": "OnDelete"}, minReadySeconds=5))
    assert findings(d) == []


def test_a_job_template_change_runs_the_job_again(tmp_path: Path) -> None:
    before = obj("batch/v1", "Job", "migrate", spec={"template": {"spec": {"containers": [{"name": "c", "image": "m:1"}], "restartPolicy": "Never"}}})
    d = moved(tmp_path, before, lambda o: o["spec"]["template"]["spec"]["containers"][0].update(image="m:2"))
    [(_, finding)] = d.findings()
    assert (finding.rule, finding.action) == ("job-template", Action.REPLACE) and "the Job runs again" in finding.program


def service(**spec: Any) -> dict[str, Any]:
    return obj("v1", "Service", "api", spec={"selector": {"app": "api"}, "ports": [{"port": 80}], **spec})


def test_a_service_cluster_ip_is_replaced_cluster_ips_are_a_stop(tmp_path: Path) -> None:
    d = moved(tmp_path / "a", service(clusterIP="None"), lambda o: o["spec"].pop("clusterIP"))
    assert findings(d) == [("service-cluster-ip", "spec.clusterIP", Action.REPLACE)]
    d = moved(tmp_path / "b", service(clusterIPs=["10.0.0.1"]), lambda o: o["spec"].update(clusterIPs=["10.0.0.2"]))
    assert findings(d) == [("service-cluster-ips", "spec.clusterIPs", Action.STOP)]


def test_a_service_type_change_between_cluster_ip_node_port_and_load_balancer_is_accepted(tmp_path: Path) -> None:
    d = moved(tmp_path, service(type="ClusterIP"), lambda o: o["spec"].update(type="LoadBalancer"))
    assert findings(d) == [] and d.changed[0].paths == ["spec.type"]


def claim(storage: str = "10Gi", **spec: Any) -> dict[str, Any]:
    return obj("v1", "PersistentVolumeClaim", "data", spec={"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": storage}}, **spec})


def test_a_claim_may_grow_in_place(tmp_path: Path) -> None:
    assert findings(moved(tmp_path, claim("10Gi"), lambda o: o["spec"]["resources"]["requests"].update(storage="20Gi"))) == []


def test_a_claim_does_not_shrink(tmp_path: Path) -> None:
    d = moved(tmp_path, claim("10Gi"), lambda o: o["spec"]["resources"]["requests"].update(storage="5Gi"))
    [(_, finding)] = d.findings()
    assert finding.action is Action.STOP and "can not be less than previous value" in finding.kubernetes


def test_a_claims_storage_class_replacement_would_delete_its_data(tmp_path: Path) -> None:
    d = moved(tmp_path / "a", claim(storageClassName="standard"), lambda o: o["spec"].update(storageClassName="premium-rwo"))
    [(_, finding)] = d.findings()
    assert finding.action is Action.STOP and "deleting it deletes the volume's data" in finding.program
    assert "spec is immutable after creation except resources.requests and volumeAttributesClassName" in finding.kubernetes
    d = moved(tmp_path / "b", claim(), lambda o: o["spec"].update(volumeMode="Block"))
    [(_, finding)] = d.findings()
    assert finding.action is Action.STOP and "refuses it" in finding.program


def test_storage_class_parameters_are_replaced_its_reclaim_policy_is_a_stop(tmp_path: Path) -> None:
    before = obj("storage.k8s.io/v1", "StorageClass", "fast", namespace=None, provisioner="pd.csi.storage.gke.io", parameters={"type": "pd-ssd"}, reclaimPolicy="Delete")
    d = moved(tmp_path / "a", before, lambda o: o["parameters"].update(type="pd-balanced"))
    assert findings(d) == [("storageclass-parameters", "parameters", Action.REPLACE)]
    d = moved(tmp_path / "b", before, lambda o: o.update(reclaimPolicy="Retain"))
    assert findings(d) == [("storageclass-policy", "reclaimPolicy", Action.STOP)]


def crd(*versions: dict[str, Any], scope: str = "Namespaced") -> dict[str, Any]:
    return obj(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        "widgets.example.com",
        namespace=None,
        spec={"group": "example.com", "scope": scope, "names": {"kind": "Widget", "plural": "widgets"}, "versions": list(versions)},
    )


def test_a_crd_scope_change_is_a_stop(tmp_path: Path) -> None:
    d = moved(tmp_path, crd({"name": "v1", "served": True, "storage": True}), lambda o: o["spec"].update(scope="Cluster"))
    [(_, finding)] = d.findings()
    assert (finding.rule, finding.action) == ("crd-scope", Action.STOP) and "deletes every object of it" in finding.program


def test_a_removed_stored_version_is_a_stop_a_removed_served_one_a_note(tmp_path: Path) -> None:
    before = crd({"name": "v1alpha1", "served": True, "storage": False}, {"name": "v1beta1", "served": True, "storage": True})
    d = moved(tmp_path, before, lambda o: o["spec"].update(versions=[{"name": "v1", "served": True, "storage": True}]))
    assert sorted(findings(d)) == [
        ("crd-served-version", "spec.versions[v1alpha1]", Action.NOTE),
        ("crd-stored-version", "spec.versions[v1beta1]", Action.STOP),
    ]


def test_a_role_bindings_role_ref_is_replaced(tmp_path: Path) -> None:
    before = obj("rbac.authorization.k8s.io/v1", "RoleBinding", "edit", roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"})
    d = moved(tmp_path, before, lambda o: o["roleRef"].update(name="edit"))
    assert findings(d) == [("role-ref", "roleRef", Action.REPLACE)]


def test_an_immutable_config_map_is_replaced_to_change_its_data(tmp_path: Path) -> None:
    before = obj("v1", "ConfigMap", "settings", immutable=True, data={"a": "1"})
    assert findings(moved(tmp_path, before, lambda o: o["data"].update(a="2"))) == [("immutable-data", "data.a", Action.REPLACE)]


def test_removing_a_namespace_or_a_crd_is_a_stop_removing_a_deployment_is_not(tmp_path: Path) -> None:
    namespace = obj("v1", "Namespace", "team-a", namespace=None)
    old = write(tmp_path / "old", [namespace, crd({"name": "v1", "served": True, "storage": True}), deployment({"app": "web"})])
    new = write(tmp_path / "new", [obj("v1", "Namespace", "team-b", namespace=None)])
    d = diff.compare(old, new)
    assert [diff.label(k) for k, _ in d.added] == ["Namespace team-b"]
    assert [(diff.label(k), [f.action for f in fs]) for k, _, fs in d.removed] == [
        ("Namespace team-a", [Action.STOP]),
        ("CustomResourceDefinition.apiextensions.k8s.io widgets.example.com", [Action.STOP]),
        ("Deployment.apps ns/web", []),
    ]


def test_the_command_exits_4_on_a_stop_prints_the_reason_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = write(tmp_path / "old", [crd({"name": "v1", "served": True, "storage": True})])
    new = write(tmp_path / "new", [crd({"name": "v1", "served": True, "storage": True}, scope="Cluster")])
    assert main(["diff", str(old), str(new)]) == EXIT_DESTRUCTIVE
    out = capsys.readouterr().out
    assert "0 added, 0 removed, 1 changed; 0 replaced, 1 stops" in out
    assert "STOP: CustomResourceDefinition.apiextensions.k8s.io widgets.example.com spec.scope [crd-scope]" in out
    assert main(["diff", str(old), str(old), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["stops"] == 0


def test_a_side_that_is_neither_a_render_nor_a_ref_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["diff", str(empty), str(empty)]) == EXIT_CONFIG_ERROR
    assert "platform.yaml: no such file" in capsys.readouterr().err
    assert main(["diff", "no-such-ref", str(empty)]) == EXIT_CONFIG_ERROR
    assert "name the stack with --stack" in capsys.readouterr().err


RENDERER = '''
import sys, pathlib, yaml
out = pathlib.Path(sys.argv[sys.argv.index("--out") + 1])
out.mkdir(parents=True)
labels = {"app": pathlib.Path("LABEL").read_text().strip()}
objects = [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "ns"},
            "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}}}}]
(out / "platform.yaml").write_text(yaml.safe_dump_all(objects))
(out / "index.yaml").write_text(yaml.safe_dump({"objects": [{"apiVersion": "apps/v1", "kind": "Deployment",
    "namespace": "ns", "name": "web", "source": sys.argv[sys.argv.index("render") + 1]}]}))
'''


def test_two_git_refs_are_rendered_in_temporary_worktrees_by_their_own_code(tmp_path: Path) -> None:
    """A repository whose `python -m stacks render` (its own, not ours) writes a Deployment
    labelled from a file; two commits differ in the label; the worktrees are gone after."""
    repo = tmp_path / "repo"
    (repo / "stacks").mkdir(parents=True)
    (repo / "stacks" / "__init__.py").write_text("")
    (repo / "stacks" / "__main__.py").write_text(RENDERER)

    def git(*args: str) -> str:
        env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com", "PATH": "/usr/bin:/bin"}
        return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout

    git("init", "-q")
    for label in ("web", "web-v2"):
        (repo / "LABEL").write_text(label)
        git("add", "-A")
        git("commit", "-qm", label)
    work = tmp_path / "work"
    old = diff.render_ref("HEAD~1", "dev", None, work / "old", repo=repo)
    new = diff.render_ref("HEAD", "dev", None, work / "new", repo=repo)
    d = diff.compare(old, new)
    assert findings(d) == [("workload-selector", "spec.selector", Action.REPLACE)]
    assert d.changed[0].source == "dev"
    assert len(git("worktree", "list").splitlines()) == 1  # only the repository itself: the temporary worktrees are gone
