"""GPUDirect networking of GPU pools (docs/gpu-fabric.md): the catalog's names, the loader's
refusals with their paths, the pools' Args, and what the dev-fabric fixture plans on GCP."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from typing import Any

import pytest

from facts import gpu_fabric
from facts.gpu_fabric import DEVICE_NETWORK_NAME_MAX, GCP_NAME_MAX, carve, fabric_networks, version_problem
from infra.args import fabric_pools
from infra.fabric import additional_node_networks
from stackmodel.config import ConfigError, load, validate
from tests.conftest import base_gke, with_changes
from tooling.plan import Plan

C = "mlplatform:cluster"
P0 = f"{C}.gpuPools.0"
A3MEGA = {"name": "h100", "accelerator": "nvidia-h100-mega-80gb", "machineType": "a3-megagpu-8g", "max": 2,
          "zones": ["us-central1-b"], "network": "tcpxo", "fabric": {"cidr": "192.168.0.0/20"}}
A4 = {"name": "b200", "accelerator": "nvidia-b200", "machineType": "a4-highgpu-8g", "max": 2,
      "zones": ["us-central1-b"], "network": "rdma", "fabric": {"cidr": "192.168.16.0/20"}}
NAP_OFF = {f"{C}.autoprovisioning": {"enabled": False}}
SHARED = {"hostProject": "acme-net", "network": "shared-vpc", "subnetwork": "ml-us-central1", "podsRange": "pods",
          "servicesRange": "services"}


def problems(changes: dict[str, Any]) -> dict[str, list[str]]:
    with pytest.raises(ConfigError) as caught:
        validate(with_changes(base_gke(), {**NAP_OFF, **changes}), "bad.yaml")
    found: dict[str, list[str]] = {}
    for p in caught.value.problems:
        found.setdefault(p.path, []).append(p.message)
    return found


def accepted(changes: dict[str, Any]) -> Any:
    return validate(with_changes(base_gke(), {**NAP_OFF, **changes}), "ok.yaml")


# --- the catalog ------------------------------------------------------------------------


def test_tcpxo_nics_are_eight_vpcs_named_per_pool() -> None:
    nics = fabric_networks("ml-fabric", "h100", "tcpxo")
    assert [(n.vpc, n.subnet, n.network, n.interface, n.device_mode) for n in nics[:2]] == [
        ("ml-fabric-h100-gpu0", "ml-fabric-h100-gpu0", "h100-vpc1", "eth1", "NetDevice"),
        ("ml-fabric-h100-gpu1", "ml-fabric-h100-gpu1", "h100-vpc2", "eth2", "NetDevice"),
    ]
    assert len(nics) == 8 and len({n.vpc for n in nics}) == 8 and all(n.in_pod for n in nics)
    assert nics[-1].interface == "eth8"


def test_rdma_nics_are_a_gvnic_and_eight_subnets_of_one_roce_vpc() -> None:
    nics = fabric_networks("ml-fabric", "b200", "rdma")
    gvnic, *rdma = nics
    assert (gvnic.vpc, gvnic.network, gvnic.interface, gvnic.device_mode, gvnic.in_pod) == (
        "ml-fabric-b200-gvnic", "b200-gvnic-1", "eth1", "NetDevice", False)
    assert {n.vpc for n in rdma} == {"ml-fabric-b200-rdma"}
    assert [n.subnet for n in rdma][:2] == ["ml-fabric-b200-rdma-0", "ml-fabric-b200-rdma-1"]
    assert [n.network for n in rdma][-1] == "b200-rdma-7"
    assert [n.interface for n in rdma] == [f"eth{i}" for i in range(2, 10)]
    assert {n.device_mode for n in rdma} == {"RDMA"}


def test_long_names_stay_within_gcp_and_gke_limits_and_apart() -> None:
    cluster, pools = "c" * 40, ("p" * 39 + "a", "p" * 39 + "b")
    names = [fabric_networks(cluster, pool, kind) for pool in pools for kind in ("tcpxo", "rdma")]
    every = [n for nics in names for n in nics]
    assert all(len(n.vpc) <= GCP_NAME_MAX and len(n.subnet) <= GCP_NAME_MAX for n in every)
    assert all(len(n.network) <= DEVICE_NETWORK_NAME_MAX == 41 for n in every)
    tcpxo_a, tcpxo_b = names[0], names[2]
    assert not {n.network for n in tcpxo_a} & {n.network for n in tcpxo_b}
    assert not {n.vpc for n in tcpxo_a} & {n.vpc for n in tcpxo_b}


def test_existing_networks_keep_the_kubernetes_names() -> None:
    own = tuple((f"net{i}", f"sub{i}") for i in range(8))
    nics = fabric_networks("ml", "h100", "tcpxo", own)
    assert [(n.vpc, n.subnet, n.network) for n in nics][:1] == [("net0", "sub0", "h100-vpc1")]


def test_carve_splits_the_range_into_one_subnet_per_nic() -> None:
    assert [str(c) for c in carve(ipaddress.IPv4Network("192.168.0.0/20"), "tcpxo")][::7] == [
        "192.168.0.0/23", "192.168.14.0/23"]
    rdma = carve(ipaddress.IPv4Network("10.64.0.0/16"), "rdma")
    assert len(rdma) == 9 and str(rdma[0]) == "10.64.0.0/20" and str(rdma[8]) == "10.64.128.0/20"


@pytest.mark.parametrize(
    ("machine", "version", "problem"),
    [
        ("a3-megagpu-8g", "1.28.9-gke.1249999", "needs GKE 1.28.9-gke.1250000 or later in 1.28"),
        ("a3-megagpu-8g", "1.27", "needs GKE 1.28.9-gke.1250000 or later"),
        ("a3-megagpu-8g", "1.29", None),
        ("a3-megagpu-8g", "1.31.1-gke.1", None),
        ("a4-highgpu-8g", "1.32.2-gke.1400000", "needs GKE 1.32.2-gke.1475000 or later in 1.32"),
        ("a4-highgpu-8g", "1.31", "needs GKE 1.32.2-gke.1475000 or later"),
        ("a3-ultragpu-8g", "1.31.4-gke.1183000", None),
    ],
)
def test_gke_version_floors(machine: str, version: str, problem: str | None) -> None:
    fabric = gpu_fabric.fabric_of(machine)
    assert fabric is not None
    assert version_problem(fabric.machines[machine], version) == problem


# --- the loader -------------------------------------------------------------------------


def test_tcpxo_on_an_l4_pool_is_refused_at_its_network() -> None:
    found = problems({f"{P0}.network": "tcpxo", f"{P0}.fabric": {"cidr": "192.168.0.0/20"}})
    assert list(found) == [f"{C}.gpuPools[0].network"]
    assert found[f"{C}.gpuPools[0].network"] == [
        "tcpxo is GPUDirect-TCPXO, which runs on a3-megagpu-8g, not g2-standard-24; this pool takes none: only A3 Mega "
        "(tcpxo), A3 Ultra and A4 (rdma) have GPUDirect NICs"
    ]


def test_rdma_on_a3_mega_names_the_network_it_takes() -> None:
    found = problems({f"{C}.gpuPools": [{**A3MEGA, "network": "rdma"}]})
    assert any("this pool takes tcpxo (or none)" in m for m in found[f"{C}.gpuPools[0].network"])


def test_every_fabric_problem_of_a_pool_at_once() -> None:
    found = problems({f"{C}.gpuPools": [{**A4, "zones": None, "gvnic": False, "fastSocket": True, "fabric": {"cidr": "10.9.0.0/26"}}]})
    assert sorted(found) == sorted(
        f"{C}.gpuPools[0].{key}" for key in ("fabric.cidr", "gvnic", "fastSocket", "zones")
    )
    assert found[f"{C}.gpuPools[0].fabric.cidr"] == [
        "10.9.0.0/26 carves into 9 subnets of /30, smaller than the smallest subnet GCP creates (/29); use a /25 or "
        "wider, e.g. a /20"
    ]


def test_a_fabric_needs_its_networks_and_none_takes_none() -> None:
    assert f"{C}.gpuPools[0].network" in problems({f"{C}.gpuPools": [{**A3MEGA, "fabric": None}]})
    assert problems({f"{P0}.fabric": {"cidr": "192.168.0.0/20"}}) == {
        f"{C}.gpuPools[0].fabric": ["fabric goes with network tcpxo or rdma; remove it"]
    }
    both = problems({f"{C}.gpuPools": [{**A3MEGA, "fabric": {"cidr": "192.168.0.0/20", "existing": []}}]})
    assert f"{C}.gpuPools[0].fabric.cidr" in both


def test_existing_fabric_networks_are_counted_and_distinct() -> None:
    seven = [{"network": f"gpu{i}", "subnetwork": f"gpu{i}"} for i in range(7)]
    assert problems({f"{C}.gpuPools": [{**A3MEGA, "fabric": {"existing": seven}}]}) == {
        f"{C}.gpuPools[0].fabric.existing": ["tcpxo takes 8 networks (eight VPCs, one per GPU NIC); 7 given"]
    }
    twice = [*seven, {"network": "gpu0", "subnetwork": "other"}]
    assert f"{C}.gpuPools[0].fabric.existing[7].network" in problems({f"{C}.gpuPools": [{**A3MEGA, "fabric": {"existing": twice}}]})


def test_existing_fabric_subnetworks_are_distinct() -> None:
    """Eight TCPXO VPCs that all name one subnetwork: a subnetwork belongs to one VPC, and a VM's
    NICs are on distinct subnets; RDMA's RoCE subnets likewise."""
    one_subnet = [{"network": f"gpu{i}", "subnetwork": "gpu-sub"} for i in range(8)]
    found = problems({f"{C}.gpuPools": [{**A3MEGA, "fabric": {"existing": one_subnet}}]})
    assert list(found) == [f"{C}.gpuPools[0].fabric.existing[{i}].subnetwork" for i in range(1, 8)]
    assert found[f"{C}.gpuPools[0].fabric.existing[7].subnetwork"] == [
        "gpu-sub is existing[0]'s subnetwork too; each NIC needs a subnetwork of its own (a subnetwork belongs to one VPC, "
        "and a VM's NICs are on distinct subnets)"
    ]
    roce = [{"network": "a4-gvnic", "subnetwork": "a4-gvnic"}] + [{"network": "a4-roce", "subnetwork": "a4-roce"} for _ in range(8)]
    assert len(problems({f"{C}.gpuPools": [{**A4, "fabric": {"existing": roce}}]})) == 7


def test_no_extra_nic_on_the_clusters_own_network() -> None:
    """TCPXO's eight VPCs and RDMA's gVNIC alike: an extra NIC is on another VPC than the node's."""
    own = [{"network": "shared-vpc", "subnetwork": "a4-gvnic"}] + [{"network": "a4-roce", "subnetwork": f"a4-roce-{i}"} for i in range(8)]
    found = problems({f"{C}.network": {"existing": SHARED}, f"{C}.gpuPools": [{**A4, "fabric": {"existing": own}}]})
    assert found == {f"{C}.gpuPools[0].fabric.existing[0].network": ["shared-vpc is the cluster's own network; each extra NIC needs a VPC of its own"]}


def test_fabric_ranges_must_not_overlap_the_cluster_or_each_other() -> None:
    found = problems({f"{C}.gpuPools": [{**A3MEGA, "fabric": {"cidr": "10.16.0.0/20"}}, {**A4, "fabric": {"cidr": "10.16.0.0/16"}}]})
    assert found[f"{C}.gpuPools[0].fabric.cidr"] == ["10.16.0.0/20 overlaps network.podsCidr 10.16.0.0/14; pick a disjoint range"]
    assert found[f"{C}.gpuPools[1].fabric.cidr"] == [
        "10.16.0.0/16 overlaps network.podsCidr 10.16.0.0/14; pick a disjoint range",
        "10.16.0.0/16 overlaps gpuPools[0].fabric.cidr 10.16.0.0/20; pick a disjoint range",
    ]


def test_a_gke_version_below_the_fabric_is_refused_at_min_master_version() -> None:
    found = problems({f"{C}.minMasterVersion": "1.31.9-gke.100", f"{C}.gpuPools": [A4],
                      "mlplatform:overrides": {"gkeVersions": ["1.31.9-gke.100"]}})
    assert found == {
        f"{C}.minMasterVersion": [
            "gpuPools[0] (b200) has GPUDirect RDMA over RoCE on a4-highgpu-8g, which needs GKE 1.32.2-gke.1475000 or later; "
            "the cluster is created at 1.31.9-gke.100: raise minMasterVersion or remove it for the channel's default"
        ]
    }


def test_subnets_too_small_for_the_pool() -> None:
    found = problems({f"{C}.gpuPools": [{**A3MEGA, "max": 20, "fabric": {"cidr": "192.168.0.0/26"}}]})
    assert found[f"{C}.gpuPools[0].fabric.cidr"] == ["its subnets of /29 hold 4 nodes and the pool grows to 20; use a wider range"]


def test_created_fabric_in_an_unmanaged_host_project_is_refused() -> None:
    found = problems({f"{C}.network": {"existing": {**SHARED, "manageHostProject": False}}, f"{C}.gpuPools": [A3MEGA]})
    assert list(found) == [f"{C}.gpuPools[0].fabric.cidr"]


# --- the Args ---------------------------------------------------------------------------


def test_fabric_pool_args_of_a_shared_vpc_with_existing_networks() -> None:
    own = [{"network": "a4-gvnic", "subnetwork": "a4-gvnic"}] + [{"network": "a4-roce", "subnetwork": f"a4-roce-{i}"} for i in range(8)]
    config = accepted({f"{C}.network": {"existing": SHARED}, f"{C}.gpuPools": [{**A4, "fabric": {"existing": own}}]})
    (b200,) = fabric_pools(config)
    assert (b200.pool, b200.kind, b200.created, b200.project, b200.zone, b200.cidr) == (
        "b200", "rdma", False, "acme-net", "us-central1-b", None)
    assert b200.network_profile == "projects/acme-net/global/networkProfiles/us-central1-b-vpc-roce"
    assert dict(b200.node_selector) == {"cloud.google.com/gke-accelerator": "nvidia-b200", "mlplatform.dev/gpu-pool": "b200"}
    assert [n.network for n in b200.pod_nics][:1] == ["b200-rdma-0"]
    nodes = additional_node_networks(b200)
    assert [(n.network, n.subnetwork) for n in nodes][:2] == [("a4-gvnic", "a4-gvnic"), ("a4-roce", "a4-roce-0")]


def test_no_fabric_pools_without_a_network() -> None:
    assert fabric_pools(accepted({})) == ()


# --- the plan of the fixture ------------------------------------------------------------


def _of(plan: Plan, kind: str) -> dict[str, dict[str, Any]]:
    return {r.inputs.get("name", r.name): r.inputs for r in plan.of_type(kind)}


def test_fixture_cluster_has_multi_networking_on_dataplane_v2(shipped_plan: Callable[[str], Plan]) -> None:
    cluster = shipped_plan("dev-fabric").one("gcp:container/cluster:Cluster", "ml-fabric").inputs
    assert cluster["enableMultiNetworking"] is True
    assert cluster["datapathProvider"] == "ADVANCED_DATAPATH"
    dev = shipped_plan("dev").one("gcp:container/cluster:Cluster", "ml-dev").inputs
    assert "enableMultiNetworking" not in dev


def test_fixture_tcpxo_vpcs_subnets_and_firewalls(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("dev-fabric")
    networks = _of(plan, "gcp:compute/network:Network")
    gpu = {n: v for n, v in networks.items() if n.startswith("ml-fabric-h100-gpu")}
    assert len(gpu) == 8 and {v["mtu"] for v in gpu.values()} == {8244}
    assert all(v["autoCreateSubnetworks"] is False and "networkProfile" not in v for v in gpu.values())
    subnets = _of(plan, "gcp:compute/subnetwork:Subnetwork")
    assert subnets["ml-fabric-h100-gpu7"]["ipCidrRange"] == "192.168.14.0/23"
    assert subnets["ml-fabric-h100-gpu7"]["region"] == "us-central1"
    rule = _of(plan, "gcp:compute/firewall:Firewall")["ml-fabric-h100-gpu3-internal"]
    assert rule["sourceRanges"] == ["192.168.0.0/20"] and rule["direction"] == "INGRESS"
    assert [a["protocol"] for a in rule["allows"]] == ["tcp", "udp", "icmp"]


def test_fixture_rdma_roce_vpc_has_the_zones_profile_and_no_firewall(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("dev-fabric")
    networks = _of(plan, "gcp:compute/network:Network")
    roce = networks["ml-fabric-b200-rdma"]
    assert roce["networkProfile"] == "projects/acme-ml-dev/global/networkProfiles/us-central1-b-vpc-roce"
    assert roce["mtu"] == 8896
    assert "networkProfile" not in networks["ml-fabric-b200-gvnic"]
    rules = _of(plan, "gcp:compute/firewall:Firewall")
    assert rules["ml-fabric-b200-gvnic-internal"]["network"] == "ml-fabric-b200-gvnic"
    assert not [r for r in rules.values() if r["network"] == "ml-fabric-b200-rdma"]
    subnets = _of(plan, "gcp:compute/subnetwork:Subnetwork")
    assert [subnets[f"ml-fabric-b200-rdma-{i}"]["network"] for i in (0, 7)] == ["ml-fabric-b200-rdma"] * 2
    assert subnets["ml-fabric-b200-gvnic"]["ipCidrRange"] == "192.168.16.0/24"


def test_fixture_pools_carry_their_nics_in_order(shipped_plan: Callable[[str], Plan]) -> None:
    pools = _of(shipped_plan("dev-fabric"), "gcp:container/nodePool:NodePool")
    h100 = pools["h100"]["networkConfig"]["additionalNodeNetworkConfigs"]
    assert h100[0] == {"network": "ml-fabric-h100-gpu0", "subnetwork": "ml-fabric-h100-gpu0"}
    assert len(h100) == 8
    b200 = pools["b200"]["networkConfig"]["additionalNodeNetworkConfigs"]
    assert b200[:2] == [
        {"network": "ml-fabric-b200-gvnic", "subnetwork": "ml-fabric-b200-gvnic"},
        {"network": "ml-fabric-b200-rdma", "subnetwork": "ml-fabric-b200-rdma-0"},
    ]
    assert len(b200) == 9
    assert pools["b200"]["nodeConfig"]["imageType"] == "COS_CONTAINERD"
    assert pools["b200"]["nodeConfig"]["gvnic"] == {"enabled": True}
    assert "networkConfig" not in pools["system"]


def test_fixture_loads_as_written() -> None:
    config = load("tests/stacks/Pulumi.dev-fabric.yaml")
    assert [(p.pool, p.kind) for p in fabric_pools(config)] == [("h100", "tcpxo"), ("b200", "rdma")]


# --- the cost view ----------------------------------------------------------------------


def test_cost_view_counts_the_fabric_networks_at_no_charge() -> None:
    from tooling.cost import fabric_lines

    view = fabric_lines(load("tests/stacks/Pulumi.dev-fabric.yaml"))
    assert [(line.what, line.detail.split(", no charge")[0], line.idle, line.ceiling) for line in view.lines] == [
        ("fabric h100", "GPUDirect-TCPXO: 8 VPCs, 8 subnets, 8 firewall rules", 0.0, 0.0),
        ("fabric b200", "GPUDirect RDMA over RoCE: 2 VPCs, 9 subnets, 1 firewall rule", 0.0, 0.0),
    ]
    assert view.notes == []
    spread = fabric_lines(accepted({f"{C}.gpuPools": [{**A3MEGA, "zones": None}]}))
    assert spread.notes == [
        "fabric h100: its nodes span zones, and GPU traffic between zones is billed at 0.01 USD/GiB "
        "(https://cloud.google.com/vpc/network-pricing); set one zone to keep it free"
    ]


def test_shared_vpc_fabric_is_created_in_the_host_project_with_the_agents_grants(
    plan_of: Callable[[dict[str, Any]], Plan],
) -> None:
    plan = plan_of(with_changes(base_gke(), {**NAP_OFF, f"{C}.network": {"existing": SHARED}, f"{C}.gpuPools": [A3MEGA]}))
    networks = _of(plan, "gcp:compute/network:Network")
    assert sorted(networks) == [f"ml-test-h100-gpu{i}" for i in range(8)]
    assert {v["project"] for v in networks.values()} == {"acme-net"}
    assert {v["project"] for v in _of(plan, "gcp:compute/subnetwork:Subnetwork").values()} == {"acme-net"}
    grants = [r for r in plan.of_type("gcp:compute/subnetworkIAMMember:SubnetworkIAMMember") if r.name.startswith("ml-test-h100-gpu")]
    assert len(grants) == 16 and {g.inputs["role"] for g in grants} == {"roles/compute.networkUser"}
    assert {g.inputs["subnetwork"] for g in grants} == {f"ml-test-h100-gpu{i}" for i in range(8)}
    pool = next(r for r in plan.of_type("gcp:container/nodePool:NodePool") if r.inputs["name"] == "h100")
    assert {g.urn for g in grants} <= set(pool.dependencies)


def test_fabric_pool_args_carry_the_taints_a_daemonset_tolerates() -> None:
    config = accepted({f"{C}.gpuPools": [{**A3MEGA, "taints": [{"key": "acme.com/dedicated", "value": "llm"}]}]})
    (h100,) = fabric_pools(config)
    assert [(t.key, t.value, t.effect) for t in h100.taints] == [
        ("nvidia.com/gpu", "present", "NoSchedule"), ("acme.com/dedicated", "llm", "NoSchedule")]
    assert gpu_fabric.firewall_name("v" * 63) != gpu_fabric.firewall_name("v" * 62 + "w")
    assert len(gpu_fabric.firewall_name("v" * 63)) == 63


def test_a_fabric_pool_on_kind_is_refused() -> None:
    from tests.conftest import base_kind

    raw = with_changes(base_kind(), {f"{C}.gpuPools": [A3MEGA]})
    with pytest.raises(ConfigError) as caught:
        validate(raw, "kind.yaml")
    assert [p.path for p in caught.value.problems] == [f"{C}.gpuPools"]
