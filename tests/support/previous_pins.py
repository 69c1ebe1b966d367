"""What the previous release of the pins created, as a record the upgrade tests hold the current
render against (tests/test_upgrade_path.py): per chart or tree (its URN without the stack) the
objects it rendered, each one a child resource whose URN follows from the install's
(plumbing.base.child_name), our own objects with their URNs, and per workload its selector
(immutable in place).

The records in tests/snapshots/previous-pins/ are of the pins before this move (Kubeflow 26.03,
cert-manager v1.19.4 from its tree, Istio 1.28/1.29): made from `python -m stacks render <stack>
--full` of main at d2a1159 and that commit's golden plan (tests/snapshots/plans/<stack>.json),
kind (no cloud) and prod (GKE: the HTTPS gateway, DCGM, GPU pools) between them hold every install.
After the next move, record the release it replaces: `python -m tests.support.previous_pins`.

`dra-driver.yaml` records NVIDIA's DRA driver chart before its move to kubernetes-sigs (chart
nvidia-dra-driver-gpu 25.12.0 -> dra-driver-nvidia-gpu 0.4.1, issue 40): its objects and
workload selectors as the platform installs it for a GKE stack with one DRA pool (`dra_driver`),
made at b8983ba (the pins before the move) with `python -m tests.support.previous_pins dra` (no shipped stack has a DRA
pool, so the kind and prod records hold none of it).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

from plumbing.base import child_name, child_type
from tooling.fullrender import FullRender
from tooling.removals import stackless

RECORDS = Path(__file__).resolve().parents[1] / "snapshots" / "previous-pins"
WORKLOADS = ("Deployment", "StatefulSet", "DaemonSet")


def object_key(obj: dict[str, Any]) -> str:
    """`<apiVersion> <Kind> <namespace>/<name>`, as the full-render snapshot keys objects."""
    meta = obj.get("metadata") or {}
    return f"{obj.get('apiVersion', '')} {obj.get('kind', '')} {meta.get('namespace') or ''}/{meta.get('name', '')}"


def record(render: FullRender) -> dict[str, Any]:
    """The record of one stack's render."""
    installs: dict[str, list[str]] = {}
    ours: dict[str, str] = {}
    for o in render.objects:
        if o.upstream:
            installs.setdefault(stackless(o.urn), []).append(object_key(o.obj))
        else:
            ours[object_key(o.obj)] = stackless(o.resource_urn)
    return {
        "installs": {urn: sorted(keys) for urn, keys in installs.items()},
        "ours": ours,
        "selectors": {object_key(o.obj): o.obj["spec"].get("selector") for o in render.objects if o.obj.get("kind") in WORKLOADS},
    }


def urns(recorded: dict[str, Any]) -> dict[str, str]:
    """Object key -> the URN (without the stack) of the resource that was it."""
    found = dict(recorded["ours"])
    for install, keys in recorded["installs"].items():
        qualified, name = install.rsplit("::", 1)
        for key in keys:
            api_version, kind, where = key.split(" ", 2)
            namespace, _, own = where.partition("/")
            props = {"apiVersion": api_version, "kind": kind, "metadata": {"namespace": namespace, "name": own}}
            found[key] = f"{qualified}${child_type(props)}::{child_name(name, props)}"
    return found


DRA_RECORD = "dra-driver"


def dra_driver(mirror: Path) -> list[dict[str, Any]]:
    """The DRA driver's chart as helm renders it with the platform's values, from `mirror`, for
    the base GKE stack with its L4 pool on DRA (tests/test_dra.py's stack)."""
    from components.dra import RELEASE
    from facts.resource_types import HELM_CHART
    from plumbing.sources import mirror_sources
    from stackmodel.config import validate
    from tests.conftest import base_gke, with_changes
    from tooling import fullrender
    from tooling.plan import evaluate

    raw = with_changes(
        base_gke(), {"mlplatform:cluster.gpuPools.0.gpuAllocation": "dra", "mlplatform:cluster.autoprovisioning": {"enabled": False}}
    )
    plan = evaluate(validate(raw, "dra").model_copy(update={"sources": mirror_sources(mirror)}), "dra")
    (chart,) = [r for r in plan.resources if r.type == HELM_CHART and r.name == RELEASE]
    install = fullrender.install_of(chart, "nvidia-dra-driver")
    assert install is not None
    return [o for o in yaml.safe_load_all(fullrender.helm_template(install, [], "1.36.0")) if o]


def chart_record(objects: list[dict[str, Any]]) -> dict[str, Any]:
    """The record of one chart's objects: their keys and the workloads' selectors."""
    return {
        "objects": sorted(object_key(o) for o in objects),
        "selectors": {object_key(o): o["spec"].get("selector") for o in objects if o.get("kind") in WORKLOADS},
    }


def load(stack: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((RECORDS / f"{stack}.yaml").read_text())
    return data


def write(stack: str, render: FullRender) -> Path:
    RECORDS.mkdir(parents=True, exist_ok=True)
    path = RECORDS / f"{stack}.yaml"
    path.write_text(yaml.safe_dump(record(render), sort_keys=True, width=400))
    return path


if __name__ == "__main__":
    from tests.support import renders
    from tests.support.mirror import MIRROR

    for name in sys.argv[1:] or ["kind", "prod"]:
        if name == "dra":
            path = RECORDS / f"{DRA_RECORD}.yaml"
            path.write_text(yaml.safe_dump(chart_record(dra_driver(MIRROR)), sort_keys=True, width=400))
            print(path)
        else:
            print(write(name, renders.rendered(name)))
