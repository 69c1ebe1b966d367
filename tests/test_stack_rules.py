"""Each rule of stackmodel/rules/, broken by a minimal stack: exactly its problem, with
the exact path and message, and nothing else."""

from __future__ import annotations

import pytest

from stackmodel.config import ConfigError, validate
from stackmodel.rules import RULES, WARNINGS, cross_checks, warnings
from stackmodel.stack import PlatformConfig
from tests.conftest import base_gke, base_kind, with_changes
from tests.support.cases import Case

C = "mlplatform:cluster"
P0 = f"{C}.gpuPools.0"
K = "mlplatform:components"
T = "mlplatform:teams"
TEAM = {"name": "vision", "owner": "a@acme.com"}
SAME_KFAM_NAME = [{"email": "ana.b@x.com", "role": "edit"}, {"email": "ana-b@x.com", "role": "edit"}]
OIDC = {f"{K}.kubeflow": {"auth": {"kind": "oidc", "oidc": {"clientId": "x"}, "hostname": "kf.acme.com", "allowedDomains": ["acme.com"], "allowedEmails": ["guest@partner.org"]}}}
MANAGED_PROMETHEUS = {f"{C}.managedPrometheus": True, f"{K}.monitoring": {"enabled": True}}
# An address KFAM turns into a 269-character binding name (e-mail: 64 + @ + 182 characters).
LONG_EMAIL = "x" * 64 + "@" + "d" * 63 + "." + "e" * 63 + "." + "f" * 50 + ".com"
L4_GPUS = {"gpus": {"nvidia-l4": 2}}
OFFICE = {"cidr": "203.0.113.0/24", "name": "office"}
PROD = {"mlplatform:environment": "prod", f"{C}.masterAuthorizedNetworks": [OFFICE]}
EXISTING_NETWORK = {"hostProject": "acme-net-host", "network": "shared-vpc", "subnetwork": "ml-us-central1", "podsRange": "pods", "servicesRange": "services"}

CASES = [
    Case("pool named system", {f"{P0}.name": "system"}, f"{C}.gpuPools[0].name", "'system' is the system pool's name; pick another pool name", rule="pool-names-free"),
    Case("nap below pools", {f"{C}.autoprovisioning.limits.nvidia-l4": 2}, f"{C}.autoprovisioning.limits.nvidia-l4", "the GPU pools can grow to 12 nvidia-l4 GPUs but the limit is 2; set it to at least 12", rule="autoprovisioning-covers-gpus"),
    Case("nap without the pool's gpu", {f"{C}.autoprovisioning.limits": {"cpu": 256, "memory": 1024}}, f"{C}.autoprovisioning.limits.nvidia-l4", "the GPU pools can grow to 12 nvidia-l4 GPUs but the limit is missing; set it to at least 12", rule="autoprovisioning-covers-gpus"),
    Case("nap cpu below the pools", {f"{C}.autoprovisioning.limits.cpu": 100}, f"{C}.autoprovisioning.limits.cpu", "the node pools at full size take 216 vCPUs (the system pool 9 x e2-standard-8 = 72, pool l4 6 x g2-standard-24 = 144), but the cluster-wide cpu limit is 100: GKE counts every node against it, so the pools could never reach their max; set it to at least 216 (more leaves room for autoprovisioned pools) or lower the pools' max", rule="autoprovisioning-covers-pools"),
    Case("nap memory below the pools", {f"{C}.systemPool": {"machineType": "n1-standard-1", "max": 1}, f"{C}.autoprovisioning.limits.memory": 500}, f"{C}.autoprovisioning.limits.memory", "the node pools at full size take 587.25 GiB (the system pool 3 x n1-standard-1 = 11.25, pool l4 6 x g2-standard-24 = 576), but the cluster-wide memory limit is 500: GKE counts every node against it, so the pools could never reach their max; set it to at least 588 (more leaves room for autoprovisioned pools) or lower the pools' max", rule="autoprovisioning-covers-pools"),
    Case("trainer without jobset", {f"{K}.jobset": {"enabled": False}}, f"{K}.jobset.enabled", "trainer needs jobset; enable jobset or disable trainer", rule="component-needs"),
    Case("an idle gpu node outside prod", {f"{P0}.min": 1}, f"{C}.gpuPools[0].min", "pool l4 keeps 1 GPU node(s) per zone running in a dev stack; GPU pools idle at 0 outside prod: set min to 0", rule="gpu-pools-scale-to-zero"),
    Case("a dra pool with its driver switched off", {f"{P0}.gpuAllocation": "dra", f"{C}.autoprovisioning": {"enabled": False}, f"{K}.nvidiaDraDriver": {"enabled": False}}, f"{C}.gpuPools[0].gpuAllocation", "pool l4's GPUs are allocated by NVIDIA's DRA driver, which mlplatform:components.nvidiaDraDriver.enabled: false leaves out; remove that line or use gpuAllocation: device-plugin", rule="dra-pools-as-gke-allows"),
    Case("a gpu pool without its driver", {f"{P0}.driverVersion": "INSTALLATION_DISABLED"}, f"{C}.gpuPools[0].driverVersion", "pool l4 would get no GKE driver installation, and nothing else installs the NVIDIA driver; set driverVersion LATEST or DEFAULT", rule="gpu-drivers-installed"),
    Case("prod with public nodes", {**PROD, f"{C}.privateNodes": False}, f"{C}.privateNodes", "a prod cluster needs private nodes; set privateNodes: true", rule="prod-cluster-private"),
    Case("prod control plane open to anyone", {"mlplatform:environment": "prod"}, f"{C}.masterAuthorizedNetworks", "a prod cluster's control plane needs authorized networks (empty: anyone may reach it); list the ranges that need it", rule="prod-cluster-private"),
    Case("prod control plane open to the internet", {**PROD, f"{C}.masterAuthorizedNetworks": [OFFICE, {"cidr": "0.0.0.0/0", "name": "anywhere"}]}, f"{C}.masterAuthorizedNetworks[1].cidr", "0.0.0.0/0 opens a prod cluster's control plane to the internet; list only the ranges that need it", rule="prod-cluster-private"),
    Case("prod without deletion protection", {**PROD, f"{C}.deletionProtection": False}, f"{C}.deletionProtection", "a prod stack keeps deletion protection on (the cluster, the pipelines database and Pulumi's protect follow it); remove deletionProtection: false", rule="prod-deletion-protected"),
    Case("a region of no catalog", {f"{C}.location": "us-central9"}, f"{C}.location", "'us-central9' is not a Google Cloud region facts/regions.py knows (as of 2026-12-01) (did you mean us-central1?): check the spelling against `gcloud compute regions list`; if Google opened it since, add it to facts/regions.py, or take it knowingly with mlplatform:overrides: {regions: [us-central9]}", rule="regions-known"),
    Case("provider region elsewhere", {"gcp:region": "europe-west4"}, "gcp:region", "the provider's default region europe-west4 is not the cluster's (us-central1), where the program puts everything; set gcp:region: us-central1 or remove it", rule="provider-defaults-in-cluster-region"),
    Case("provider zone elsewhere", {"gcp:zone": "europe-west4-a"}, "gcp:zone", "the provider's default zone europe-west4-a is outside the cluster's region us-central1; use a zone of us-central1 or remove gcp:zone", rule="provider-defaults-in-cluster-region"),
    Case("system pool of an unknown machine type", {f"{C}.systemPool": {"machineType": "e2-standard-7"}}, f"{C}.systemPool.machineType", "'e2-standard-7' is not a machine type facts/prices.py knows (did you mean e2-standard-8 or e2-standard-4?): check the spelling (gcloud compute machine-types list); for a newer one, add its shape to facts/prices.py SHAPES, or take it knowingly with mlplatform:overrides: {machineTypes: [e2-standard-7]} (its sizes and cost are then not checked)", rule="machine-types-known"),
    Case("issuer with a trailing slash", {**OIDC, f"{K}.kubeflow.auth.oidc.issuer": "https://login.acme.com/"}, f"{K}.kubeflow.auth.oidc.issuer", "'https://login.acme.com/' ends in '/': Dex's OIDC library (go-oidc) refuses the provider unless its discovery document names the issuer exactly so, and most publish it without (https://accounts.google.com); write 'https://login.acme.com', or, if https://login.acme.com/.well-known/openid-configuration says 'https://login.acme.com/', take it knowingly with mlplatform:overrides: {oidcIssuers: ['https://login.acme.com/']}", base="gke", rule="oidc-issuer-as-published"),
    Case("owner spelled unlike the dex user", {T: [{**TEAM, "owner": "A@acme.com"}]}, f"{T}[0].owner", f"A@acme.com and a@acme.com ({K}.kubeflow.auth.staticUsers[0]) differ only in letter case: Dex and oauth2-proxy take them for one account, but the profile controller, KFAM and Istio compare addresses exactly, and Dex signs static users in as staticUsers writes them; write a@acme.com here too", rule="identities-spelled-alike"),
    Case("contributor spelled unlike the oidc account", {**OIDC, T: [{**TEAM, "contributors": [{"email": "Guest@partner.org", "role": "view"}]}]}, f"{T}[0].contributors[0].email", f"Guest@partner.org and guest@partner.org ({K}.kubeflow.auth.allowedEmails[0]) differ only in letter case: Dex and oauth2-proxy take them for one account, but the profile controller, KFAM and Istio compare addresses exactly, and the identity provider sends one spelling; write guest@partner.org here too", rule="identities-spelled-alike"),
    Case("dex without static users", {f"{K}.kubeflow": {"auth": {"kind": "dex"}}}, f"{K}.kubeflow.auth.staticUsers", "Dex without static users lets nobody sign in (it has no other login); list who may sign in, each with a bcrypt hash in mlplatform:dexPasswordHashes, or use kind: oidc", base="kind", rule="dex-has-static-users"),
    Case("prod on kind", {"mlplatform:environment": "prod"}, "mlplatform:environment", "a kind cluster is never prod; use dev, staging or ci, or a gke cluster", base="kind", rule="prod-on-gke"),
    Case(
        "fabric pool without the gpuFabric component",
        {
            f"{P0}.accelerator": "nvidia-h100-mega-80gb",
            f"{P0}.machineType": "a3-megagpu-8g",
            f"{P0}.network": "tcpxo",
            f"{P0}.fabric": {"cidr": "192.168.0.0/20"},
            f"{C}.autoprovisioning.limits.nvidia-h100-mega-80gb": 48,
            f"{C}.autoprovisioning.limits.cpu": 4096,
            f"{C}.autoprovisioning.limits.memory": 16384,
            f"{K}.gpuFabric": {"enabled": False},
        },
        f"{C}.gpuPools[0].network",
        "pool l4's training pods attach the tcpxo NICs' Networks, which the gpuFabric component creates (with the NCCL "
        "plugin on the nodes); remove `mlplatform:components.gpuFabric.enabled: false`, or set this pool's network: none",
        rule="gpu-fabric-installed",
    ),
    Case("queued pool without kueue", {f"{P0}.provisioning": "queued", f"{K}.kueue": {"enabled": False}}, f"{C}.gpuPools[0].provisioning", "queued pools get nodes only through ProvisioningRequests, which Kueue creates; enable the kueue component or use provisioning: flex-start", rule="queued-pools-need-kueue"),
    Case("ray addon on kind", {f"{K}.kuberay": {"source": "gke-addon"}}, f"{K}.kuberay.source", "gke-addon is GKE's managed Ray operator; on kind use source: operator", base="kind", rule="ray-addon-on-gke"),
    Case(
        "two LeaderWorkerSets",
        {f"{K}.leaderWorkerSet": {"enabled": True}, f"{K}.trainer": {"values": {"dataCache": {"enabled": True}}}},
        f"{K}.trainer.values.dataCache",
        "Trainer's data cache would install a second LeaderWorkerSet beside the leaderWorkerSet component: set "
        "dataCache.lws.install: false (the component's serves it), or disable leaderWorkerSet",
        base="kind",
        rule="one-leader-worker-set",
    ),
    Case("gke inference gateway on kind", {f"{K}.inferenceGateway": {"enabled": True, "provider": "gke"}}, f"{K}.inferenceGateway.provider", "gke is GKE Inference Gateway; on kind use provider: istio", base="kind", rule="gke-inference-gateway-on-gke"),
    Case(
        "gke inference gateway on an existing network without its proxy-only subnet",
        {f"{C}.network": {"existing": EXISTING_NETWORK}, f"{K}.inferenceGateway": {"enabled": True, "provider": "gke"}},
        f"{K}.inferenceGateway.proxyOnlySubnetRange",
        "the cluster is on the existing network shared-vpc, whose proxy-only subnet in us-central1 the platform does not make: give its "
        "range (gcloud compute networks subnets list --project acme-net-host --network shared-vpc --filter purpose=REGIONAL_MANAGED_PROXY), "
        "or have one made in that region first",
        rule="gke-proxy-only-subnet",
    ),
    Case("a proxy-only subnet for the istio gateway", {f"{K}.inferenceGateway": {"enabled": True, "proxyOnlySubnetRange": "10.129.0.0/23"}}, f"{K}.inferenceGateway.proxyOnlySubnetRange", "the proxy-only subnet is GKE Inference Gateway's (provider: gke on a gke cluster); remove it", rule="gke-proxy-only-subnet"),
    Case("a proxy-only subnet under 64 addresses", {f"{K}.inferenceGateway": {"enabled": True, "provider": "gke", "proxyOnlySubnetRange": "10.129.0.0/27"}}, f"{K}.inferenceGateway.proxyOnlySubnetRange", "10.129.0.0/27 has fewer than the 64 addresses a proxy-only subnet needs; use a /26 or wider, e.g. a /23", rule="gke-proxy-only-subnet"),
    Case("the default proxy-only subnet inside the pods range", {f"{C}.network": {"podsCidr": "10.128.0.0/14"}, f"{K}.inferenceGateway": {"enabled": True, "provider": "gke"}}, f"{K}.inferenceGateway.proxyOnlySubnetRange", "the default 10.129.0.0/23 overlaps the cluster's podsCidr 10.128.0.0/14; give the proxy-only subnet a range of its own", rule="gke-proxy-only-subnet"),
    Case("gke inference gateway without gateway api", {f"{C}.gatewayApi": False, f"{K}.inferenceGateway": {"enabled": True, "provider": "gke"}}, f"{K}.inferenceGateway.provider", "GKE Inference Gateway needs GKE's Gateway API: set cluster.gatewayApi: true, or use provider: istio", rule="gke-inference-gateway-on-gke"),
    Case(
        "a team named publishers with llm serving",
        {**{f"{K}.{c}": {"enabled": True} for c in ("leaderWorkerSet", "inferenceGateway")}, f"{K}.serving": {"enabled": True, "llm": True}, T: [{**TEAM, "name": "publishers"}]},
        f"{T}[0].name",
        "'publishers' is the path prefix of every team's published LLMs (/publishers/<team>/models/...): a team of that name "
        "could route another team's models; rename the team",
        base="kind",
        rule="llm-team-not-publishers",
    ),
    Case("llm serving without leader worker set", {f"{K}.serving": {"enabled": True, "llm": True}, f"{K}.inferenceGateway": {"enabled": True}}, f"{K}.serving.llm", "LLM serving needs leaderWorkerSet; enable leaderWorkerSet or set llm: false", base="kind", rule="serving-llm-needs"),
    Case("a Model Registry on Cloud SQL on kind", {f"{K}.modelRegistry": {"enabled": True, "database": "cloudSql"}}, f"{K}.modelRegistry.database", "cloudSql is GKE's Cloud SQL: a registry on this cluster would have no database; use database: inCluster (the default off GKE)", base="kind", rule="model-registry-has-a-database"),
    Case("dcgm on kind", {f"{K}.dcgmExporter": {"enabled": True}}, f"{K}.dcgmExporter.enabled", "kind clusters have no GPUs; remove dcgmExporter.enabled", base="kind", rule="dcgm-on-gke"),
    Case("managed dcgm without managed prometheus", {f"{K}.dcgmExporter": {"source": "gke-managed"}}, f"{K}.dcgmExporter.source", "GKE's managed DCGM metrics need cluster.managedPrometheus: true; set it or use source: chart", rule="managed-dcgm-needs-managed-prometheus"),
    Case("managed backend without managed prometheus", {f"{K}.monitoring": {"enabled": True, "backend": "gke-managed"}}, f"{K}.monitoring.backend", "backend gke-managed needs cluster.managedPrometheus: true; set it or use backend: kube-prometheus-stack", rule="managed-backend-needs-managed-prometheus"),
    Case("managed backend on kind", {f"{K}.monitoring": {"enabled": True, "backend": "gke-managed"}}, f"{K}.monitoring.backend", "gke-managed is GKE's managed Prometheus; on kind use backend: kube-prometheus-stack", base="kind", rule="managed-backend-needs-managed-prometheus"),
    Case("managed dcgm into kube-prometheus-stack", {**MANAGED_PROMETHEUS, f"{K}.dcgmExporter": {"source": "gke-managed"}}, f"{K}.dcgmExporter.source", "GKE's managed DCGM metrics go to managed Prometheus, which kube-prometheus-stack does not read; use source: chart or monitoring.backend: gke-managed", rule="gpu-metrics-reach-prometheus"),
    Case("dcgm chart into managed prometheus", {**MANAGED_PROMETHEUS, f"{K}.monitoring.backend": "gke-managed", f"{K}.dcgmExporter": {}}, f"{K}.dcgmExporter.source", "with monitoring.backend gke-managed use source: gke-managed (the chart's ServiceMonitor is for kube-prometheus-stack)", rule="gpu-metrics-reach-prometheus"),
    Case("gateway hostname on kind", {f"{K}.kubeflow.auth.hostname": "kf.acme.com"}, f"{K}.kubeflow.auth", "hostname and iap expose the gateway on GKE; on kind remove them", base="kind", rule="gateway-exposed-on-gke"),
    Case("teams without kubeflow", {f"{K}.kubeflow": {"enabled": False}, T: [TEAM]}, T, "teams are Kubeflow profiles; enable kubeflow or remove the teams", rule="teams-need-kubeflow"),
    Case("teams without kueue", {f"{K}.kueue": {"enabled": False}, T: [TEAM]}, f"{K}.kueue.enabled", "every team gets a Kueue ClusterQueue and a `default` LocalQueue, which need Kueue; enable kueue or remove the teams", rule="teams-need-kueue"),
    Case("team and node accounts of one id", {f"{C}.name": "team-vision", T: [{**TEAM, "name": "vision-nodes"}]}, f"{T}[0].name", "team vision-nodes's account would get the Google service-account id 'team-vision-nodes', which the nodes' account (mlplatform:cluster.name) already has; rename one of them", rule="service-account-ids-unique"),
    Case("two teams of one name", {T: [TEAM, {**TEAM, "owner": "b@acme.com"}]}, f"{T}[1].name", "duplicate team 'vision'; team names must be unique", rule="team-names-unique"),
    Case("quota for a gpu no pool has", {T: [{**TEAM, "quota": {"gpus": {"nvidia-h100-80gb": 8}}}]}, f"{T}[0].quota.gpus.nvidia-h100-80gb", "no GPU pool or autoprovisioning limit provides nvidia-h100-80gb; use one of: nvidia-l4", rule="team-gpus-provided"),
    Case("gpu quota on kind", {T: [{**TEAM, "quota": {"gpus": {"nvidia-l4": 1}}}]}, f"{T}[0].quota.gpus.nvidia-l4", "no GPU pool or autoprovisioning limit provides nvidia-l4; use one of: none (this stack has no GPU pools)", base="kind", rule="team-gpus-provided"),
    Case("contributors of one kfam name", {T: [{**TEAM, "contributors": SAME_KFAM_NAME}]}, f"{T}[0].contributors[1].email", "ana-b@x.com and ana.b@x.com (contributors[0]) get one Kubeflow binding name 'user-ana-b-x-com-clusterrole-edit' (KFAM turns every run of characters other than letters and digits into '-'); keep one of them, or give them different roles", rule="contributor-binding-names-unique"),
    Case("groups of one kfam name", {f"{K}.kubeflow.auth.groups": [{"name": "ml.x", "members": ["a@acme.com"]}, {"name": "ml-x", "members": ["b@acme.com"]}], T: [{**TEAM, "contributors": [{"group": "ml.x", "role": "view"}, {"group": "ml-x", "role": "view"}]}]}, f"{T}[0].contributors[1].group", "ml-x and ml.x (contributors[0]) get one Kubeflow binding name 'group-ml-x-clusterrole-view' (KFAM turns every run of characters other than letters and digits into '-'); keep one of them, or give them different roles", rule="contributor-binding-names-unique"),
    Case("group defined nowhere", {f"{K}.kubeflow.auth.groups": [{"name": "ML@acme.com", "members": ["b@acme.com"]}], T: [{**TEAM, "contributors": [{"group": "ml@acme.com", "role": "edit"}]}]}, f"{T}[0].contributors[0].group", f"group ml@acme.com is defined nowhere, so nothing resolves its members: add it to {K}.kubeflow.auth.groups with its source (stack: its members listed; provider: the identity provider's groups claim); the stack defines ML@acme.com (group names are compared exactly)", rule="contributor-groups-defined"),
    Case("group member also a person of that role", {f"{K}.kubeflow.auth.groups": [{"name": "ml@acme.com", "members": ["b@acme.com"]}], T: [{**TEAM, "contributors": [{"email": "b@acme.com", "role": "edit"}, {"group": "ml@acme.com", "role": "edit"}]}]}, f"{T}[0].contributors[1].group", "b@acme.com is a member of group ml@acme.com (edit) and listed as a person with that role (contributors[0]): both would be the binding 'user-b-acme-com-clusterrole-edit'; remove the person's entry (the group grants it), or give the group or the person another role", rule="member-binding-names-free"),
    Case("group members of one kfam name", {**OIDC, f"{K}.kubeflow.auth.groups": [{"name": "ml-a@acme.com", "members": ["ana.b@acme.com"]}, {"name": "ml-b@acme.com", "members": ["ana-b@acme.com"]}], T: [{**TEAM, "contributors": [{"group": "ml-a@acme.com", "role": "edit"}, {"group": "ml-b@acme.com", "role": "edit"}]}]}, f"{T}[0].contributors[1].group", "ana-b@acme.com (group ml-b@acme.com) and ana.b@acme.com (group ml-a@acme.com) get one Kubeflow binding name 'user-ana-b-acme-com-clusterrole-edit' (KFAM turns every run of characters other than letters and digits into '-'); keep one of them in the group, or give the groups different roles", rule="member-binding-names-unique"),
    Case("stack group with google groups for rbac", {f"{C}.securityGroup": "gke-security-groups@acme.com", f"{K}.kubeflow.auth.groups": [{"name": "ml@acme.com", "members": ["a@acme.com"]}], T: [{**TEAM, "contributors": [{"group": "ml@acme.com", "role": "view"}]}]}, f"{K}.kubeflow.auth.groups[0].source", "group ml@acme.com lists its members in the stack, but mlplatform:cluster.securityGroup makes kubectl follow the Google group of that name (Google Groups for RBAC): the two memberships would disagree; use source: cloudIdentity (Google's membership on every surface), or drop securityGroup", rule="stack-groups-not-also-googles"),
    Case("provider group with dex", {f"{K}.kubeflow.auth.groups": [{"name": "ml@acme.com", "source": "provider"}]}, f"{K}.kubeflow.auth.groups[0].source", "group ml@acme.com: with Dex static users there is no identity provider to send groups; the stack is the group's source (source: stack, with its members)", base="kind", rule="groups-can-be-supplied"),
    Case("provider group through google", {**OIDC, f"{K}.kubeflow.auth.groups": [{"name": "ml@acme.com", "source": "provider"}]}, f"{K}.kubeflow.auth.groups[0].source", "group ml@acme.com: this stack signs in with Google, whose ID token carries no groups claim; use source: cloudIdentity (gke: its members read from Cloud Identity at `pulumi up`) or list the group's members with source: stack (docs/teams.md, \"Google Workspace\"; kubectl on GKE follows the Google group itself through mlplatform:cluster.securityGroup)", rule="groups-can-be-supplied"),
    Case("cloud identity group on kind", {f"{K}.kubeflow.auth.groups": [{"name": "ml@acme.com", "source": "cloudIdentity"}]}, f"{K}.kubeflow.auth.groups[0].source", "group ml@acme.com: Cloud Identity is read through the Google provider, on gke stacks only; on kind list the group's members with source: stack", base="kind", rule="groups-can-be-supplied"),
    Case("provider group without the provider's groups", {**OIDC, f"{K}.kubeflow.auth.oidc.issuer": "https://login.acme.com", f"{K}.kubeflow.auth.groups": [{"name": "ml@acme.com", "source": "provider"}]}, f"{K}.kubeflow.auth.groups[0].source", f"group ml@acme.com: this stack's sign-in sends no groups ({K}.kubeflow.auth.oidc.groups is not set); set it (claim, scopes) as docs/teams.md says for your identity provider, or list the members with source: stack", rule="groups-can-be-supplied"),
    Case("group member spelled unlike the dex user", {f"{K}.kubeflow.auth.groups": [{"name": "ml", "members": ["B@acme.com"]}]}, f"{K}.kubeflow.auth.groups[0].members[0]", f"B@acme.com and b@acme.com ({K}.kubeflow.auth.staticUsers[1]) differ only in letter case: Dex and oauth2-proxy take them for one account, but the profile controller, KFAM and Istio compare addresses exactly, and Dex signs static users in as staticUsers writes them; write b@acme.com here too", base="kind", rule="identities-spelled-alike"),
    Case("group member who is no static user", {f"{K}.kubeflow.auth.groups": [{"name": "ml", "members": ["c@acme.com"]}]}, f"{K}.kubeflow.auth.groups[0].members[0]", f"c@acme.com cannot sign in: it is not one of {K}.kubeflow.auth.staticUsers; add it there (with its hash in mlplatform:dexPasswordHashes), or correct the address", base="kind", rule="groups-can-be-supplied"),
    Case("bucket on kind", {T: [{**TEAM, "bucket": {}}]}, f"{T}[0].bucket", "buckets are GCS buckets; only gke stacks have them", base="kind", rule="team-bucket-on-gke"),
    Case("gke team running pipelines without a bucket", {f"{K}.pipelines": {"enabled": True}, T: [TEAM]}, f"{T}[0].bucket", "team vision runs pipelines, whose artifacts go to the team's own bucket on gke; add `bucket: {}` to the team (or disable mlplatform:components.pipelines)", rule="team-pipelines-need-bucket-on-gke"),
    Case("default bucket name too long", {T: [{**TEAM, "name": "a" * 58, "bucket": {}}]}, f"{T}[0].bucket", f"the default bucket name 'acme-test-{'a' * 58}' (<project>-<team>) is not a valid Cloud Storage name: 68 characters; use 3-63 (up to 222 with dots); set bucket.name", rule="team-default-bucket-name-valid"),
    Case("two teams of one bucket", {T: [{**TEAM, "bucket": {"name": "acme-data"}}, {"name": "nlp", "owner": "b@acme.com", "bucket": {"name": "acme-data"}}]}, f"{T}[1].bucket.name", "bucket 'acme-data' is also team vision's (mlplatform:teams[0]); bucket names are global, so each team needs its own: change bucket.name", rule="team-bucket-names-unique"),
    Case("binding name over 253", {**OIDC, f"{K}.kubeflow.auth.allowedEmails": [LONG_EMAIL], T: [{**TEAM, "contributors": [{"email": LONG_EMAIL, "role": "edit"}]}]}, f"{T}[0].contributors[0].email", "KFAM names this contributor's RoleBinding and AuthorizationPolicy user-<e-mail>-clusterrole-<role>: 269 characters, and Kubernetes allows 253; use a shorter address", rule="contributor-binding-names-fit"),
    Case("ray worker of a whole machine", {T: [{**TEAM, "quota": L4_GPUS, "ray": {"pool": "l4", "workerCpu": "24"}}]}, f"{T}[0].ray.workerCpu", "a Ray worker of 24 CPUs never fits a g2-standard-24 node of pool l4: GKE leaves 23.87 of its CPUs to pods; lower workerCpu or use a larger machine type", rule="team-ray-fits-a-node"),
    Case("ray worker memory above the node", {T: [{**TEAM, "quota": L4_GPUS, "ray": {"pool": "l4", "workerMemory": "90Gi"}}]}, f"{T}[0].ray.workerMemory", "a Ray worker of 90.0Gi never fits a g2-standard-24 node of pool l4: GKE leaves 88.5Gi of its memory to pods; lower workerMemory or use a larger machine type", rule="team-ray-fits-a-node"),
    Case("cpu ray worker above autoprovisioning", {T: [{**TEAM, "quota": {"cpu": "300"}, "ray": {"workerCpu": "280"}}]}, f"{T}[0].ray.workerCpu", "a Ray worker of 280 CPUs exceeds autoprovisioning's cluster-wide limit of 256; lower workerCpu", rule="team-ray-fits-a-node"),
    Case("ray head above the team quota", {T: [{**TEAM, "quota": {"cpu": "8", "memory": "4Gi"}, "ray": {"workerCpu": "1", "workerMemory": "1Gi"}}]}, f"{T}[0].ray.headMemory", "a Ray head of 8.0Gi is more than the team's quota on Kueue's default flavor (stackmodel/team_quota.py), 4.0Gi; lower headMemory or raise quota.memory", rule="team-ray-head-within-quota"),
    Case("ray worker above the team quota", {T: [{**TEAM, "quota": {"cpu": "2"}, "ray": {}}]}, f"{T}[0].ray.workerCpu", "a Ray worker of 4 CPUs is more than the team's quota on Kueue's default flavor (stackmodel/team_quota.py), 2; lower workerCpu or raise quota.cpu", rule="team-ray-worker-within-quota"),
    Case("ray gpus above the team quota", {T: [{**TEAM, "quota": {"gpus": {"nvidia-l4": 1}}, "ray": {"pool": "l4"}}]}, f"{T}[0].ray.pool", "a Ray worker on pool l4 takes all 2 GPUs of a node, more than the team's nvidia-l4 quota of 1; raise quota.gpus.nvidia-l4 or pick another pool", rule="team-ray-worker-within-quota"),
    Case("ray on a gpu the team has no quota for", {f"{C}.autoprovisioning.limits.nvidia-h100-80gb": 8, T: [{**TEAM, "quota": {"gpus": {"nvidia-h100-80gb": 8}}, "ray": {"pool": "l4"}}]}, f"{T}[0].ray.pool", "a Ray worker on pool l4 takes 2 nvidia-l4 GPUs, and the team's quota has none of that accelerator (quota.gpus: nvidia-h100-80gb), so no worker is ever admitted; add quota.gpus.nvidia-l4 or pick a pool of an accelerator the team has", rule="team-ray-worker-within-quota"),
    Case(
        "ray on a topology-aware pool",
        {
            f"{P0}.accelerator": "nvidia-h100-80gb",
            f"{P0}.machineType": "a3-highgpu-8g",
            f"{P0}.provisioning": "queued",
            f"{P0}.zones": ["us-central1-a"],
            f"{C}.autoprovisioning": {"enabled": False},
            f"{K}.kueue": {"enabled": True},
            f"{K}.kuberay": {"enabled": True},
            T: [{**TEAM, "quota": {"gpus": {"nvidia-h100-80gb": 8}, "cpu": "256", "memory": "2048Gi"}, "ray": {"pool": "l4"}}],
        },
        f"{T}[0].ray.pool",
        "Kueue places pool l4's a3-highgpu-8g nodes by GKE's topology (docs/gke-cluster.md, Topology-aware scheduling), and Kueue 0.19.2 admits an elastic RayCluster's workers there only with an alpha feature the platform leaves off: they would wait for ever; pick a pool Kueue does not place by topology",
        rule="team-ray-pool-not-topology-aware",
    ),
    Case("ray on a missing pool", {T: [{**TEAM, "ray": {"pool": "h100"}}]}, f"{T}[0].ray.pool", "no GPU pool named 'h100'; use one of: l4", rule="team-ray-pool-exists"),
    Case("ray without kuberay", {f"{K}.kuberay": {"enabled": False}, T: [{**TEAM, "ray": {}}]}, f"{T}[0].ray", "a team Ray cluster needs the kuberay component; enable it", rule="team-ray-needs-kuberay"),
    Case("monitoring without kubeflow", {f"{K}.kubeflow": {"enabled": False}, f"{K}.monitoring": {"enabled": True}}, f"{K}.monitoring.enabled", "Grafana signs people in with the identity the Kubeflow gateway asserts and has no login of its own; enable kubeflow or disable monitoring", rule="grafana-signs-in-through-kubeflow"),
    Case("dex password variable over 253", {f"{K}.kubeflow": {"auth": {"staticUsers": [LONG_EMAIL]}}}, f"{K}.kubeflow.auth.staticUsers[0]", f"its password hash would go into the Secret key DEX_PASSWORD_{'x' * 27}... of 268 characters, and Kubernetes allows 253 (each character other than a letter or digit takes 3); use a shorter address", rule="dex-password-envs-unique"),
    Case("grafana admin outside the oidc domains", {**OIDC, f"{K}.monitoring": {"enabled": True, "grafanaAdmins": ["lead@other.com"]}}, f"{K}.monitoring.grafanaAdmins[0]", f"lead@other.com cannot sign in: its domain is not in {K}.kubeflow.auth.allowedDomains and it is not in allowedEmails; add one of them, or correct the address", base="gke", rule="grafana-admins-can-sign-in"),
    Case("owner who is no static user", {f"{K}.kubeflow": {"auth": {"staticUsers": ["b@acme.com"]}}, T: [TEAM]}, f"{T}[0].owner", f"a@acme.com cannot sign in: it is not one of {K}.kubeflow.auth.staticUsers; add it there (with its hash in mlplatform:dexPasswordHashes), or correct the address", rule="team-people-can-sign-in"),
    Case("contributor who is no static user", {f"{K}.kubeflow": {"auth": {"staticUsers": ["a@acme.com"]}}, T: [{**TEAM, "contributors": [{"email": "b@acme.com", "role": "view"}]}]}, f"{T}[0].contributors[0].email", f"b@acme.com cannot sign in: it is not one of {K}.kubeflow.auth.staticUsers; add it there (with its hash in mlplatform:dexPasswordHashes), or correct the address", rule="team-people-can-sign-in"),
    Case("contributor outside the oidc domains", {**OIDC, T: [{**TEAM, "contributors": [{"email": "ana@gmail.com", "role": "view"}]}]}, f"{T}[0].contributors[0].email", f"ana@gmail.com cannot sign in: its domain is not in {K}.kubeflow.auth.allowedDomains and it is not in allowedEmails; add one of them, or correct the address", base="gke", rule="team-people-can-sign-in"),
    Case("container defaults above the quota", {T: [{**TEAM, "quota": {"cpu": "2"}, "containerDefaults": {"cpu": "3"}}]}, f"{T}[0].containerDefaults.cpu", "the default cpu request 3 is above the team's cpu quota 2, so no container without requests could start; lower it or raise quota.cpu", rule="team-container-defaults-fit-quota"),
    Case("gke without a registry for the notebooks", {f"{C}.imageRegistry": {"enabled": False}}, f"{K}.kubeflow.notebookRegistry", "the notebook images need a registry the nodes pull from; set notebookRegistry, or leave cluster.imageRegistry enabled to use the stack's Artifact Registry repository", rule="notebook-images-have-a-registry"),
    Case("weight without fair sharing", {f"{K}.kueue": {"fairSharing": False}, T: [{**TEAM, "cohort": "r", "weight": 2}, {**TEAM, "name": "nlp", "cohort": "r"}]}, f"{T}[0].weight", f"weight 2 shares the cohort's idle quota by weight, which only Kueue's fair sharing does; set {K}.kueue.fairSharing true or remove the weight", rule="team-weight-needs-fair-sharing"),
    Case("weight without a cohort", {T: [{**TEAM, "weight": 0.5}]}, f"{T}[0].weight", "weight 0.5 weighs the team against the other teams of its cohort, and it has no cohort; set cohort or remove the weight", rule="team-weight-needs-cohort"),
    Case("team pushes images on kind", {T: [{**TEAM, "pushImages": True}]}, f"{T}[0].pushImages", "pushImages grants push to the stack's Artifact Registry repository, which only a gke stack with cluster.imageRegistry enabled has; remove it or enable the registry", base="kind", rule="team-push-images-needs-registry"),
    Case("secrets key in another region", {f"{C}.secretsEncryption": {"key": "projects/acme-sec/locations/europe-west4/keyRings/gke/cryptoKeys/ml"}}, f"{C}.secretsEncryption.key", "the key is in europe-west4, the cluster in us-central1: a control plane that decrypts its Secrets through another location depends on it being up (Google: keep the key in the cluster's location); use a key ring in us-central1", rule="secrets-key-in-cluster-region"),
    Case("host project is the stack's own", {f"{C}.network": {"existing": {"hostProject": "acme-test", "network": "vpc", "subnetwork": "ml", "podsRange": "pods", "servicesRange": "services"}}}, f"{C}.network.existing.hostProject", "acme-test is the stack's own project (gcp:project); remove hostProject, which names a Shared VPC host project", rule="host-project-is-another-project"),
    Case("values for a component that is off", {f"{K}.monitoring": {"enabled": False, "values": {"prometheus": {"prometheusSpec": {"replicas": 2}}}}}, f"{K}.monitoring.values", "monitoring is off here, so no chart takes these values; remove them or enable monitoring", rule="chart-values-reach-a-chart"),
    Case("values for GKE's Ray add-on", {f"{K}.kuberay": {"source": "gke-addon", "values": {"operatorCommand": "x"}}}, f"{K}.kuberay.values", "source gke-addon is GKE's managed Ray operator, not the chart; remove values", rule="chart-values-reach-a-chart"),
    Case("values for NVIDIA's chart on kind", {f"{K}.dcgmExporter": {"values": {"resources": {}}}}, f"{K}.dcgmExporter.values", "dcgmExporter is off here, so no chart takes these values; remove them or enable dcgmExporter", base="kind", rule="chart-values-reach-a-chart"),
    Case("a zone its region does not have", {f"{P0}.zones": ["us-central1-e"]}, f"{C}.gpuPools[0].zones", "'us-central1-e' is not a zone of us-central1 (facts/regions.py lists us-central1-a, us-central1-b, us-central1-c, us-central1-f, as of 2026-12-01): check it against `gcloud compute zones list --filter=region:us-central1`; if Google opened it since, add it to facts/regions.py, or take it knowingly with mlplatform:overrides: {zones: [us-central1-e]}", rule="zones-known"),
    Case("a gke version the channel no longer offers", {f"{C}.minMasterVersion": "1.30"}, f"{C}.minMasterVersion", "1.30 is older than the oldest minor the REGULAR channel offers (1.34 to 1.36, https://docs.cloud.google.com/kubernetes-engine/docs/release-notes, 'Current versions', 'Available minor versions' (read 2026-12-02)), so GKE refuses to create the cluster at it; pick one of 1.34 to 1.36 (`gcloud container get-server-config --flatten=channels --filter=channels.channel=REGULAR`), remove it for the channel's default, or take a newer one knowingly with mlplatform:overrides: {gkeVersions: [\"1.30\"]}", rule="gke-version-offered"),
    Case("cloud sql settings on kind", {f"{K}.pipelines": {"enabled": False, "cloudSql": {"tier": "db-custom-2-7680"}}, f"{K}.pipelines.enabled": True, f"{K}.kubeflow.enabled": True}, f"{K}.pipelines.cloudSql", "cloudSql is the database of a gke stack; on kind Pipelines keeps MySQL in the cluster (its volume: databaseStorage); remove cloudSql", base="kind", rule="pipelines-database-of-the-target"),
    Case("in-cluster database on gke", {f"{K}.pipelines": {"enabled": True, "databaseStorage": "50Gi"}}, f"{K}.pipelines.databaseStorage", "on gke the pipelines database is Cloud SQL (cloudSql.diskSizeGb sizes it), and databaseStorage, the in-cluster MySQL's volume, would be ignored; remove it or set cloudSql.diskSizeGb", rule="pipelines-database-of-the-target"),
    Case("cloud sql without a private path", {f"{K}.pipelines": {"enabled": True, "cloudSql": {"privateServiceAccess": False}}}, f"{K}.pipelines.cloudSql.privateServiceAccess", "the stack creates its network, which has no Private Service Access unless the program makes it, and the Cloud SQL instance has a private IP only: it would have no path to the cluster; remove privateServiceAccess: false (it is for an existing network that has one)", rule="pipelines-database-of-the-target"),
    Case("an object store larger than a disk", {f"{K}.pipelines": {"enabled": True, "objectStoreStorage": "100Ti"}}, f"{K}.pipelines.objectStoreStorage", "100Ti is more than GKE's default StorageClass provisions (a Persistent Disk of at most 64Ti); give at most 64Ti", rule="volumes-fit-the-storage-class"),
    Case("a pod range too small for the pools", {f"{C}.network": {"podsCidr": "10.16.0.0/22"}}, f"{C}.network.podsCidr", "10.16.0.0/22 holds 4 nodes' Pod ranges (a /24 each), and the pools start with 3 nodes: the cluster could not be created; use a larger range".replace("the pools start with 3 nodes: the cluster could not be created; use a larger range", "the pools may grow to 15 nodes (their max per zone times their zones), which they never could; use a larger range or lower the pools' max"), rule="network-holds-the-pools"),
    Case("a subnet too small for the first nodes", {f"{C}.network": {"subnetCidr": "10.0.0.0/29"}, f"{C}.systemPool": {"min": 2}}, f"{C}.network.subnetCidr", "10.0.0.0/29 holds 4 node IPs, and the pools start with 6 nodes: the cluster could not be created; use a larger range", rule="network-holds-the-pools"),
    Case("a group as a team's owner", {**OIDC, f"{K}.kubeflow.auth.groups": [{"name": "ml@acme.com", "members": ["a@acme.com"]}], T: [{**TEAM, "owner": "ml@acme.com"}]}, f"{T}[0].owner", f"ml@acme.com is a group ({K}.kubeflow.auth.groups[0]), and a team's owner is one person; name a person as owner and the group as a contributor, {{group: ml@acme.com, role: admin}}", rule="people-not-groups"),
    Case("a group as a person contributor", {**OIDC, f"{K}.kubeflow.auth.groups": [{"name": "ml@acme.com", "members": ["a@acme.com"]}], T: [{**TEAM, "contributors": [{"email": "ml@acme.com", "role": "edit"}]}]}, f"{T}[0].contributors[0].email", f"ml@acme.com is a group ({K}.kubeflow.auth.groups[0]): as email it is taken for one person, who does not exist; write {{group: ml@acme.com, role: edit}}", rule="people-not-groups"),
    Case("the security group as a grafana admin", {**OIDC, f"{C}.securityGroup": "gke-security-groups@acme.com", f"{K}.monitoring": {"enabled": True, "grafanaAdmins": ["gke-security-groups@acme.com"]}}, f"{K}.monitoring.grafanaAdmins[0]", f"gke-security-groups@acme.com is a group ({C}.securityGroup), and Grafana admins are people (the gateway asserts a person); list the group's members here instead", rule="people-not-groups"),
    Case("a ray cluster named like the object store's secret", {T: [{**TEAM, "ray": {"name": "mlpipeline-minio-artifact"}}]}, f"{T}[0].ray.name", "KubeRay names the Ray cluster's token Secret after the cluster, and 'mlpipeline-minio-artifact' is the Secret with the team's keys to Pipelines' in-cluster object store (components/team_pipelines.py OBJECT_STORE_SECRET, the name KFP's launcher and Argo read) in every team namespace: one would overwrite the other; pick another name, e.g. ray", base="kind", rule="team-ray-name-free"),
    Case("kind's notebook registry on gke", {f"{K}.kubeflow.notebookRegistry": "localhost/mlplatform"}, f"{K}.kubeflow.notebookRegistry", "'localhost/mlplatform' is a registry on the machine itself (kind's `make notebook-images` loads images there); a GKE node would ask itself for the image; remove the key to use the stack's Artifact Registry repository, or name a registry the nodes reach", rule="notebook-registry-reachable"),
    Case("a mirror in a region that does not exist", {"mlplatform:images": {"mirror": "europe-west99-docker.pkg.dev/acme-ml/mirror"}}, "mlplatform:images.mirror", "'europe-west99' is not a Google Cloud region facts/regions.py knows (as of 2026-12-01) (did you mean europe-west9 or europe-west8?): check the spelling against `gcloud compute regions list`; if Google opened it since, add it to facts/regions.py, or take it knowingly with mlplatform:overrides: {regions: [europe-west99]}", rule="regions-known"),
    Case("dra driver without a dra pool", {f"{K}.nvidiaDraDriver": {"enabled": True}}, f"{K}.nvidiaDraDriver.enabled", "NVIDIA's DRA driver and GKE's driver installer serve the pools with gpuAllocation: dra, and no GPU pool has gpuAllocation: dra: the installer's DaemonSet would select no node, which the API server refuses; remove nvidiaDraDriver.enabled (it is on by itself where a pool has gpuAllocation: dra)", rule="dra-driver-has-dra-pools"),
    Case("dra driver on kind", {f"{K}.nvidiaDraDriver": {"enabled": True}}, f"{K}.nvidiaDraDriver.enabled", "NVIDIA's DRA driver and GKE's driver installer serve the pools with gpuAllocation: dra, and this kind cluster has no GPUs: the installer's DaemonSet would select no node, which the API server refuses; remove nvidiaDraDriver.enabled (it is on by itself where a pool has gpuAllocation: dra)", base="kind", rule="dra-driver-has-dra-pools"),
    Case("gpu fabric without a fabric pool", {f"{K}.gpuFabric": {"enabled": True}}, f"{K}.gpuFabric.enabled", "the GPU fabric (multi-networking objects, NCCL plugin installers) is for pools with network tcpxo or rdma, and no GPU pool has network tcpxo or rdma, so it would install nothing; remove gpuFabric.enabled (it is on by itself where a pool has a fabric)", rule="gpu-fabric-has-fabric-pools"),
    Case("gpu fabric on kind", {f"{K}.gpuFabric": {"enabled": True}}, f"{K}.gpuFabric.enabled", "the GPU fabric (multi-networking objects, NCCL plugin installers) is for pools with network tcpxo or rdma, and this kind cluster has no GPU pools, so it would install nothing; remove gpuFabric.enabled (it is on by itself where a pool has a fabric)", base="kind", rule="gpu-fabric-has-fabric-pools"),
    Case("ray on a dra pool", {f"{C}.autoprovisioning": {"enabled": False}, f"{P0}.gpuAllocation": "dra", T: [{**TEAM, "ray": {"pool": "l4"}, "quota": L4_GPUS}]}, f"{T}[0].ray.pool", "pool l4 gives its GPUs through DRA claims, and the Ray workers ask for nvidia.com/gpu, which its nodes do not advertise (GKE's device plugin is off on a DRA pool): they would never start; use a pool with gpuAllocation: device-plugin (none in this stack)", rule="team-ray-pool-advertises-gpus"),
    Case(
        "a3 ultra on gke's default driver before it is r550",
        {f"{C}.autoprovisioning": {"enabled": False}, f"{P0}.accelerator": "nvidia-h200-141gb", f"{P0}.machineType": "a3-ultragpu-8g", f"{P0}.driverVersion": "DEFAULT",
         f"{C}.minMasterVersion": "1.31.4-gke.1200000", "mlplatform:overrides": {"gkeVersions": ["1.31.4-gke.1200000"]}},
        f"{C}.gpuPools[0].driverVersion",
        "pool l4's nvidia-h200-141gb GPUs need driver R550, which GKE's DEFAULT installation gives only on GKE 1.31.5-gke.1169000 or later in 1.31; the cluster is created at 1.31.4-gke.1200000 (minMasterVersion): use driverVersion: LATEST (the default; remove the key) or raise minMasterVersion",
        rule="gpu-drivers-fit-the-gke-version",
    ),
    Case("idle period past the retention", {f"{K}.monitoring": {"enabled": True, "retention": "3h"}, f"{K}.dcgmExporter": {}, f"{K}.idleReclaim": {"enabled": True}}, f"{K}.idleReclaim.period", "the idle reclaim judges 4h of samples (and 2 minutes before them), and the stack's Prometheus keeps 3h (monitoring.retention): no notebook could ever be idle that long to it; shorten idleReclaim.period or lengthen monitoring.retention", rule="idle-reclaim-period-within-retention"),
    Case(
        "idle reclaim on mig slices through gke's managed dcgm",
        {f"{C}.managedPrometheus": True, f"{K}.monitoring": {"enabled": True, "backend": "gke-managed"}, f"{K}.dcgmExporter": {"source": "gke-managed"}, f"{K}.idleReclaim": {"enabled": True},
         f"{P0}.accelerator": "nvidia-tesla-a100", f"{P0}.machineType": "a2-highgpu-1g", f"{P0}.sharing": {"strategy": "mig", "partitionSize": "1g.5gb"},
         f"{C}.autoprovisioning.limits": {"cpu": 256, "memory": 1024, "nvidia-tesla-a100": 12}},
        f"{C}.gpuPools[0].sharing",
        "pool l4's GPUs are MIG slices, whose utilisation the idle reclaim reads from DCGM_FI_PROF_GR_ENGINE_ACTIVE, which GKE's managed DCGM collection is not known to report per slice: it could stop a busy notebook or never an idle one; use dcgmExporter.source: chart, or remove idleReclaim.enabled (it is off by default on such a stack)",
        rule="idle-reclaim-reads-mig-slices",
    ),
    Case("idle reclaim on kind", {f"{K}.idleReclaim": {"enabled": True}}, f"{K}.idleReclaim.enabled", "idle reclaim needs monitoring (the Prometheus it reads) and dcgmExporter (the GPUs' utilisation; kind has no GPUs); enable them or remove idleReclaim.enabled", base="kind", rule="idle-reclaim-can-judge"),
    Case(
        "serving scales to zero on prod",
        {**PROD, f"{K}.monitoring": {"enabled": True}, f"{K}.serving": {"enabled": True, "replicas": {"minReplicas": 0}}},
        f"{K}.serving.replicas.minReplicas",
        "0 on a prod stack: a model scaled to zero answers its first request only after a replica starts; use 1 or more on prod (zero is for dev, staging and ci)",
        rule="serving-scale-to-zero-off-prod",
    ),
    Case(
        "serving scales to zero where KEDA reads no signal",
        {f"{C}.managedPrometheus": True, f"{K}.monitoring": {"enabled": True, "backend": "gke-managed"}, f"{K}.dcgmExporter": {"source": "gke-managed"},
         f"{K}.serving": {"enabled": True, "replicas": {"minReplicas": 0}}},
        f"{K}.serving.replicas.minReplicas",
        "0 with monitoring.backend gke-managed: the serving and wake signals are scraped for kube-prometheus-stack's Prometheus only, so a model at zero would never wake; use minReplicas 1 or more, or monitoring on kube-prometheus-stack",
        rule="serving-zero-needs-its-signals",
    ),
    Case("team pushes images without the registry", {f"{C}.imageRegistry": {"enabled": False}, f"{K}.kubeflow.notebookRegistry": "ghcr.io/acme/ml", T: [{**TEAM, "pushImages": True}]}, f"{T}[0].pushImages", "pushImages grants push to the stack's Artifact Registry repository, which only a gke stack with cluster.imageRegistry enabled has; remove it or enable the registry", rule="team-push-images-needs-registry"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_rule_reports_exactly_its_problem(case: Case) -> None:
    rule = next(r for r in RULES if r.name == case.rule)
    assert rule.problems(PlatformConfig.model_validate(case.stack())) == [(case.path, case.message)]
    with pytest.raises(ConfigError) as caught:
        validate(case.stack(), "bad.yaml")
    assert [(p.path, p.message) for p in caught.value.problems] == [(case.path, case.message)]


WARNING_CASES = [
    Case(
        "a dra pool's gpu metrics without a team",
        {f"{C}.autoprovisioning": {"enabled": False}, f"{P0}.gpuAllocation": "dra", f"{K}.dcgmExporter": {"enabled": True}},
        f"{C}.gpuPools[0].gpuAllocation",
        "pool l4's GPUs are given through DRA, and the DCGM exporter of this release attributes DRA GPUs to pods only through "
        "resource.k8s.io/v1beta1 ResourceSlices, which GKE does not serve: their metrics carry no pod or team, so per-team "
        "dashboards, GPU-hours and the idle-GPU alert leave this pool's work out (docs/observability.md, \"GPUs through DRA\"); "
        "use gpuAllocation: device-plugin where that matters",
        rule="gpu-metrics-of-dra-pools-carry-no-team",
    ),
    Case("a cohort no other team names", {T: [{**TEAM, "cohort": "reserch"}, {**TEAM, "name": "nlp", "owner": "b@acme.com", "cohort": "research"}, {**TEAM, "name": "cv", "owner": "b@acme.com", "cohort": "research"}]}, f"{T}[0].cohort", "no other team names cohort 'reserch', so team vision borrows from and lends to nobody (a typo of another team's cohort?)", rule="cohort-shared"),
    Case("a ray cluster that keeps idle gpu workers", {**OIDC, f"{K}.monitoring": {"enabled": True}, f"{K}.dcgmExporter": {"enabled": True}, T: [{**TEAM, "quota": L4_GPUS, "ray": {"pool": "l4", "minWorkers": 1}}]}, f"{T}[0].ray.minWorkers", "team vision's Ray cluster keeps 1 GPU worker(s) of pool l4 even when idle, while the idle reclaim gives idle notebook GPUs back; set minWorkers: 0 for its autoscaler to remove idle GPU workers (Ray then starts them again for the next task)", rule="ray-gpu-workers-scale-to-zero"),
    Case("a labelled pool kueue cannot place by topology", {f"{P0}.accelerator": "nvidia-h100-mega-80gb", f"{P0}.machineType": "a3-megagpu-8g", "mlplatform:cluster.autoprovisioning": {"enabled": False}}, "mlplatform:cluster.gpuPools[0]", "pool l4's a3-megagpu-8g nodes carry GKE's topology labels, but its nodes come only for pods Kueue has admitted and Kueue's topology-aware scheduling counts only nodes that exist: its jobs are placed without topology. For block and sub-block placement set min equal to max (a fixed pool, e.g. on a reservation) or provisioning: queued", rule="topology-labels-unused"),
    Case("a pods-ready timeout a queued pool cannot meet", {f"{P0}.provisioning": "queued", f"{K}.kueue": {"waitForPodsReady": {"timeout": "5m"}}}, f"{K}.kueue.waitForPodsReady.timeout", "5m is shorter than a queued pool (l4) can have its pods ready: its nodes boot, install the GPU driver and pull images only after Kueue admits the workload, and cluster autoscaler alone gives its pods 10m; such workloads would be evicted again and again", rule="queued-pools-can-get-ready"),
]


@pytest.mark.parametrize("case", WARNING_CASES, ids=[c.id for c in WARNING_CASES])
def test_warning_reports_exactly_its_problem_and_the_stack_still_validates(case: Case) -> None:
    rule = next(r for r in WARNINGS if r.name == case.rule)
    config = validate(case.stack(), "ok.yaml")
    assert rule.problems(config) == [(case.path, case.message)]
    assert warnings(config) == [(case.path, case.message)]


def test_every_warning_has_a_case() -> None:
    assert sorted({r.name for r in WARNINGS} - {c.rule for c in WARNING_CASES}) == []


def test_a_prod_gpu_pool_may_keep_nodes() -> None:
    changes = {**PROD, f"{P0}.min": 1}
    assert cross_checks(PlatformConfig.model_validate(with_changes(base_gke(), changes))) == []


def test_every_rule_has_a_case() -> None:
    names = [r.name for r in RULES]
    assert len(set(names)) == len(names), "rule names must be unique"
    assert sorted(set(names) - {c.rule for c in CASES}) == []
    assert all(r.description.strip() for r in RULES)


def test_problems_are_listed_rule_by_rule_then_team_by_team() -> None:
    teams = [{**TEAM, "bucket": {}, "ray": {}}, {**TEAM, "owner": "b@acme.com", "bucket": {}}]
    changes = {"mlplatform:environment": "prod", f"{K}.kuberay": {"enabled": False}, T: teams}
    config = PlatformConfig.model_validate(with_changes(base_kind(), changes))
    assert [path for path, _ in cross_checks(config)] == [
        "mlplatform:environment",
        f"{T}[0].bucket",
        f"{T}[0].ray",
        f"{T}[1].name",
        f"{T}[1].bucket",
    ]


def test_allowed_emails_and_domains_let_people_sign_in() -> None:
    """An OIDC stack's people pass by domain or by address."""
    team = {**TEAM, "contributors": [{"email": "guest@partner.org", "role": "view"}]}
    validate(with_changes(base_gke(), {**OIDC, T: [team]}), "ok")


@pytest.mark.parametrize(
    "changes",
    [
        {f"{C}.location": "us-central9", "mlplatform:overrides": {"regions": ["us-central9"]}},
        {f"{C}.systemPool": {"machineType": "c4-standard-8"}, "mlplatform:overrides": {"machineTypes": ["c4-standard-8"]}},
        {**OIDC, f"{K}.kubeflow.auth.oidc.issuer": "https://acme.eu.auth0.com/", "mlplatform:overrides": {"oidcIssuers": ["https://acme.eu.auth0.com/"]}},
    ],
    ids=["region", "machine type", "issuer with a slash"],
)
def test_a_value_the_catalogs_do_not_know_passes_when_taken_knowingly(changes: dict[str, object]) -> None:
    validate(with_changes(base_gke(), changes), "ok")


def test_an_override_takes_exactly_its_value() -> None:
    changes = {f"{C}.location": "us-central9", "mlplatform:overrides": {"regions": ["us-central8"]}}
    with pytest.raises(ConfigError) as caught:
        validate(with_changes(base_gke(), changes), "bad.yaml")
    assert [p.path for p in caught.value.problems] == [f"{C}.location"]


def test_two_static_users_of_one_password_variable_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """The names are injective by construction; should that ever break, the rule still
    refuses the stack. Shown with the lossy names of before (upper-cased, every run of
    other characters one `_`)."""
    import re

    import stackmodel.rules.auth

    monkeypatch.setattr(stackmodel.rules.auth, "dex_password_env", lambda e: "DEX_PASSWORD_" + re.sub(r"[^A-Z0-9]+", "_", e.upper()))
    stack = with_changes(base_kind(), {f"{K}.kubeflow": {"auth": {"staticUsers": ["ana.b@x.com", "ana-b@x.com"]}}})
    rule = next(r for r in RULES if r.name == "dex-password-envs-unique")
    assert rule.problems(PlatformConfig.model_validate(stack)) == [
        (
            f"{K}.kubeflow.auth.staticUsers[1]",
            "ana-b@x.com and staticUsers[0] ana.b@x.com would read their password hash from one environment variable "
            "DEX_PASSWORD_ANA_B_X_COM, so either password would sign in as both; report this as a bug of "
            "facts/naming.py dex_password_env",
        )
    ]


def test_the_secret_names_a_ray_cluster_may_not_take_are_the_ones_the_program_writes() -> None:
    from components.team_pipelines import OBJECT_STORE_SECRET
    from facts.naming import TEAM_NAMESPACE_SECRETS

    assert set(TEAM_NAMESPACE_SECRETS) == {OBJECT_STORE_SECRET}
