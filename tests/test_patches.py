"""Patched when Kubeflow is not: the pods of the request path run the security releases the pin
table names ahead of their charts and trees (Pin.patch), the Istio injector carries the
template fix of 1.30.4, and `check --on DATE` fails a stack below the fix of a known advisory of
the request path and says when the Kubeflow release's own support lapsed."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import date
from typing import Any

import pytest

from facts import advisories
from facts.advisories import ADVISORIES, Advisory
from facts.versions import ISTIO, PINS
from tests.support import mirror
from tests.support.renders import edited, rendered
from tooling import check as lint
from tooling.advisories import patch_summary
from tooling.cli import versions_table
from tooling.fullrender import FullRender

ON = date(2026, 12, 5)
BEFORE_006 = date(2026, 8, 25)
"""The day before ISTIO-SECURITY-2026-006 was published."""


def _pods(render: FullRender) -> dict[str, set[str]]:
    """Workload name -> the images of its containers and init containers."""
    found: dict[str, set[str]] = {}
    for o in render.objects:
        if o.obj.get("kind") in ("Deployment", "DaemonSet", "StatefulSet"):
            spec = o.obj["spec"]["template"]["spec"]
            found.setdefault(o.key[3], set()).update(c["image"] for key in ("containers", "initContainers") for c in spec.get(key) or [])
    return found


# --- the pods run the patch releases ---------------------------------------------------------


@mirror.needed
@pytest.mark.parametrize("stack", ["kind", "prod"])
def test_the_request_path_runs_the_patch_releases(stack: str) -> None:
    """Istio >= 1.30.4 (ISTIO-SECURITY-2026-006), oauth2-proxy v7.15.3, cert-manager v1.21.2: the
    versions issue 40 asks for, whatever the pin table says."""
    pods = _pods(rendered(stack))
    assert pods["istiod"] == {"docker.io/istio/pilot:1.30.5"}
    assert pods["istio-ingressgateway"] == {"docker.io/istio/proxyv2:1.30.5"}
    assert pods["istio-cni-node"] == {"docker.io/istio/install-cni:1.30.5"}
    assert pods["oauth2-proxy"] == {"quay.io/oauth2-proxy/oauth2-proxy:v7.15.3"}
    assert pods["cert-manager"] == {"quay.io/jetstack/cert-manager-controller:v1.21.2"}
    assert pods["cert-manager-webhook"] == {"quay.io/jetstack/cert-manager-webhook:v1.21.2"}
    assert pods["cert-manager-cainjector"] == {"quay.io/jetstack/cert-manager-cainjector:v1.21.2"}


@mirror.needed
def test_nothing_the_render_runs_is_at_a_release_a_patch_replaced() -> None:
    """No image of a patched pin left at the tag its chart or tree ships, in any field that
    names an image (the acmesolver argument, the injector's values)."""
    render = rendered("prod")
    text = "\n".join(str(o.obj) for o in render.objects if o.obj.get("kind") != "CustomResourceDefinition")
    for stale in ("pilot:1.30.1", "proxyv2:1.30.1", "install-cni:1.30.1", "oauth2-proxy:v7.15.2", "acmesolver:v1.21.1", "controller:v1.21.1"):
        assert stale not in text, stale


# --- the injector: the 1.30.4 template fix, carried ---------------------------------------

# The lines as istio/istio master e906d004 ("sidecar annotation yaml fix (#61215)", 2026-08-14)
# writes them in manifests/charts/istio-control/istio-discovery/files/injection-template.yaml.
UPSTREAM_ESCAPED = (
    "image: {{ annotation .ObjectMeta `sidecar.istio.io/proxyImage` .Values.global.proxy_init.image | quote }}",
    "image: {{ annotation .ObjectMeta `sidecar.istio.io/proxyImage` .Values.global.proxy.image | quote }}",
    '- {{ printf "--log_output_level=%s" (annotation .ObjectMeta `sidecar.istio.io/agentLogLevel` .Values.global.logging.level) | quote }}',
    '- {{ printf "--proxyLogLevel=%s" (annotation .ObjectMeta `sidecar.istio.io/logLevel` .Values.global.proxy.logLevel) | quote }}',
    '- {{ printf "--proxyComponentLogLevel=%s" (annotation .ObjectMeta `sidecar.istio.io/componentLogLevel` '
    ".Values.global.proxy.componentLogLevel) | quote }}",
    'name: {{ annotation .ObjectMeta `sidecar.istio.io/bootstrapOverride` "" | quote }}',
)
ESCAPED_ANNOTATIONS = ("proxyImage", "bootstrapOverride", "logLevel", "componentLogLevel", "agentLogLevel")
"""The annotations the 1.30.4 notes name."""


def _injector(render: FullRender) -> tuple[str, str]:
    """The injector's templates (key `config`) after the platform's transforms and as the tree ships them."""
    (o,) = [o for o in render.objects if o.key[1:] == ("ConfigMap", "istio-system", "istio-sidecar-injector")]
    assert o.original is not None
    return o.obj["data"]["config"], o.original["data"]["config"]


def _sinks(text: str) -> list[str]:
    """Every template action that writes one of the annotations into the pod (not an `if` that only tests it)."""
    names = "|".join(ESCAPED_ANNOTATIONS)
    actions = re.findall(r"\{\{-?(.*?)-?\}\}", text, flags=re.S)
    return [a for a in actions if re.search(rf"`sidecar\.istio\.io/({names})`", a) and not a.strip().startswith("if ")]


@mirror.needed
def test_the_injector_escapes_the_annotations_as_istio_1_30_4_does() -> None:
    now, shipped = _injector(rendered("kind"))
    unescaped = [a for a in _sinks(shipped) if "| quote" not in a]
    # e906d004 changes 19 lines: 7 in injection-template.yaml, 5 each in gateway-injection-template.yaml
    # and grpc-agent.yaml, 1 each in kube-gateway.yaml and waypoint.yaml.
    assert len(unescaped) == 19, "the tree's 1.30.1 templates write them raw where the fix quotes them"
    assert [a for a in _sinks(now) if "| quote" not in a] == [], "every sink escaped"
    assert len(_sinks(now)) == len(_sinks(shipped)), "no sink dropped"
    for line in UPSTREAM_ESCAPED:
        assert line in now, line


# --- the advisory rule and the notes ----------------------------------------------------------


def _istio_at(release: str, obj: dict[str, Any]) -> None:
    for c in obj["spec"]["template"]["spec"]["containers"]:
        c["image"] = re.sub(r":1\.30\.\d+$", f":{release}", c["image"])


def _pinned_back(render: FullRender, release: str) -> FullRender:
    """The render of a stack whose Istio pin says `release` (its istiod and gateway images)."""
    for name in ("istiod", "istio-ingressgateway"):
        render = edited(render, "Deployment", name, lambda obj: _istio_at(release, obj))
    return render


@mirror.needed
def test_a_stack_pinned_back_to_istio_1_30_3_fails_naming_istio_security_2026_006() -> None:
    back = _pinned_back(rendered("kind"), "1.30.3")
    (found,) = lint.check(back, [r for r in lint.RULES if r.name == "advisory"], on=ON)
    assert (found.rule, found.object) == ("advisory", "Istio 1.30.3")
    assert found.message.startswith("ISTIO-SECURITY-2026-006 (CVE-2026-73513, CVE-2026-73552, CVE-2026-73512, CVE-2026-73547 and 10 more")
    assert "in the request path and below its fix 1.30.4: move Istio to 1.30.4 or later" in found.message
    assert "istio-security-2026-006" in found.message, "names its source"
    assert lint.check(back, [r for r in lint.RULES if r.name == "advisory"], on=BEFORE_006) == [], "not known yet"


@mirror.needed
def test_the_tree_s_own_istio_fails_both_advisories() -> None:
    back = _pinned_back(rendered("kind"), "1.30.1")
    found = lint.check(back, [r for r in lint.RULES if r.name == "advisory"], on=ON)
    assert sorted(v.message.split(" ")[0] for v in found) == ["ISTIO-SECURITY-2026-005", "ISTIO-SECURITY-2026-006"]


@mirror.needed
@pytest.mark.parametrize("stack", ["kind", "dev", "prod"])
def test_the_shipped_stacks_pass_the_advisory_rule_on_the_day(stack: str) -> None:
    assert lint.check(rendered(stack), [r for r in lint.RULES if r.name == "advisory"], on=ON) == []


@mirror.needed
def test_check_notes_the_kubeflow_window_and_what_the_platform_patches() -> None:
    notes = lint.notes(lint.Platform(rendered("kind"), ON))
    (kubeflow,) = [n for n in notes if n.startswith("Kubeflow 26.03.1 ")]
    assert "lapsed 2026-12-05, and the `support` rule fails it from 2027-03-05" in kubeflow
    assert "istio 1.30.1 -> 1.30.5 (ISTIO-SECURITY-2026-005, ISTIO-SECURITY-2026-006)" in kubeflow
    assert "oauth2-proxy v7.15.2 -> v7.15.3 (oauth2-proxy v7.15.3 security fixes)" in kubeflow
    assert "cert-manager v1.21.1 -> v1.21.2" in kubeflow
    assert not [n for n in lint.notes(lint.Platform(rendered("kind"), date(2026, 12, 4))) if n.startswith("Kubeflow 26")], "not lapsed the day before"
    (pipelines,) = [n for n in notes if n.startswith("Kubeflow Pipelines 2.16.1")]
    assert "GHSA-j53r-x5f5-j4hr" in pipelines and "not in the request path" in pipelines


def test_the_kubeflow_note_names_only_the_advisories_a_patch_closes() -> None:
    """A patch release still below a fix does not close that advisory: Istio's images at 1.30.3
    close ISTIO-SECURITY-2026-005 (fixed in 1.30.2), not -006 (fixed in 1.30.4; the `advisory`
    rule fails that one)."""
    assert ISTIO.patch is not None
    assert patch_summary(ISTIO, ON) == "istio 1.30.1 -> 1.30.5 (ISTIO-SECURITY-2026-005, ISTIO-SECURITY-2026-006)"
    back = replace(ISTIO, patch=replace(ISTIO.patch, release="1.30.3"))
    assert patch_summary(back, ON) == "istio 1.30.1 -> 1.30.3 (ISTIO-SECURITY-2026-005)"
    assert patch_summary(back, BEFORE_006) == "istio 1.30.1 -> 1.30.3 (ISTIO-SECURITY-2026-005)"
    unfixed = replace(ISTIO, patch=replace(ISTIO.patch, release="1.30.1"))
    assert patch_summary(unfixed, ON) == "istio 1.30.1 -> 1.30.1"


# --- the facts ------------------------------------------------------------------------------


def test_an_advisory_judges_the_release_of_the_line_it_names() -> None:
    istio = next(a for a in ADVISORIES if a.id == "ISTIO-SECURITY-2026-006")
    assert [istio.fix_for(v) for v in ("1.30.3", "1.30.4", "1.30.5", "1.29.6", "1.29.7", "1.31.0", "1.28.9")] == [
        "1.30.4", None, None, "1.29.7", None, None, None,
    ]
    one_line = Advisory("X", "oauth2-proxy", ("v7.15.3",), (), ON, True, "", istio.source, one_line=True)
    assert [one_line.fix_for(v) for v in ("v7.14.3", "v7.15.2", "v7.15.3", "v7.16.0")] == ["v7.15.3", "v7.15.3", None, None]


def test_advisories_are_known_from_the_day_they_were_published() -> None:
    assert [a.id for a, _ in advisories.of("Istio", "1.30.3", BEFORE_006)] == []
    assert [a.id for a, _ in advisories.of("Istio", "1.30.3", date(2026, 8, 26))] == ["ISTIO-SECURITY-2026-006"]


def test_every_advisory_names_an_upstream_of_the_support_facts_and_its_request_path() -> None:
    from facts.support import UPSTREAMS

    names = {u.name for u in UPSTREAMS}
    assert {a.upstream for a in ADVISORIES} <= names
    assert {a.upstream for a in ADVISORIES if a.request_path} == {"Istio", "oauth2-proxy"}


def test_versions_shows_every_patch_with_its_evidence() -> None:
    table = versions_table()
    assert "| istio | kustomize tree | `1.30.1`, images `1.30.5` (patched) |" in table
    assert "| oauth2-proxy | kustomize tree | `v7.15.2`, images `v7.15.3` (patched) |" in table
    assert "| cert-manager | helm chart | `v1.21.1`, images `v1.21.2` (patched) |" in table
    patches = table.split("| patched | ships | runs | why | manifests |")[1]
    for pin in (p for p in PINS if p.patch):
        assert pin.patch is not None and f"| {pin.name} | `{pin.version}` | `{pin.patch.release}` | {pin.patch.why} | {pin.patch.manifests} |" in patches
    assert "ISTIO-SECURITY-2026-006" in patches and "e906d004" in patches


# --- DCGM: the newest 4.8 whose chart could be read; 4.9 refused until the queries move ----------


def _dcgm_at(tag: str, obj: dict[str, Any]) -> None:
    for c in obj["spec"]["template"]["spec"]["containers"]:
        c["image"] = re.sub(r":[^:]+$", f":{tag}", c["image"])


@mirror.needed
def test_check_refuses_a_dcgm_exporter_that_renamed_the_metrics() -> None:
    render = rendered("prod")
    rule = [r for r in lint.RULES if r.name == "dcgm-metric-names"]
    assert lint.check(render, rule, on=ON) == [], "4.8.2: the names the queries read"
    newer = edited(render, "DaemonSet", "dcgm-exporter", lambda obj: _dcgm_at("4.7.0-4.9.0-distroless", obj))
    (found,) = lint.check(newer, rule, on=ON)
    assert found.object == "DaemonSet.apps dcgm-exporter/dcgm-exporter"
    assert "runs dcgm-exporter 4.9, which renames the default fields to DCGM 4.7's names" in found.message
    assert "stay on 4.8.x until they are migrated" in found.message
    patch = edited(render, "DaemonSet", "dcgm-exporter", lambda obj: _dcgm_at("4.6.1-4.8.4-distroless", obj))
    assert lint.check(patch, rule, on=ON) == [], "a 4.8 patch keeps the names"


# --- the DRA driver from its new home ----------------------------------------------------------


@mirror.needed
def test_the_dra_driver_runs_the_kubernetes_sigs_release_and_its_files_are_there() -> None:
    """kubernetes-sigs/dra-driver-nvidia-gpu 0.4.1 as the platform installs it: its image, and every
    file its containers are told to read mounted or in the image (the prestart script is the
    image's; its init container is given the kubelet directories but does not read them; the
    metrics server's METRICS_PATH is an HTTP path). No shipped stack has a DRA pool, so its chart
    is put beside the kind render's objects."""
    from facts.versions import NVIDIA_DRA_DRIVER_CHART
    from plumbing.sources import MIRROR_CHARTS
    from tests.support import previous_pins
    from tests.support.renders import with_objects
    from tooling.fullrender import Rendered
    from tooling.mirror import MANIFEST

    chart = mirror.MIRROR / MIRROR_CHARTS / f"{NVIDIA_DRA_DRIVER_CHART.name}-{NVIDIA_DRA_DRIVER_CHART.version}.tgz"
    if not chart.is_file():  # a fork's mirror without a DRA stack leaves the optional chart out, saying so
        left_out = json.loads((mirror.MIRROR / MANIFEST).read_text())["notFetched"]
        assert f"{MIRROR_CHARTS}/{chart.name}" in [p["path"] for p in left_out]
        return
    objects = previous_pins.dra_driver(mirror.MIRROR)
    (plugin,) = [o for o in objects if o["kind"] == "DaemonSet"]
    images = {c["image"] for key in ("containers", "initContainers") for c in plugin["spec"]["template"]["spec"][key]}
    assert images == {"registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.1"}
    added = [Rendered(o, "nvidia-dra-driver/nvidia-dra-driver-gpu", "urn:dra", True, original=o) for o in objects]
    render = with_objects(rendered("kind"), lambda existing: [*existing, *added])
    rules = [r for r in lint.RULES if r.name in ("files-provided", "image-pin")]
    assert [str(v) for v in lint.check(render, rules, on=ON) if "nvidia-dra-driver-gpu" in v.object] == []

    def without_mounts(obj: dict[str, Any]) -> None:
        for c in obj["spec"]["template"]["spec"]["containers"]:
            c["volumeMounts"] = [m for m in c.get("volumeMounts") or [] if m["mountPath"] != "/var/lib/kubelet/plugins_registry"]

    unmounted = edited(render, "DaemonSet", "nvidia-dra-driver-gpu-kubelet-plugin", without_mounts)
    found = [str(v) for v in lint.check(unmounted, rules, on=ON) if "nvidia-dra-driver-gpu" in v.object]
    assert found and all("env KUBELET_REGISTRAR_DIRECTORY_PATH names /var/lib/kubelet/plugins_registry" in f for f in found), (
        "the plugin itself reads the directory: unmounted, it is named"
    )
