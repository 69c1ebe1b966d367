"""Bad stack files stop at the schema with the path, the value and the fix, all at once."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from facts.gpu_catalog import HYPERDISK_BALANCED_MAX_GB, HYPERDISK_BALANCED_MIN_GB
from stackmodel.config import ConfigError, validate
from tests.conftest import base_gke, base_kind, with_changes
from tests.support.cases import Case

C = "mlplatform:cluster"
P0 = f"{C}.gpuPools.0"
M = "mlplatform:components.monitoring"
K = "mlplatform:components"
T = "mlplatform:teams"
TEAM = {"name": "vision", "owner": "a@acme.com"}
OIDC_AUTH = {
    f"{K}.kubeflow.auth": {"kind": "oidc", "oidc": {"clientId": "x"}, "hostname": "kf.acme.com", "allowedDomains": ["acme.com"]}
}


NET = f"{C}.network.existing"
EXISTING = {"hostProject": "acme-net", "network": "shared-vpc", "subnetwork": "ml-us-central1", "podsRange": "pods", "servicesRange": "services"}
MW = f"{C}.maintenance.window"
MX = f"{C}.maintenance.exclusions[0]"
WINDOW = {"start": "2026-01-03T02:00:00Z", "end": "2026-01-03T08:00:00Z", "recurrence": "FREQ=DAILY"}
FREEZE = {"name": "year-end", "start": "2026-12-20T00:00:00Z", "end": "2027-01-04T00:00:00Z"}
KEY = "projects/acme-sec/locations/us-central1/keyRings/gke/cryptoKeys/ml-secrets"


def pool(**fields: Any) -> dict[str, Any]:
    return {"name": "x", "accelerator": "nvidia-l4", "machineType": "g2-standard-8", "max": 1, **fields}


CASES = [
    Case("wrong type for max", {f"{P0}.max": "lots"}, f"{C}.gpuPools[0].max", "Input should be a valid integer (got 'lots')"),
    Case("negative max", {f"{P0}.max": -1}, f"{C}.gpuPools[0].max", "greater than or equal to 1"),
    Case("negative min", {f"{P0}.min": -2}, f"{C}.gpuPools[0].min", "greater than or equal to 0"),
    Case("min above max", {f"{P0}.min": 3}, f"{C}.gpuPools[0].min", "min 3 is above max 2"),
    Case("unknown accelerator", {f"{P0}.accelerator": "nvidia-l5"}, f"{C}.gpuPools[0].accelerator", "unknown accelerator 'nvidia-l5'; use one of nvidia-tesla-t4"),
    Case("machine cannot carry gpu", {f"{P0}.machineType": "n2-standard-8"}, f"{C}.gpuPools[0].machineType", "'n2-standard-8' cannot carry nvidia-l4; use one of g2-standard-4 … g2-standard-96"),
    Case("h100 on g2", {f"{P0}.accelerator": "nvidia-h100-80gb"}, f"{C}.gpuPools[0].machineType", "cannot carry nvidia-h100-80gb; use one of a3-highgpu-1g, a3-highgpu-2g"),
    Case("duplicate pool names", {f"{C}.gpuPools": [pool(name="a"), pool(name="a")]}, f"{C}.gpuPools[1].name", "duplicate pool name 'a'"),
    Case("pool named system", {f"{C}.gpuPools": [pool(name="system")]}, f"{C}.gpuPools[0].name", "'system' is the system pool's name"),
    Case("pool named default", {f"{C}.gpuPools": [pool(name="default")]}, f"{C}.gpuPools[0].name", "'default' is the name of Kueue's ResourceFlavor for CPU-only nodes; pick another pool name"),
    Case("bad pool name", {f"{P0}.name": "L4_Pool"}, f"{C}.gpuPools[0].name", "'L4_Pool' is not a valid name"),
    Case("missing project", {"gcp:project": None}, "gcp:project", "a gke cluster needs the GCP project"),
    Case("missing cluster", {C: None}, C, "required; add this key"),
    Case("unknown cluster kind", {f"{C}.kind": "eks"}, f"{C}.kind", "cluster kind must be 'gke' or 'kind' (got 'eks')"),
    Case("misspelt key", {f"{C}.gpuPool": []}, f"{C}.gpuPool", "unknown key; known keys here: kind, name, location"),
    Case("misspelt pool key", {f"{P0}.acelerator": "nvidia-l4"}, f"{C}.gpuPools[0].acelerator", "unknown key; known keys here: name, accelerator"),
    Case("bad location", {f"{C}.location": "mars"}, f"{C}.location", "'mars' is neither a GCP region"),
    Case("bad provisioning", {f"{P0}.provisioning": "cheap"}, f"{C}.gpuPools[0].provisioning", "'on-demand', 'spot', 'queued', 'flex-start' or 'reservation'"),
    Case("queued t4", {f"{C}.gpuPools": [pool(accelerator="nvidia-tesla-t4", machineType="n1-standard-8", provisioning="queued")]}, f"{C}.gpuPools[0].provisioning", "queued is not offered for nvidia-tesla-t4"),
    Case("queued pool min", {f"{P0}.provisioning": "queued", f"{P0}.min": 1}, f"{C}.gpuPools[0].min", "queued pools start empty; set min to 0"),
    Case("queued pool without kueue", {f"{P0}.provisioning": "queued", "mlplatform:components.kueue": {"enabled": False}}, f"{C}.gpuPools[0].provisioning", "queued pools get nodes only through ProvisioningRequests, which Kueue creates; enable the kueue component or use provisioning: flex-start"),
    Case("reservation without name", {f"{P0}.provisioning": "reservation"}, f"{C}.gpuPools[0].reservation", "set reservation (the reservation's name)"),
    Case("compact without zone", {f"{P0}.compactPlacement": True}, f"{C}.gpuPools[0].zones", "set zones to exactly one zone"),
    Case("compact on n1", {f"{C}.gpuPools": [pool(accelerator="nvidia-tesla-t4", machineType="n1-standard-8", compactPlacement=True, zones=["us-central1-a"])]}, f"{C}.gpuPools[0].compactPlacement", "n1 machines do not support compact placement"),
    Case("zone outside region", {f"{P0}.zones": ["europe-west4-a"]}, f"{C}.gpuPools[0].zones", "zone 'europe-west4-a' is outside the cluster's region us-central1"),
    Case("zone of a longer region", {f"{C}.location": "europe-west1", f"{P0}.zones": ["europe-west10-a"]}, f"{C}.gpuPools[0].zones", "zone 'europe-west10-a' is outside the cluster's region europe-west1 (it is in europe-west10); use zones of europe-west1"),
    Case("region as a zone", {f"{P0}.zones": ["us-central1"]}, f"{C}.gpuPools[0].zones", "'us-central1' is a region, its zones are us-central1-<letter>"),
    Case("zone twice", {f"{P0}.zones": ["us-central1-a", "us-central1-a"]}, f"{C}.gpuPools[0].zones", "zone 'us-central1-a' is listed twice; keep one"),
    Case("no zones", {f"{P0}.zones": []}, f"{C}.gpuPools[0].zones", "an empty zone list leaves the pool nowhere"),
    Case("bad reservation name", {f"{P0}.provisioning": "reservation", f"{P0}.reservation": "My_Reservation"}, f"{C}.gpuPools[0].reservation", "'My_Reservation' is not a reservation name: 1-63 lowercase letters, digits and '-', a letter first"),
    Case("bad project id", {"gcp:project": "Acme_ML"}, "gcp:project", "'Acme_ML' is not a GCP project ID: 6-30 lowercase letters, digits and '-', a letter first, no '-' last"),
    Case("project number for id", {"gcp:project": "123456789012"}, "gcp:project", "(the project ID, not its number)"),
    Case("hostname as a url", {"mlplatform:components.kubeflow": {"auth": {"hostname": "https://kubeflow.acme.com/"}}}, "mlplatform:components.kubeflow.auth.hostname", "'https://kubeflow.acme.com/' is a URL; give the hostname alone, e.g. 'kubeflow.acme.com'"),
    Case("hostname with a port", {"mlplatform:components.kubeflow": {"auth": {"hostname": "kubeflow.acme.com:443"}}}, "mlplatform:components.kubeflow.auth.hostname", "has a port; give the hostname alone"),
    Case("wildcard hostname", {"mlplatform:components.kubeflow": {"auth": {"hostname": "*.acme.com"}}}, "mlplatform:components.kubeflow.auth.hostname", "is not a DNS hostname such as kubeflow.example.com"),
    Case("issuer without scheme", {"mlplatform:components.kubeflow": {"auth": {"kind": "oidc", "hostname": "kf.acme.com", "oidc": {"issuer": "accounts.google.com", "clientId": "x"}}}}, "mlplatform:components.kubeflow.auth.oidc.issuer", "'accounts.google.com' has no scheme; an OIDC issuer is an https URL, e.g. 'https://accounts.google.com'"),
    Case("issuer over http", {"mlplatform:components.kubeflow": {"auth": {"kind": "oidc", "hostname": "kf.acme.com", "oidc": {"issuer": "http://dex.acme.com", "clientId": "x"}}}}, "mlplatform:components.kubeflow.auth.oidc.issuer", "an OIDC issuer is an https URL"),
    Case("fast socket without gvnic", {f"{P0}.fastSocket": True, f"{P0}.gvnic": False}, f"{C}.gpuPools[0].fastSocket", "needs gvnic: true"),
    Case("mig on l4", {f"{P0}.sharing": {"strategy": "mig", "partitionSize": "1g.10gb"}}, f"{C}.gpuPools[0].sharing", "not a MIG profile of nvidia-l4; use one of none"),
    Case("time-sharing without clients", {f"{P0}.sharing": {"strategy": "time-sharing"}}, f"{C}.gpuPools[0].sharing.maxSharedClients", "time-sharing needs maxSharedClients"),
    Case("nap limit by resource name", {f"{C}.autoprovisioning.limits": {"cpu": 1, "memory": 1, "nvidia.com/gpu": 4}}, f"{C}.autoprovisioning.limits.nvidia.com/gpu", "(NAP uses accelerator names)"),
    Case("nap missing cpu", {f"{C}.autoprovisioning.limits": {"memory": 1, "nvidia-l4": 8}}, f"{C}.autoprovisioning.limits", "needs limits for cpu"),
    Case("nap does not cover pool", {f"{C}.autoprovisioning.limits": {"cpu": 64, "memory": 256}}, f"{C}.autoprovisioning.limits.nvidia-l4", "can grow to 12 nvidia-l4 GPUs but the limit is missing; set it to at least 12"),
    Case("nap limit below pools", {f"{C}.autoprovisioning.limits.nvidia-l4": 2}, f"{C}.autoprovisioning.limits.nvidia-l4", "limit is 2; set it to at least 12"),
    Case("overlapping ranges", {f"{C}.network": {"podsCidr": "10.0.0.0/14"}}, f"{C}.network.podsCidr", "overlaps subnetCidr 10.0.0.0/20"),
    Case("master range size", {f"{C}.network": {"masterCidr": "172.16.0.0/24"}}, f"{C}.network.masterCidr", "must be a /28"),
    Case("bad authorized cidr", {f"{C}.masterAuthorizedNetworks": [{"cidr": "10.0.0.300/24", "name": "x"}]}, f"{C}.masterAuthorizedNetworks[0].cidr", "valid IPv4 network"),
    Case("bad environment", {"mlplatform:environment": "production"}, "mlplatform:environment", "'dev', 'staging', 'prod' or 'ci'"),
    Case("prod on kind", {"mlplatform:environment": "prod"}, "mlplatform:environment", "a kind cluster is never prod", base="kind"),
    Case("kind workers", {f"{C}.workers": 0}, f"{C}.workers", "greater than or equal to 1", base="kind"),
    Case("kind unknown key", {f"{C}.gpuPools": []}, f"{C}.gpuPools", "unknown key; known keys here: kind, name, workers", base="kind"),
    Case("team reserved name", {"mlplatform:teams": [{"name": "kubeflow", "owner": "a@acme.com"}]}, "mlplatform:teams[0].name", "'kubeflow' is a namespace the platform owns; pick another team name"),
    Case("team bad email", {"mlplatform:teams": [{"name": "vision", "owner": "lead-at-acme.com"}]}, "mlplatform:teams[0].owner", "'lead-at-acme.com' is not an e-mail address such as ana@acme.com"),
    Case("team duplicate", {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com"}, {"name": "vision", "owner": "b@acme.com"}]}, "mlplatform:teams[1].name", "duplicate team 'vision'"),
    Case("owner also contributor", {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "contributors": [{"email": "A@acme.com", "role": "edit"}]}]}, "mlplatform:teams[0].contributors[0].email", "A@acme.com is the owner"),
    Case("contributor twice", {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "contributors": [{"email": "b@acme.com", "role": "edit"}, {"email": "b@acme.com", "role": "view"}]}]}, "mlplatform:teams[0].contributors[1].email", "b@acme.com is listed twice"),
    Case("contributors with one KFAM name", {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "contributors": [{"email": "ana.b@x.com", "role": "edit"}, {"email": "ana-b@x.com", "role": "edit"}]}]}, "mlplatform:teams[0].contributors[1].email", "ana-b@x.com and ana.b@x.com (contributors[0]) get one Kubeflow binding name 'user-ana-b-x-com-clusterrole-edit' (KFAM turns every run of characters other than letters and digits into '-'); keep one of them, or give them different roles"),
    Case("contributor role", {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "contributors": [{"email": "b@acme.com", "role": "admin"}]}]}, "mlplatform:teams[0].contributors[0].role", "'edit' or 'view'"),
    Case("contributor person and group at once", {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "contributors": [{"email": "b@acme.com", "group": "ml", "role": "edit"}]}]}, "mlplatform:teams[0].contributors[0].group", "a contributor is a person ({email: ana@acme.com, role: edit}) or a group ({group: ml-vision@acme.com, role: edit}): give one of email and group"),
    Case("contributor neither person nor group", {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "contributors": [{"role": "edit"}]}]}, "mlplatform:teams[0].contributors[0].email", "give one of email and group"),
    Case("group twice in a team", {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "contributors": [{"group": "ml", "role": "edit"}, {"group": "ml", "role": "view"}]}]}, "mlplatform:teams[0].contributors[1].group", "ml is listed twice (also at contributors[0]); keep one entry"),
    Case("group name with a comma", {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "contributors": [{"group": "ml,ops", "role": "edit"}]}]}, "mlplatform:teams[0].contributors[0].group", "',' splits the kubeflow-groups header"),
    Case("unknown group source", {"mlplatform:components.kubeflow.auth.groups": [{"name": "ml@acme.com", "source": "ldap", "members": ["b@acme.com"]}]}, "mlplatform:components.kubeflow.auth.groups[0].source", "'ldap'"),
    Case("stack group without members", {"mlplatform:components.kubeflow.auth.groups": [{"name": "ml@acme.com"}]}, "mlplatform:components.kubeflow.auth.groups[0].members", "group ml@acme.com (source stack) has no members; list them (members: [ana@acme.com, ...]), or take the group from the identity provider (source: provider, with auth.oidc.groups)"),
    Case("group of kubernetes' own", {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "contributors": [{"group": "system:authenticated", "role": "view"}]}]}, "mlplatform:teams[0].contributors[0].group", "groups named system:* are Kubernetes' own (system:authenticated is everyone the API server accepts)"),
    Case("group defined twice", {"mlplatform:components.kubeflow.auth.groups": [{"name": "ml", "members": ["b@acme.com"]}, {"name": "ML", "members": ["b@acme.com"]}]}, "mlplatform:components.kubeflow.auth.groups[1]", "group names differ in more than letter case"),
    Case("groups from google's token", {"mlplatform:components.kubeflow.auth": {"kind": "oidc", "oidc": {"clientId": "x", "groups": {}}, "allowedDomains": ["acme.com"]}}, "mlplatform:components.kubeflow.auth.oidc.groups", "Google's ID token carries no groups claim"),
    Case("dex's default scope as a groups scope", {"mlplatform:components.kubeflow.auth": {"kind": "oidc", "oidc": {"issuer": "https://login.acme.com", "clientId": "x", "groups": {"scopes": ["email"]}}, "allowedDomains": ["acme.com"]}}, "mlplatform:components.kubeflow.auth.oidc.groups.scopes[0]", "Dex always asks for openid, profile and email; remove it"),
    Case("security group of another name", {"mlplatform:cluster.securityGroup": "ml-admins@acme.com"}, "mlplatform:cluster.securityGroup", "GKE reads only the group named gke-security-groups@<your domain> (e.g. gke-security-groups@acme.com)"),
    Case("quota for absent gpu", {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "quota": {"gpus": {"nvidia-h100-80gb": 8}}}]}, "mlplatform:teams[0].quota.gpus.nvidia-h100-80gb", "no GPU pool or autoprovisioning limit provides nvidia-h100-80gb; use one of: nvidia-l4"),
    Case("negative quota", {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "quota": {"gpus": {"nvidia-l4": -1}}}]}, "mlplatform:teams[0].quota.gpus.nvidia-l4", "Input should be greater than or equal to 0 (got -1)"),
    Case("kubeflow without istio", {"mlplatform:components": {"kubeflow": {"enabled": True}, "istio": {"enabled": False}}}, "mlplatform:components.istio.enabled", "kubeflow needs istio; enable istio or disable kubeflow"),
    Case("trainer without jobset", {"mlplatform:components": {"kubeflow": {"enabled": False}, "jobset": {"enabled": False}}}, "mlplatform:components.jobset.enabled", "trainer needs jobset"),
    Case("ray addon on kind", {"mlplatform:components.kuberay": {"enabled": False, "source": "gke-addon"}}, "mlplatform:components.kuberay.source", "on kind use source: operator", base="kind"),
    Case("dcgm on kind", {"mlplatform:components.dcgmExporter": {"enabled": True}}, "mlplatform:components.dcgmExporter.enabled", "kind clusters have no GPUs", base="kind"),
    Case("managed dcgm without managed prometheus", {"mlplatform:components.dcgmExporter": {"source": "gke-managed"}}, "mlplatform:components.dcgmExporter.source", "need cluster.managedPrometheus: true"),
    Case("oidc without settings", {"mlplatform:components.kubeflow": {"enabled": False, "auth": {"kind": "oidc"}}}, "mlplatform:components.kubeflow.auth.oidc", "kind oidc needs oidc"),
    Case("hostname on kind", {"mlplatform:components.kubeflow": {"enabled": False, "auth": {"hostname": "kf.acme.com"}}}, "mlplatform:components.kubeflow.auth", "on kind remove them", base="kind"),
    Case("bad retention", {"mlplatform:components.monitoring": {"enabled": False, "retention": "two weeks"}}, "mlplatform:components.monitoring.retention", "'two weeks' is not a Prometheus retention such as 15d"),
    Case("idle threshold above 100", {"mlplatform:components.monitoring": {"enabled": False, "idleGpuThreshold": 150}}, "mlplatform:components.monitoring.idleGpuThreshold", "less than or equal to 100"),
    Case("ray on missing pool", {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "ray": {"pool": "h100"}}]}, "mlplatform:teams[0].ray.pool", "no GPU pool named 'h100'; use one of: l4"),
    Case("bucket on kind", {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "bucket": {}}]}, "mlplatform:teams[0].bucket", "only gke stacks have them", base="kind"),
    Case("ray without kuberay", {"mlplatform:components.kuberay": {"enabled": False}, "mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "ray": {}}]}, "mlplatform:teams[0].ray", "needs the kuberay component"),
    Case("teams without kubeflow", {"mlplatform:components.kubeflow": {"enabled": False}, "mlplatform:teams": [{"name": "vision", "owner": "a@acme.com"}]}, "mlplatform:teams", "teams are Kubeflow profiles"),
    Case("ray workers", {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "ray": {"minWorkers": 5, "maxWorkers": 2}}]}, "mlplatform:teams[0].ray.minWorkers", "minWorkers 5 is above maxWorkers 2"),
    Case("long team name", {"mlplatform:teams": [{"name": "a" * 64, "owner": "a@acme.com"}]}, "mlplatform:teams[0].name", "at most 63 characters"),
    Case("bad bucket name", {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "bucket": {"name": "Bad Bucket"}}]}, "mlplatform:teams[0].bucket.name", "not a valid bucket name"),
    Case("bucket named goog", {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "bucket": {"name": "goog-data"}}]}, "mlplatform:teams[0].bucket.name", "'goog-data' is not a valid bucket name: names may not start with 'goog'"),
    Case("bucket named like google", {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "bucket": {"name": "acme-g00gle-data"}}]}, "mlplatform:teams[0].bucket.name", "names may not contain 'google' or a look-alike"),
    Case("bucket named as an ip", {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "bucket": {"name": "192.168.5.4"}}]}, "mlplatform:teams[0].bucket.name", "it reads as an IP address"),
    Case("bucket in a zone", {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "bucket": {"location": "us-central1-a"}}]}, "mlplatform:teams[0].bucket.location", "'us-central1-a' is a zone; buckets live in a region, e.g. us-central1"),
    Case("bucket in no location", {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "bucket": {"location": "europe"}}]}, "mlplatform:teams[0].bucket.location", "'europe' is not a bucket location: a region (us-central1), a multi-region (ASIA, EU, US)"),
    Case("cohort with a space", {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "cohort": "Research Team"}]}, "mlplatform:teams[0].cohort", "'Research Team' is not a Kueue cohort name"),
    Case("iap without client", {"mlplatform:components.kubeflow": {"auth": {"hostname": "kf.acme.com", "iap": True}}}, "mlplatform:components.kubeflow.auth.iap", "iap needs hostname (the HTTPS entry point) and iapClientId"),
    Case("oidc without hostname", {"mlplatform:components.kubeflow": {"auth": {"kind": "oidc", "oidc": {"clientId": "x"}}}}, "mlplatform:components.kubeflow.auth.hostname", "set hostname"),
    Case("zero retention", {f"{M}.retention": "0d"}, f"{M}.retention", "'0d' is not a Prometheus retention such as 15d: a positive number and h, d, w or y"),
    Case("retention in minutes", {f"{M}.retention": "90m"}, f"{M}.retention", "'90m' is not a Prometheus retention"),
    Case("storage without unit", {f"{M}.storageSize": "50"}, f"{M}.storageSize", "'50' is not a volume size such as 50Gi: a Kubernetes quantity of at least 1Mi (a bare number counts bytes)"),
    Case("storage as a yaml number", {f"{M}.storageSize": 200}, f"{M}.storageSize", "'200' is not a volume size such as 50Gi"),
    Case("storage in millis", {f"{M}.storageSize": "500m"}, f"{M}.storageSize", "'500m' is not a volume size such as 50Gi"),
    Case("idle threshold zero", {f"{M}.idleGpuThreshold": 0}, f"{M}.idleGpuThreshold", "greater than or equal to 1 (got 0)"),
    Case("idle minutes too short", {f"{M}.idleGpuMinutes": 2}, f"{M}.idleGpuMinutes", "greater than or equal to 5 (got 2)"),
    Case("pending minutes zero", {f"{M}.pendingWorkloadMinutes": 0}, f"{M}.pendingWorkloadMinutes", "greater than or equal to 1 (got 0)"),
    Case("temperature too high", {f"{M}.gpuTemperatureCelsius": 130}, f"{M}.gpuTemperatureCelsius", "less than or equal to 110 (got 130)"),
    Case("unknown backend", {f"{M}.backend": "thanos"}, f"{M}.backend", "'kube-prometheus-stack' or 'gke-managed' (got 'thanos')"),
    Case("unknown dcgm source", {"mlplatform:components.dcgmExporter": {"source": "operator"}}, "mlplatform:components.dcgmExporter.source", "'chart' or 'gke-managed' (got 'operator')"),
    Case("managed backend without managed prometheus", {f"{M}.enabled": True, f"{M}.backend": "gke-managed"}, f"{M}.backend", "backend gke-managed needs cluster.managedPrometheus: true; set it or use backend: kube-prometheus-stack"),
    Case("managed backend on kind", {f"{M}.enabled": True, f"{M}.backend": "gke-managed"}, f"{M}.backend", "on kind use backend: kube-prometheus-stack", base="kind"),
    Case("managed dcgm with kube-prometheus-stack", {f"{C}.managedPrometheus": True, f"{M}.enabled": True, "mlplatform:components.dcgmExporter": {"source": "gke-managed"}}, "mlplatform:components.dcgmExporter.source", "kube-prometheus-stack does not read; use source: chart or monitoring.backend: gke-managed"),
    Case("dcgm chart with managed backend", {f"{C}.managedPrometheus": True, f"{M}.enabled": True, f"{M}.backend": "gke-managed", "mlplatform:components.dcgmExporter": {}}, "mlplatform:components.dcgmExporter.source", "with monitoring.backend gke-managed use source: gke-managed"),
    Case("bad memory quantity", {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "quota": {"memory": "lots"}}]}, "mlplatform:teams[0].quota.memory", "'lots' is not a Kubernetes quantity"),
    Case("chart mirror with another scheme", {"mlplatform:sources": {"charts": "s3://acme/charts"}}, "mlplatform:sources.charts", "'s3://acme/charts': use oci://<registry>/<path>, https://<helm repository>, or a local directory"),
    Case("empty chart mirror", {"mlplatform:sources": {"charts": " "}}, "mlplatform:sources.charts", "empty; remove the key to use the public chart repositories"),
    Case("manifests mirror over ftp", {"mlplatform:sources": {"kubeflowManifests": "ftp://git.acme/kf"}}, "mlplatform:sources.kubeflowManifests", "'ftp://git.acme/kf': use a git URL (https:// or ssh://) or a local directory"),
    Case("manifests mirror with a ref", {"mlplatform:sources": {"kubeflowManifests": "https://git.acme/kf//common?ref=26.03"}}, "mlplatform:sources.kubeflowManifests", "give the repository root; the tag and paths come from the pin table"),
    Case("oidc without allowed accounts", {"mlplatform:components.kubeflow": {"auth": {"kind": "oidc", "oidc": {"clientId": "x"}, "hostname": "kf.acme.com"}}}, "mlplatform:components.kubeflow.auth.allowedDomains", "kind oidc lets in every account of the provider unless you list who may sign in; set allowedDomains (e.g. [acme.com]) and/or allowedEmails"),
    Case("allowed domains with dex", {"mlplatform:components.kubeflow": {"auth": {"allowedDomains": ["acme.com"]}}}, "mlplatform:components.kubeflow.auth.allowedDomains", "allowedDomains and allowedEmails are for kind oidc; with dex, staticUsers are who may sign in"),
    Case("allowed domain with an at", {"mlplatform:components.kubeflow": {"auth": {"kind": "oidc", "oidc": {"clientId": "x"}, "hostname": "kf.acme.com", "allowedDomains": ["@acme.com"]}}}, "mlplatform:components.kubeflow.auth.allowedDomains[0]", "'@acme.com' is not an e-mail domain such as acme.com: lowercase, no '@' or '*'"),
    Case("allowed domain as a wildcard", {"mlplatform:components.kubeflow": {"auth": {"kind": "oidc", "oidc": {"clientId": "x"}, "hostname": "kf.acme.com", "allowedDomains": ["*"]}}}, "mlplatform:components.kubeflow.auth.allowedDomains[0]", "'*' is not an e-mail domain"),
    Case("allowed email not an email", {"mlplatform:components.kubeflow": {"auth": {"kind": "oidc", "oidc": {"clientId": "x"}, "hostname": "kf.acme.com", "allowedEmails": ["ana"]}}}, "mlplatform:components.kubeflow.auth.allowedEmails[0]", "'ana' is not an e-mail address"),
    Case("grafana admin not an email", {f"{M}.grafanaAdmins": ["lead"]}, f"{M}.grafanaAdmins[0]", "'lead' is not an e-mail address"),
    Case("unknown sources key", {"mlplatform:sources": {"chart": "oci://x"}}, "mlplatform:sources.chart", "unknown key; known keys here: charts, kubeflowManifests"),
    Case("pods-ready timeout in words", {"mlplatform:components.kueue": {"waitForPodsReady": {"timeout": "20 minutes"}}}, "mlplatform:components.kueue.waitForPodsReady.timeout", "'20 minutes' is not a duration such as 20m or 1h30m: positive numbers with h, m or s"),
    Case("pods-ready timeout zero", {"mlplatform:components.kueue": {"waitForPodsReady": {"timeout": "0s"}}}, "mlplatform:components.kueue.waitForPodsReady.timeout", "'0s' is not a duration such as 20m"),
    Case("default request above its limit", {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "containerDefaults": {"memory": "32Gi"}}]}, "mlplatform:teams[0].containerDefaults.memory", "memory 32Gi is above memoryLimit 16Gi; a default request must fit its limit"),
    Case("default limit not a quantity", {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "containerDefaults": {"cpuLimit": "four"}}]}, "mlplatform:teams[0].containerDefaults.cpuLimit", "'four' is not a Kubernetes quantity"),
    Case("bad repository id", {f"{C}.imageRegistry": {"name": "ML_Images"}}, f"{C}.imageRegistry.name", "'ML_Images' is not an Artifact Registry repository id: lowercase letters, digits and '-', a letter first, at most 63 characters"),
    Case("bad registry location", {f"{C}.imageRegistry": {"location": "moon"}}, f"{C}.imageRegistry.location", "'moon' is neither a GCP region (us-central1) nor one of us, europe, asia"),
    Case("pusher without its kind", {f"{C}.imageRegistry": {"pushers": ["ci@acme.iam.gserviceaccount.com"]}}, f"{C}.imageRegistry.pushers", "'ci@acme.iam.gserviceaccount.com' is not an IAM member: use user:, group:, serviceAccount: or principal(Set):// followed by the identity"),
    Case("notebook registry with a scheme", {"mlplatform:components.kubeflow": {"notebookRegistry": "https://ghcr.io/acme"}}, "mlplatform:components.kubeflow.notebookRegistry", "'https://ghcr.io/acme' is not a registry path such as europe-docker.pkg.dev/acme/images: host and path, no scheme and no tag"),
    Case("pods-ready backoff zero", {"mlplatform:components.kueue": {"waitForPodsReady": {"backoffLimitCount": 0}}}, "mlplatform:components.kueue.waitForPodsReady.backoffLimitCount", "greater than or equal to 1 (got 0)"),
    # --- e-mail addresses as upstream compares them (stackmodel/schema/common.py "e-mail addresses") --------
    Case("owner with an emoji", {T: [{**TEAM, "owner": "ana😀@acme.com"}]}, f"{T}[0].owner", "'ana😀@acme.com' has spaces or characters outside ASCII: identity providers send addresses of ASCII letters, digits and . _ - ' + (and kubeflow-userid is an HTTP header); write the address as they do"),
    Case("owner as a wildcard", {T: [{**TEAM, "owner": "*@acme.com"}]}, f"{T}[0].owner", "'*@acme.com': before the '@' an address has ASCII letters, digits and . _ - ' + (no '..', no '.' first or last); '*' would be a wildcard to Istio"),
    Case("owner with a dot first", {T: [{**TEAM, "owner": ".ana@acme.com"}]}, f"{T}[0].owner", "'.ana@acme.com': before the '@' an address has"),
    Case("owner with a capital domain", {T: [{**TEAM, "owner": "Ana@ACME.com"}]}, f"{T}[0].owner", "'Ana@ACME.com': write the domain in lowercase (Ana@acme.com); domains are case-insensitive and oauth2-proxy lowercases them, but Istio compares the address exactly"),
    Case("owner on a one-label domain", {T: [{**TEAM, "owner": "ana@localhost"}]}, f"{T}[0].owner", "'ana@localhost': 'localhost' is not an e-mail domain such as ana@acme.com (lowercase, at least one '.')"),
    Case("owner with a long local part", {T: [{**TEAM, "owner": "a" * 65 + "@acme.com"}]}, f"{T}[0].owner", "is too long: at most 64 characters before the '@' and 254 in all (RFC 5321)"),
    Case("owner with a display name", {T: [{**TEAM, "owner": "Ana <ana@acme.com>"}]}, f"{T}[0].owner", "has spaces or characters outside ASCII"),
    Case("static user twice in two cases", {f"{K}.kubeflow.auth.staticUsers": ["ana@acme.com", "Ana@acme.com"]}, f"{K}.kubeflow.auth.staticUsers[1]", "Ana@acme.com is listed twice (also at [0]); Dex looks static users up by the lowercased address, so only one of them could sign in; keep one"),
    Case("allowed e-mail twice", {**OIDC_AUTH, f"{K}.kubeflow.auth.allowedEmails": ["guest@partner.org", "Guest@partner.org"]}, f"{K}.kubeflow.auth.allowedEmails[1]", "Guest@partner.org is listed twice (also at [0]); oauth2-proxy compares addresses lowercased; keep one"),
    Case("allowed domain twice", {**OIDC_AUTH, f"{K}.kubeflow.auth.allowedDomains": ["acme.com", "acme.com"]}, f"{K}.kubeflow.auth.allowedDomains[1]", "acme.com is listed twice (also at [0]); keep one"),
    Case("grafana admin twice", {f"{M}.grafanaAdmins": ["lead@acme.com", "LEAD@acme.com"]}, f"{M}.grafanaAdmins[1]", "LEAD@acme.com is listed twice (also at [0]); keep one"),
    Case("pusher twice", {f"{C}.imageRegistry": {"pushers": ["group:ml@acme.com", "group:ml@acme.com"]}}, f"{C}.imageRegistry.pushers[1]", "group:ml@acme.com is listed twice (also at [0]); each becomes an IAM binding of its own; keep one"),
    Case("authorized range twice", {f"{C}.masterAuthorizedNetworks": [{"cidr": "203.0.113.0/24", "name": "a"}, {"cidr": "203.0.113.0/24", "name": "b"}]}, f"{C}.masterAuthorizedNetworks[1]", "203.0.113.0/24 is listed twice (also at [0]); keep one"),
    Case("authorized range as a number", {f"{C}.masterAuthorizedNetworks": [{"cidr": 3405803776, "name": "a"}]}, f"{C}.masterAuthorizedNetworks[0].cidr", "3405803776 is not an IPv4 range such as 10.0.0.0/20: write it as text"),
    Case("authorized range without a name", {f"{C}.masterAuthorizedNetworks": [{"cidr": "203.0.113.0/24", "name": " "}]}, f"{C}.masterAuthorizedNetworks[0].name", "empty; give the range's display name"),
    # --- namespaces the cluster owns ----------------------------------------------------
    Case("team in kind's storage namespace", {T: [{**TEAM, "name": "local-path-storage"}]}, f"{T}[0].name", "'local-path-storage' is a namespace kind (its local-path storage provisioner) owns; pick another team name"),
    Case("team in a GKE namespace", {T: [{**TEAM, "name": "gke-managed-cim"}]}, f"{T}[0].name", "'gke-managed-cim' is a namespace GKE (its system and managed-service namespaces) owns; pick another team name"),
    Case("team in GKE's Prometheus namespace", {T: [{**TEAM, "name": "gmp-public"}]}, f"{T}[0].name", "'gmp-public' is a namespace GKE (Managed Service for Prometheus) owns; pick another team name"),
    Case("team in the DRA driver's namespace", {T: [{**TEAM, "name": "nvidia-dra-driver-gpu"}]}, f"{T}[0].name", "'nvidia-dra-driver-gpu' is a namespace the platform owns; pick another team name"),
    # --- places and shapes ----------------------------------------------------------------
    Case("provider region empty", {"gcp:region": ""}, "gcp:region", "'' is not a GCP region such as us-central1"),
    Case("provider region a zone", {"gcp:region": "us-central1-a"}, "gcp:region", "'us-central1-a' is not a GCP region such as us-central1; 'us-central1-a' is a zone, its region is us-central1"),
    Case("provider region a list", {"gcp:region": ["us-central1"]}, "gcp:region", "Input should be a valid string; write text (in quotes if YAML would read it as a number, a list or a mapping)"),
    Case("provider zone a region", {"gcp:zone": "us-central1"}, "gcp:zone", "'us-central1' is not a GCP zone such as us-central1-a"),
    Case("system pool machine type not a name", {f"{C}.systemPool": {"machineType": "E2 Standard 8"}}, f"{C}.systemPool.machineType", "'E2 Standard 8' is not a machine type name such as e2-standard-8 (lowercase, series-type-size)"),
    Case("override of no region", {"mlplatform:overrides": {"regions": ["Mars"]}}, "mlplatform:overrides.regions", "'Mars' is not a region name such as us-central1"),
    Case("override of an issuer without its slash", {"mlplatform:overrides": {"oidcIssuers": ["https://login.acme.com"]}}, "mlplatform:overrides.oidcIssuers", "'https://login.acme.com': list an https issuer that ends in '/', as the provider publishes it"),
    # --- numbers and units ------------------------------------------------------------------
    Case("max as text", {f"{P0}.max": "4"}, f"{C}.gpuPools[0].max", "Input should be a valid integer (got '4'); write a whole number, without quotes or a decimal point"),
    Case("max as a decimal", {f"{P0}.max": 4.0}, f"{C}.gpuPools[0].max", "Input should be a valid integer (got 4.0)"),
    Case("a boolean as a number", {f"{C}.privateNodes": 1}, f"{C}.privateNodes", "Input should be a valid boolean (got 1); write true or false, without quotes"),
    Case("a boolean as text", {f"{C}.privateNodes": "true"}, f"{C}.privateNodes", "Input should be a valid boolean (got 'true'); write true or false, without quotes"),
    Case("a NAP limit beyond int64", {f"{C}.autoprovisioning.limits.cpu": 2**63}, f"{C}.autoprovisioning.limits.cpu", "Input should be less than or equal to 9223372036854775807"),
    Case("a GPU quota beyond int64", {T: [{**TEAM, "quota": {"gpus": {"nvidia-l4": 2**64}}}]}, f"{T}[0].quota.gpus.nvidia-l4", "Input should be less than or equal to 9223372036854775807"),
    Case("memory beyond int64", {T: [{**TEAM, "quota": {"memory": "8Ei"}}]}, f"{T}[0].quota.memory", "'8Ei' is more than Kubernetes holds (2^63-1 in its base unit); use a realistic size"),
    Case("cpu finer than a nanocore", {T: [{**TEAM, "quota": {"cpu": "0.1n"}}]}, f"{T}[0].quota.cpu", "'0.1n' is finer than Kubernetes keeps (1n): it would be rounded up; use a coarser value"),
    Case("memory without a unit", {T: [{**TEAM, "quota": {"memory": "256"}}]}, f"{T}[0].quota.memory", "'256' is 256 bytes: a bare number counts bytes; give the unit, e.g. 256Gi (at least 1Mi)"),
    Case("ray worker memory as a bare number", {T: [{**TEAM, "ray": {"workerMemory": 16}}]}, f"{T}[0].ray.workerMemory", "'16' is 16 bytes: a bare number counts bytes; give the unit, e.g. 16Gi (at least 1Mi)"),
    Case("ray worker of no cpu", {T: [{**TEAM, "ray": {"workerCpu": "0"}}]}, f"{T}[0].ray.workerCpu", "workerCpu 0 leaves a Ray worker nothing to run on; give it some, e.g. 4"),
    Case("ray pool empty", {T: [{**TEAM, "ray": {"pool": ""}}]}, f"{T}[0].ray.pool", "empty; give the GPU pool's name"),
    Case("kueue timeout past a go duration", {"mlplatform:components.kueue": {"waitForPodsReady": {"timeout": "2562048h"}}}, "mlplatform:components.kueue.waitForPodsReady.timeout", "'2562048h' is longer than a Go duration holds (about 292 years): Kueue reads it with Go's time.ParseDuration, which refuses it; use a timeout such as 1h"),
    Case("retention past a go duration", {M: {"retention": "293y"}}, f"{M}.retention", "'293y' is longer than Prometheus can hold (a Go duration, about 292 years: it refuses 'duration out of range'); use a shorter retention such as 10y"),
    # --- sign-in that cannot work -----------------------------------------------------------
    Case("oidc client id empty", {**OIDC_AUTH, f"{K}.kubeflow.auth.oidc.clientId": ""}, f"{K}.kubeflow.auth.oidc.clientId", "empty; give the OAuth client ID"),
    Case("oidc client id with a space", {**OIDC_AUTH, f"{K}.kubeflow.auth.oidc.clientId": "abc def"}, f"{K}.kubeflow.auth.oidc.clientId", "'abc def': the OAuth client ID has no spaces; remove them"),
    Case("iap client id empty", {f"{K}.kubeflow.auth.iapClientId": ""}, f"{K}.kubeflow.auth.iapClientId", "empty; give the IAP OAuth client ID"),
    Case("google issuer with a slash", {**OIDC_AUTH, f"{K}.kubeflow.auth.oidc.issuer": "https://accounts.google.com/"}, f"{K}.kubeflow.auth.oidc.issuer", "'https://accounts.google.com/': this provider publishes its issuer as 'https://accounts.google.com' (its /.well-known/openid-configuration), and Dex's OIDC library refuses any other spelling, trailing slash included; use that"),
    Case("issuer with capitals", {**OIDC_AUTH, f"{K}.kubeflow.auth.oidc.issuer": "https://Login.Acme.com"}, f"{K}.kubeflow.auth.oidc.issuer", "'https://Login.Acme.com': write the host in lowercase as the provider publishes it (login.acme.com)"),
    Case("issuer with the default port", {**OIDC_AUTH, f"{K}.kubeflow.auth.oidc.issuer": "https://login.acme.com:443"}, f"{K}.kubeflow.auth.oidc.issuer", "'https://login.acme.com:443': drop the default port ':443'; the provider's issuer does not name it"),
    Case("issuer as the discovery document", {**OIDC_AUTH, f"{K}.kubeflow.auth.oidc.issuer": "https://login.acme.com/.well-known/openid-configuration"}, f"{K}.kubeflow.auth.oidc.issuer", "'https://login.acme.com/.well-known/openid-configuration' is the discovery document; give the issuer: 'https://login.acme.com'"),
    Case("issuer with a space", {**OIDC_AUTH, f"{K}.kubeflow.auth.oidc.issuer": "https://login.acme.com /x"}, f"{K}.kubeflow.auth.oidc.issuer", "an OIDC issuer has no spaces and is ASCII"),
    # An existing network, in the stack's project or a Shared VPC host project.
    Case("network as a path", {f"{C}.network": {"existing": {**EXISTING, "network": "projects/acme-net/global/networks/shared-vpc"}}}, f"{NET}.network", "'projects/acme-net/global/networks/shared-vpc' is a path; give the network's name ('shared-vpc') and the project ('acme-net') in hostProject"),
    Case("subnetwork name", {f"{C}.network": {"existing": {**EXISTING, "subnetwork": "ML_Subnet"}}}, f"{NET}.subnetwork", "'ML_Subnet' is not a subnetwork name such as ml-us-central1: 1-63 lowercase letters, digits and '-', a letter first"),
    Case("one range for pods and services", {f"{C}.network": {"existing": {**EXISTING, "servicesRange": "pods"}}}, f"{NET}.servicesRange", "pods and Services need secondary ranges of their own; name another range"),
    Case("host project id", {f"{C}.network": {"existing": {**EXISTING, "hostProject": "Acme_Net"}}}, f"{NET}.hostProject", "'Acme_Net' is not a GCP project ID (the host project's, as gcloud projects list shows it)"),
    Case("no pods range", {f"{C}.network": {"existing": {k: v for k, v in EXISTING.items() if k != "podsRange"}}}, f"{NET}.podsRange", "required; add this key"),
    Case("created ranges with an existing network", {f"{C}.network": {"existing": EXISTING, "podsCidr": "10.16.0.0/14"}}, f"{C}.network.podsCidr", "podsCidr is a range of the subnet the program creates; an existing subnetwork has its own (its secondary ranges are named in existing): remove it"),
    # Maintenance window and exclusions.
    Case("window time without a zone", {f"{C}.maintenance": {"window": {**WINDOW, "start": "2026-01-03 02:00"}}}, f"{MW}.start", "'2026-01-03 02:00' is not a UTC time such as 2026-01-03T02:00:00Z (RFC 3339 with a Z"),
    Case("window time with an offset", {f"{C}.maintenance": {"window": {**WINDOW, "start": "2026-01-03T02:00:00+01:00"}}}, f"{MW}.start", "is not a UTC time such as 2026-01-03T02:00:00Z"),
    Case("window on a day that does not exist", {f"{C}.maintenance": {"window": {**WINDOW, "end": "2026-02-30T08:00:00Z"}}}, f"{MW}.end", "'2026-02-30T08:00:00Z' is not a date and time that exists; check the day and hour"),
    Case("monthly window", {f"{C}.maintenance": {"window": {**WINDOW, "recurrence": "FREQ=MONTHLY"}}}, f"{MW}.recurrence", "'FREQ=MONTHLY' is not a recurrence this schema reads: FREQ=DAILY, FREQ=WEEKLY (the start's weekday) or FREQ=WEEKLY;BYDAY= with days each once from MO,TU,WE,TH,FR,SA,SU"),
    Case("daily window by day", {f"{C}.maintenance": {"window": {**WINDOW, "recurrence": "FREQ=DAILY;BYDAY=SA"}}}, f"{MW}.recurrence", "BYDAY goes with FREQ=WEEKLY; write FREQ=WEEKLY;BYDAY=SA"),
    Case("window ends before it starts", {f"{C}.maintenance": {"window": {**WINDOW, "end": "2026-01-03T01:00:00Z"}}}, f"{MW}.end", "end 2026-01-03T01:00:00Z is not after start 2026-01-03T02:00:00Z"),
    Case("window shorter than four hours", {f"{C}.maintenance": {"window": {**WINDOW, "end": "2026-01-03T04:00:00Z"}}}, f"{MW}.end", "a window of 2 hours is shorter than GKE counts (4 hours at least); make it longer"),
    Case("weekend window too short", {f"{C}.maintenance": {"window": {**WINDOW, "end": "2026-01-03T06:00:00Z", "recurrence": "FREQ=WEEKLY;BYDAY=SA,SU"}}}, f"{MW}.end", "2 window(s) a week of 4 hours give 32 hours in 32 days, and GKE needs 48; make the windows longer or add days"),
    Case("exclusion without an end", {f"{C}.maintenance": {"window": WINDOW, "exclusions": [{"name": "freeze", "start": "2026-12-20T00:00:00Z"}]}}, f"{MX}.end", "give end, or untilEndOfSupport: true (one of them)"),
    Case("no upgrades until end of support", {f"{C}.maintenance": {"window": WINDOW, "exclusions": [{"name": "freeze", "start": "2026-12-20T00:00:00Z", "untilEndOfSupport": True}]}}, f"{MX}.untilEndOfSupport", "a NO_UPGRADES exclusion lasts at most 30 days; give end, or use scope NO_MINOR_UPGRADES"),
    Case("no upgrades for 40 days", {f"{C}.maintenance": {"window": WINDOW, "exclusions": [{**FREEZE, "end": "2027-01-29T00:00:00Z"}]}}, f"{MX}.end", "40 days: a NO_UPGRADES exclusion lasts at most 30 days (GKE); shorten it, or use scope NO_MINOR_UPGRADES"),
    Case("exclusion scope", {f"{C}.maintenance": {"window": WINDOW, "exclusions": [{**FREEZE, "scope": "NO_PATCHES"}]}}, f"{MX}.scope", "Input should be 'NO_UPGRADES', 'NO_MINOR_UPGRADES' or 'NO_MINOR_OR_NODE_UPGRADES'"),
    Case("exclusions without a window", {f"{C}.maintenance": {"exclusions": [FREEZE]}}, f"{C}.maintenance.window", "exclusions go with a maintenance window (the provider needs one); add window"),
    Case("exclusion twice", {f"{C}.maintenance": {"window": WINDOW, "exclusions": [FREEZE, FREEZE]}}, f"{C}.maintenance.exclusions[1]", "year-end is listed twice (also at [0]); GKE keys exclusions by name; keep one"),
    Case("more than twenty exclusions", {f"{C}.maintenance": {"window": WINDOW, "exclusions": [{**FREEZE, "name": f"x{i}"} for i in range(21)]}}, f"{C}.maintenance.exclusions", "21 exclusions; GKE takes at most 20 at a time"),
    # Application-layer secrets encryption.
    Case("secrets key version", {f"{C}.secretsEncryption": {"key": f"{KEY}/cryptoKeyVersions/1"}}, f"{C}.secretsEncryption.key", f"names a key version; give the key ('{KEY}'): GKE uses its primary version"),
    Case("secrets key by its short name", {f"{C}.secretsEncryption": {"key": "gke/ml-secrets"}}, f"{C}.secretsEncryption.key", "'gke/ml-secrets' is not a Cloud KMS key name: projects/<project>/locations/<region>/keyRings/<ring>/cryptoKeys/<key>"),
    # A pool's own labels and taints.
    Case("the platform's pool label", {f"{P0}.labels": {"mlplatform.dev/gpu-pool": "x"}}, f"{C}.gpuPools[0].labels.mlplatform.dev/gpu-pool", "'mlplatform.dev/gpu-pool' is the platform's pool label (set from the pool's name); use a key of your own, such as acme.com/gpu-pool"),
    Case("a label of kubernetes", {f"{C}.systemPool": {"labels": {"node-role.kubernetes.io/ml": ""}}}, f"{C}.systemPool.labels.node-role.kubernetes.io/ml", "'node-role.kubernetes.io/ml' is under kubernetes.io/, which Kubernetes keeps for its own; use a key of your own, such as acme.com/ml"),
    Case("a label key with a space", {f"{P0}.labels": {"cost center": "ml"}}, f"{C}.gpuPools[0].labels.cost center", "'cost center' is not a Kubernetes label key"),
    Case("a label value with a space", {f"{P0}.labels": {"acme.com/team": "ml research"}}, f"{C}.gpuPools[0].labels.acme.com/team", "'ml research' (for acme.com/team) is not a Kubernetes label value"),
    Case("a label value that is a number", {f"{P0}.labels": {"acme.com/tier": 1}}, f"{C}.gpuPools[0].labels.acme.com/tier", "Input should be a valid string"),
    Case("the platform's gpu taint", {f"{P0}.taints": [{"key": "nvidia.com/gpu", "value": "present"}]}, f"{C}.gpuPools[0].taints[0].key", "'nvidia.com/gpu' is the platform's GPU taint (nvidia.com/gpu=present:NoSchedule, on every GPU pool already)"),
    Case("a taint of gke", {f"{P0}.taints": [{"key": "cloud.google.com/gke-queued", "value": "true"}]}, f"{C}.gpuPools[0].taints[0].key", "'cloud.google.com/gke-queued' is under cloud.google.com/, which GKE keeps for its own"),
    Case("a taint twice", {f"{P0}.taints": [{"key": "acme.com/dedicated"}, {"key": "acme.com/dedicated", "value": "x"}]}, f"{C}.gpuPools[0].taints[1]", "the taint acme.com/dedicated:NoSchedule is listed twice (also at [0]); a node takes one taint per key and effect; keep one"),
    Case("a taint effect", {f"{P0}.taints": [{"key": "acme.com/dedicated", "effect": "NO_SCHEDULE"}]}, f"{C}.gpuPools[0].taints[0].effect", "Input should be 'NoSchedule', 'PreferNoSchedule' or 'NoExecute'"),
    Case("taints on the system pool", {f"{C}.systemPool": {"taints": [{"key": "acme.com/dedicated"}]}}, f"{C}.systemPool.taints", "unknown key; known keys here: machineType, min, max, diskSizeGb, labels"),
    # The images mirror and the chart mirror, as a registry client reads them (facts/registry_names.py).
    Case("mirror without a host", {"mlplatform:images": {"mirror": "mirror/acme"}}, "mlplatform:images.mirror", "'mirror/acme': a registry client reads 'mirror' as a Docker Hub namespace, not a host"),
    Case("mirror port out of range", {"mlplatform:images": {"mirror": "registry.acme.internal:70000/mirror"}}, "mlplatform:images.mirror", "port 70000 is outside 1-65535"),
    Case("mirror past the name length", {"mlplatform:images": {"mirror": "registry.acme.internal/" + "m" * 140}}, "mlplatform:images.mirror", "a repository name holds at most 255 (distribution/reference); keep the prefix within 155"),
    Case("mirror in a zone", {"mlplatform:images": {"mirror": "us-central1-a-docker.pkg.dev/acme-ml/mirror"}}, "mlplatform:images.mirror", "'us-central1-a' is a zone, and Artifact Registry repositories live in a region or a multi-region; use us-central1-docker.pkg.dev"),
    Case("mirror on a python repository host", {"mlplatform:images": {"mirror": "us-central1-python.pkg.dev/acme-ml/mirror"}}, "mlplatform:images.mirror", "'us-central1-python.pkg.dev' serves python packages, not images or charts"),
    Case("mirror of a project no project can be", {"mlplatform:images": {"mirror": "us-docker.pkg.dev/Acme_ML/mirror"}}, "mlplatform:images.mirror", "registry paths are lowercase"),
    Case("mirror of a project id with underscores", {"mlplatform:images": {"mirror": "us-docker.pkg.dev/acme_ml/mirror"}}, "mlplatform:images.mirror", "'acme_ml' is not a GCP project ID"),
    Case("mirror on docker hub's registry host", {"mlplatform:images": {"mirror": "registry-1.docker.io/acme"}}, "mlplatform:images.mirror", "registry-1.docker.io is Docker Hub"),
    Case("chart repository's index", {"mlplatform:sources": {"charts": "https://charts.acme.internal/index.yaml"}}, "mlplatform:sources.charts", "names the repository's index; give the repository, 'https://charts.acme.internal'"),
    Case("artifact registry charts without a repository", {"mlplatform:sources": {"charts": "oci://europe-docker.pkg.dev/acme-ml"}}, "mlplatform:sources.charts", "name the repository, europe-docker.pkg.dev/<project>/<repository>"),
    Case("manifests as an scp remote", {"mlplatform:sources": {"kubeflowManifests": "git@github.com:acme/manifests.git"}}, "mlplatform:sources.kubeflowManifests", "is git's scp-like remote, which the tools read as a local directory; write it as a URL: 'ssh://git@github.com/acme/manifests.git'"),
    Case("manifests as a web page", {"mlplatform:sources": {"kubeflowManifests": "https://github.com/acme/manifests/tree/v1.10.0"}}, "mlplatform:sources.kubeflowManifests", "is a web page of the repository (tree), not its git remote; give the repository's URL, 'https://github.com/acme/manifests'"),
    Case("release manifests as a web page", {"mlplatform:sources": {"releaseManifests": "https://github.com/acme/mirrors/tree/main/manifests"}}, "mlplatform:sources.releaseManifests", "is a web page of the repository (tree), not a location that serves the files themselves at <owner>/<repo>/<commit>/<path>: give the raw files' location (raw.githubusercontent.com/<owner>/<repo>/<ref>/<folder> for a GitHub repository; 'https://github.com/acme/mirrors' is the repository)"),
    # Cloud SQL for Pipelines (facts/cloud_sql.py).
    Case("cloud sql tier of no vcpus", {f"{K}.pipelines": {"enabled": False, "cloudSql": {"tier": "db-custom-0-3840"}}}, f"{K}.pipelines.cloudSql.tier", "0 vCPUs: Cloud SQL's custom tiers have 1 or an even number of vCPUs up to 96"),
    Case("cloud sql tier of too little memory", {f"{K}.pipelines": {"enabled": False, "cloudSql": {"tier": "db-custom-2-1024"}}}, f"{K}.pipelines.cloudSql.tier", "1024 MiB for 2 vCPUs: Cloud SQL takes a multiple of 256 MiB, 0.9 to 6.5 GiB per vCPU and at least 3840 MiB, here 3840 to 13312"),
    Case("cloud sql tier of too many vcpus", {f"{K}.pipelines": {"enabled": False, "cloudSql": {"tier": "db-custom-128-491520"}}}, f"{K}.pipelines.cloudSql.tier", "128 vCPUs: Cloud SQL's custom tiers have 1 or an even number of vCPUs up to 96"),
    Case("fewer backups than log days", {f"{K}.pipelines": {"enabled": False, "cloudSql": {"retainedBackups": 3, "logRetentionDays": 7}}}, f"{K}.pipelines.cloudSql.retainedBackups", "3 backups for 7 days of transaction logs"),
    Case("a storage size past what kubernetes holds", {f"{M}.storageSize": "1e30"}, f"{M}.storageSize", "'1e30' is more than Kubernetes holds (2^63-1 in its base unit); use a realistic size; a volume size is a quantity such as 50Gi"),
    # Networks (facts/networks.py).
    Case("control plane in the docker bridge", {f"{C}.network": {"masterCidr": "172.17.0.0/28"}}, f"{C}.network.masterCidr", "172.17.0.0/28 overlaps 172.17.0.0/16, the Docker bridge's range"),
    Case("services in the docker bridge", {f"{C}.network": {"servicesCidr": "172.17.0.0/20"}}, f"{C}.network.servicesCidr", "overlaps 172.17.0.0/16, the Docker bridge's range"),
    Case("a link-local pod range", {f"{C}.network": {"podsCidr": "169.254.0.0/16"}}, f"{C}.network.podsCidr", "169.254.0.0/16 overlaps 169.254.0.0/16, link-local"),
    Case("a subnet below gcp's smallest", {f"{C}.network": {"subnetCidr": "10.0.0.0/30"}}, f"{C}.network.subnetCidr", "10.0.0.0/30 is smaller than the smallest subnet GCP creates (/29)"),
    Case("a pod range below a node's", {f"{C}.network": {"podsCidr": "10.16.0.0/26"}}, f"{C}.network.podsCidr", "smaller than the /24 GKE gives each node for its Pods"),
    Case("more authorized networks than gke takes", {f"{C}.masterAuthorizedNetworks": [{"cidr": f"203.0.{i // 4}.{i % 4 * 64}/26", "name": f"n{i}"} for i in range(101)]}, f"{C}.masterAuthorizedNetworks", "101 authorized networks, and a private GKE cluster takes at most 100"),
    Case("a loopback authorized network", {f"{C}.masterAuthorizedNetworks": [{"cidr": "127.0.0.0/8", "name": "me"}]}, f"{C}.masterAuthorizedNetworks[0].cidr", "127.0.0.0/8 is inside 127.0.0.0/8, loopback"),
    Case("a zonal kms key", {f"{C}.secretsEncryption": {"key": "projects/acme-sec/locations/us-central1-a/keyRings/gke/cryptoKeys/ml"}}, f"{C}.secretsEncryption.key", "us-central1-a is a zone, and Cloud KMS has no zonal locations"),
    Case("override of no zone", {"mlplatform:overrides": {"zones": ["us-central1"]}}, "mlplatform:overrides.zones", "'us-central1' is not a zone name such as us-central1-a"),
    Case("override of no gke version", {"mlplatform:overrides": {"gkeVersions": ["latest"]}}, "mlplatform:overrides.gkeVersions", "'latest' is not a GKE version such as 1.35"),
    # What Kueue cannot run on a DRA pool (stackmodel/schema/pools.py dra-pool-as-kueue-admits).
    Case("dra with queued provisioning", {f"{P0}.gpuAllocation": "dra", f"{P0}.provisioning": "queued", f"{C}.autoprovisioning": {"enabled": False}}, f"{C}.gpuPools[0].provisioning", "Kueue asks GKE for a queued pool's nodes only for pods whose containers request nvidia.com/gpu, and a DRA pod asks through a ResourceClaim: no ProvisioningRequest would be made and the pool would never grow"),
    Case("dra on a topology-aware pool", {f"{P0}.gpuAllocation": "dra", f"{P0}.accelerator": "nvidia-h100-80gb", f"{P0}.machineType": "a3-highgpu-8g", f"{P0}.min": 2, f"{P0}.max": 2, f"{C}.autoprovisioning": {"enabled": False}}, f"{C}.gpuPools[0].gpuAllocation", "Kueue places this pool's a3-highgpu-8g nodes by GKE's topology (its size is fixed, min = max), and Kueue does not support DRA with topology-aware scheduling"),
    # Chart values overlays.
    Case("a password in chart values", {f"{K}.monitoring": {"enabled": True, "grafanaValues": {"grafana.ini": {"security": {"admin_password": "hunter2"}}}}}, f"{K}.monitoring.grafanaValues.grafana.ini.security.admin_password", "'admin_password' holds a secret, and a stack file holds none in plain text; put it in a Kubernetes Secret and give the chart that Secret's name"),
    Case("a null in chart values", {f"{K}.kueue": {"values": {"controllerManager": {"manager": {"resources": None}}}}}, f"{K}.kueue.values.controllerManager.manager.resources", "null: Helm would drop the chart's default here, but Pulumi need not pass a null on to Helm as the offline render does"),
    Case("a date in chart values", {f"{K}.kueue": {"values": {"releaseDate": datetime.date(2026, 12, 1)}}}, f"{K}.kueue.values.releaseDate", "YAML reads 2026-12-01 as a date, Pulumi passes it on as text: quote it"),
    Case("chart values as a list", {f"{K}.kueue": {"values": ["replicas=2"]}}, f"{K}.kueue.values", "Input should be a valid dictionary"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_stack_reports_path_and_fix(case: Case) -> None:
    with pytest.raises(ConfigError) as caught:
        validate(case.stack(), "bad.yaml")
    reported: dict[str, list[str]] = {}
    for p in caught.value.problems:
        reported.setdefault(p.path, []).append(p.message)
    assert case.path in reported, f"expected a problem at {case.path}, got {reported}"
    assert any(case.message in m for m in reported[case.path]), reported[case.path]


def test_every_problem_is_listed_at_once() -> None:
    bad = with_changes(
        base_gke(),
        {f"{P0}.max": "lots", f"{C}.location": "mars", "mlplatform:environment": "production"},
    )
    with pytest.raises(ConfigError) as caught:
        validate(bad, "bad.yaml")
    assert {p.path for p in caught.value.problems} == {
        f"{C}.gpuPools[0].max",
        f"{C}.location",
        "mlplatform:environment",
    }
    assert str(caught.value).startswith("bad.yaml: 3 problems in the stack config:")


def test_every_problem_of_a_gpu_pool_at_once() -> None:
    """What needs the catalog waits for a known accelerator; the rest of the pool is judged anyway."""
    bad = with_changes(
        base_gke(),
        {f"{P0}.accelerator": "nvidia-l5", f"{P0}.min": 3, f"{P0}.provisioning": "reservation", f"{P0}.fastSocket": True, f"{P0}.gvnic": False},
    )
    with pytest.raises(ConfigError) as caught:
        validate(bad, "bad.yaml")
    assert [p.path for p in caught.value.problems] == [
        f"{C}.gpuPools[0].accelerator",
        f"{C}.gpuPools[0].min",
        f"{C}.gpuPools[0].reservation",
        f"{C}.gpuPools[0].fastSocket",
    ]


def test_a_schema_error_and_a_cross_field_error_in_one_run() -> None:
    """The rules run on what parsed: the autoprovisioning limit below the pools is reported
    beside the monitoring retention the schema refuses."""
    bad = with_changes(
        base_gke(), {f"{M}": {"enabled": False, "retention": "forever"}, f"{C}.autoprovisioning.limits.nvidia-l4": 2}
    )
    with pytest.raises(ConfigError) as caught:
        validate(bad, "bad.yaml")
    assert [(p.path, p.message) for p in caught.value.problems] == [
        (f"{M}.retention", "'forever' is not a Prometheus retention such as 15d: a positive number and h, d, w or y"),
        (
            f"{C}.autoprovisioning.limits.nvidia-l4",
            "the GPU pools can grow to 12 nvidia-l4 GPUs but the limit is 2; set it to at least 12",
        ),
    ]


def test_a_rule_that_reads_a_refused_part_waits_for_it() -> None:
    """With the pools refused, team-gpus-provided would find no pool for the team's L4s: it does
    not run, so the one problem is the pool's."""
    bad = with_changes(base_gke(), {f"{P0}.max": "lots", T: [{**TEAM, "quota": {"gpus": {"nvidia-l4": 2}}}]})
    with pytest.raises(ConfigError) as caught:
        validate(bad, "bad.yaml")
    assert [p.path for p in caught.value.problems] == [f"{C}.gpuPools[0].max"]


def test_no_rule_runs_without_the_cluster() -> None:
    """A cluster that cannot be read leaves nothing to judge the rest against."""
    bad = with_changes(base_gke(), {f"{C}.kind": "eks", T: [{**TEAM, "name": "x"}, {**TEAM, "name": "x"}]})
    with pytest.raises(ConfigError) as caught:
        validate(bad, "bad.yaml")
    assert [p.path for p in caught.value.problems] == [f"{C}.kind"]


def test_valid_bases_pass() -> None:
    validate(base_gke(), "ok")
    validate(base_kind(), "ok")


@pytest.mark.parametrize(
    "changes",
    [
        {"gcp:project": "example.com:acme-ml"},
        {f"{P0}.provisioning": "reservation", f"{P0}.reservation": "projects/acme-shared/reservations/h100-block"},
        {f"{P0}.provisioning": "reservation", f"{P0}.reservation": "h100/reservationBlocks/block-1"},
        {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "bucket": {"location": "eu", "name": "acme.example.com"}}]},
        {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "bucket": {"location": "NAM4"}, "cohort": "research.emea"}]},
        {"mlplatform:images": {"mirror": "localhost:5000/mirror"}},
        {"mlplatform:sources": {"charts": "oci://europe-docker.pkg.dev/example.com/acme-ml/charts"}},
        {f"{P0}.zones": ["us-central1-e"], "mlplatform:overrides": {"zones": ["us-central1-e"]}},
        {f"{C}.minMasterVersion": "1.38", "mlplatform:overrides": {"gkeVersions": ["1.38"]}},
    ],
    ids=["domain-scoped project", "shared reservation", "reservation block", "multi-region dotted bucket", "dual-region, dotted cohort", "a mirror with a port", "artifact registry charts", "a zone taken knowingly", "a newer gke version taken knowingly"],
)
def test_upstream_forms_that_are_valid(changes: dict[str, Any]) -> None:
    validate(with_changes(base_gke(), changes), "ok")


def test_other_namespaces_are_left_to_their_providers() -> None:
    config = validate({**base_gke(), "gcp:region": "us-central1", "kubernetes:context": "x"}, "ok")
    assert config.project == "acme-test"


def test_names_that_would_collide_are_all_reported_at_once() -> None:
    """Two GPU pools on reserved names and two contributors KFAM would give one binding."""
    pools = [pool(name="default"), pool(name="system")]
    people = [{"email": "ana.b@x.com", "role": "view"}, {"email": "ana-b@x.com", "role": "view"}]
    bad = with_changes(
        base_gke(), {f"{C}.gpuPools": pools, "mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "contributors": people}]}
    )
    with pytest.raises(ConfigError) as caught:
        validate(bad, "bad.yaml")
    assert {p.path for p in caught.value.problems} == {
        f"{C}.gpuPools[0].name",
        f"{C}.gpuPools[1].name",
        "mlplatform:teams[0].contributors[1].email",
    }


def test_kueues_default_flavor_is_a_reserved_pool_name() -> None:
    """Every pool gets a ResourceFlavor of its name beside the default one."""
    from components.kueue import DEFAULT_FLAVOR
    from stackmodel.schema import RESERVED_POOL_NAMES

    assert DEFAULT_FLAVOR in RESERVED_POOL_NAMES


def test_contributors_with_one_kfam_name_but_different_roles_are_valid() -> None:
    people = [{"email": "ana.b@x.com", "role": "edit"}, {"email": "ana-b@x.com", "role": "view"}]
    validate(with_changes(base_kind(), {"mlplatform:teams": [{"name": "vision", "owner": "a@acme.com", "contributors": people}]}), "ok")


@pytest.mark.parametrize("size", [HYPERDISK_BALANCED_MIN_GB - 1, 49, HYPERDISK_BALANCED_MAX_GB + 1])
def test_a_boot_disk_hyperdisk_balanced_cannot_hold_is_refused(size: int) -> None:
    """A4 and A3 Ultra boot from Hyperdisk Balanced (facts/gpu_catalog.py): the schema's range for
    a GPU pool's disk (50 to 65536 GB) lies within its 4 GiB to 64 TiB, so no size the loader
    takes fails at `pulumi up` for its disk type."""
    a4 = pool(accelerator="nvidia-b200", machineType="a4-highgpu-8g", diskSizeGb=size)
    with pytest.raises(ConfigError) as caught:
        validate(with_changes(base_gke(), {f"{C}.gpuPools": [a4], f"{C}.autoprovisioning": {"enabled": False}}), "bad.yaml")
    assert [p.path for p in caught.value.problems] == [f"{C}.gpuPools[0].diskSizeGb"]


def test_hyperdisk_balanced_bounds_of_a_gpu_pools_disk_are_taken() -> None:
    for size in (50, HYPERDISK_BALANCED_MAX_GB):
        a4 = pool(accelerator="nvidia-b200", machineType="a4-highgpu-8g", diskSizeGb=size)
        validate(with_changes(base_gke(), {f"{C}.gpuPools": [a4], f"{C}.autoprovisioning": {"enabled": False}}), "ok")


def test_every_namespace_the_platform_installs_into_is_no_team_name() -> None:
    """A team (a Profile) of one of these names would take the namespace over."""
    from components import cert_manager, dcgm, dra, gateway, jobset, kubeflow, kuberay, kueue, monitoring, trainer
    from stackmodel.schema import RESERVED_NAMESPACES

    installed = {m.NAMESPACE for m in (cert_manager, dcgm, dra, gateway, jobset, kubeflow, kuberay, kueue, monitoring, trainer)}
    assert installed | {kubeflow.DEX_NAMESPACE} <= set(RESERVED_NAMESPACES)
