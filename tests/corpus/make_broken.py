"""Write tests/corpus/broken/: stack files forked from the shipped ones with the mistakes
a new user makes (typos, wrong types and shapes, Windows encodings, names, ranges,
cross-field slips), each with the config paths it must be refused at.

    python tests/corpus/make_broken.py      # rewrites the corpus from the table below

Every file starts with a comment saying what is wrong and one `# expect: <path>` line per
path its error must name; files that are not UTF-8 carry those lines in `<name>.expect`
beside them. tests/test_broken_corpus.py plans every file (`python -m stacks plan`) and
checks that the committed files are what this table writes.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent / "broken"
C = "mlplatform:cluster"
K = "mlplatform:components"
T = "mlplatform:teams"


def shipped(name: str) -> str:
    """A fixture of tests/stacks/ (acme's examples as they shipped), whatever a fork's stacks/ holds."""
    return (ROOT / "tests" / "stacks" / f"Pulumi.{name}.yaml").read_text()


@dataclass(frozen=True)
class Broken:
    name: str
    what: str
    expect: tuple[str, ...]
    text: Callable[[], str | bytes]

    def files(self) -> dict[str, bytes]:
        header = f"# {self.what}\n" + "".join(f"# expect: {p}\n" for p in self.expect)
        body = self.text()
        if isinstance(body, bytes):
            return {f"{self.name}.yaml": body, f"{self.name}.expect": header.encode()}
        return {f"{self.name}.yaml": (header + body).encode()}


def overlays(base: str, *lines: str) -> Callable[[], str]:
    """The stack with components given by `lines` (`kueue: {values: ...}`), after its pipelines."""
    return edit(base, ("    pipelines: {}\n", "    pipelines: {}\n" + "".join(f"    {line}\n" for line in lines)))


KUEUE_KEPT = (
    "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nhealth: {healthProbeBindAddress: ':8081'}\n"
    "metrics: {bindAddress: ':8443', enableClusterQueueResources: true}\nwebhook: {port: 9443}\n"
    "leaderElection: {leaderElect: true, resourceName: c1f6bfd2.kueue.x-k8s.io}\ninternalCertManagement: {enable: true}\n"
)
"""Kueue's configuration as the platform writes it, but for waitForPodsReady and integrations."""
KUEUE_PODS_READY = "waitForPodsReady: {timeout: 20m, blockAdmission: false, requeuingStrategy: {timestamp: Eviction}}\n"


NLP_BUCKET = "      bucket: {}                       # Ray Train checkpoints; mounted in notebooks by the team's PodDefault\n"
"""The dev stack's line giving team nlp (a Ray team) its bucket."""


def edit(base: str, *pairs: tuple[str, str]) -> Callable[[], str]:
    def text() -> str:
        result = shipped(base)
        for old, new in pairs:
            if result.count(old) != 1:
                raise ValueError(f"{base}: {old!r} occurs {result.count(old)} times")
            result = result.replace(old, new)
        return result

    return text


def append(base: str, extra: str, *pairs: tuple[str, str]) -> Callable[[], str]:
    return lambda: edit(base, *pairs)() + extra


def encoded(base: str, encoding: str, bom: bytes = b"") -> Callable[[], bytes]:
    return lambda: bom + shipped(base).encode(encoding)


def top_level(base: str) -> Callable[[], str]:
    """The config keys without their `config:` parent: dedented to the top."""

    def text() -> str:
        lines = shipped(base).splitlines(keepends=True)
        return "".join(line[2:] if line.startswith("  ") else line for line in lines if line != "config:\n")

    return text


def literal(text: str) -> Callable[[], str]:
    return lambda: text


KIND_HEAD = "config:\n  mlplatform:cluster: {kind: kind}\n"
DEV_POOL = "      - {name: l4, accelerator: nvidia-l4, machineType: g2-standard-24, min: 0, max: 4, provisioning: spot}\n"
PROD_H100 = "      - name: h100\n"
DEV_VISION = "    - name: vision\n      owner: lead@acme.com\n"
DEV_NLP_RAY = "      ray: {name: ray, pool: l4, minWorkers: 0, maxWorkers: 2}\n"
KIND_NLP_RAY = '      ray: {name: ray, minWorkers: 1, maxWorkers: 2, workerCpu: "1", workerMemory: 4Gi}\n'
DEV_AUTH = "        kind: dex\n        staticUsers: [lead@acme.com, ana@acme.com, bo@acme.com, kim@acme.com, raj@acme.com]\n"
PROD_OIDC = '        oidc: {issuer: "https://accounts.google.com", clientId: 1234567890-kubeflow.apps.googleusercontent.com}\n'
LONG_EMAIL = "x" * 64 + "@" + "d" * 63 + "." + "e" * 63 + "." + "f" * 50 + ".com"

SHARED_VPC = (
    "    network:\n      existing: {hostProject: acme-net, network: shared-vpc, subnetwork: ml-us-central1, "
    "podsRange: pods, servicesRange: services}\n"
)
"""The dev cluster on a Shared VPC subnet (lines to insert after its privateNodes)."""

P0 = f"{C}.gpuPools[0]"
P1 = f"{C}.gpuPools[1]"
AUTH = f"{K}.kubeflow.auth"

CORPUS: tuple[Broken, ...] = (
    # --- the file: encodings and YAML --------------------------------------------------
    Broken("utf16-le-bom", "saved by PowerShell's `>` (UTF-16 LE with a byte-order mark)", ("file",), encoded("dev", "utf-16-le", b"\xff\xfe")),
    Broken("utf16-be-bom", "UTF-16 big-endian with a byte-order mark", ("file",), encoded("kind", "utf-16-be", b"\xfe\xff")),
    Broken("utf16-no-bom", "UTF-16 LE without a byte-order mark", ("file",), encoded("kind", "utf-16-le")),
    Broken("utf32", "UTF-32 with a byte-order mark", ("file",), encoded("prod", "utf-32")),
    Broken("latin1-comment", "a Latin-1 comment (an editor set to ISO-8859-1)", ("file",), lambda: ("# Betreuer: Jürgen Müller\n" + shipped("dev")).encode("latin-1")),
    Broken("cp1252-quotes", "Windows-1252 curly quotes pasted from a document", ("file",), lambda: ("# owner’s stack\n" + shipped("kind")).encode("cp1252")),  # noqa: RUF001 (the curly quote is the point)
    Broken("tab-indent", "a tab where YAML needs spaces", ("file",), edit("dev", ("    kind: gke\n", "\tkind: gke\n"))),
    Broken("unclosed-flow", "a flow mapping left open", ("file",), edit("dev", ("max: 3}\n", "max: 3\n"))),
    Broken("two-documents", "a second YAML document pasted below the first", ("file",), append("kind", "---\nconfig: {}\n")),
    Broken("list-at-top", "the whole file is a list", ("config",), literal("- config:\n    mlplatform:cluster: {kind: kind}\n")),
    Broken("config-a-string", "config: given a string", ("config",), literal("config: mlplatform:cluster\n")),
    Broken("empty-file", "an empty stack file", (C,), literal("")),
    Broken("duplicate-teams", "mlplatform:teams twice: the first list would be lost", (T,), append("dev", "  mlplatform:teams:\n    - {name: extra, owner: kim@acme.com}\n")),
    Broken("duplicate-pool-max", "max twice in one pool", (f"{P0}.max",), edit("dev", ("max: 4, provisioning: spot}", "max: 4, max: 8, provisioning: spot}"))),
    Broken("duplicate-location", "the cluster's location twice", (f"{C}.location",), edit("dev", ("    location: us-central1\n", "    location: us-central1\n    location: europe-west4\n"))),
    Broken("duplicate-team-name-key", "name twice in one team", (f"{T}[0].name",), edit("dev", (DEV_VISION, "    - name: vision\n      name: vision2\n      owner: lead@acme.com\n"))),
    Broken("duplicate-config", "two config: sections", ("config",), append("kind", "config:\n  mlplatform:environment: ci\n")),
    Broken("bool-key", "an unquoted yes as a key", (f"{C}.yes",), edit("dev", ("    privateNodes: true\n", "    privateNodes: true\n    yes: true\n"))),
    Broken("number-key", "a number as a NAP limit name", (f"{C}.autoprovisioning.limits.100",), edit("dev", ("nvidia-l4: 24}", "nvidia-l4: 24, 100: 4}"))),
    Broken("on-key", "`on:` under components, which YAML 1.1 reads as true", (f"{K}.on",), edit("dev", ("  mlplatform:components:\n", "  mlplatform:components:\n    on: [kueue]\n"))),
    # --- the top level and the namespaces ---------------------------------------------
    Broken("no-config-parent", "the config keys written at the top, config: forgotten", ("mlplatform:environment", C, K, T, "gcp:project", C), top_level("dev")),
    Broken("configs-typo", "configs: instead of config:", ("configs", C), edit("kind", ("config:\n", "configs:\n"))),
    Broken("enviroment-typo", "a misspelt top-level key", ("enviroment",), append("kind", "enviroment: [acme/dev]\n")),
    Broken("secretprovider-typo", "secretprovider for secretsprovider", ("secretprovider",), append("prod", "secretprovider: gcpkms://projects/acme/locations/global/keyRings/r/cryptoKeys/k\n")),
    Broken("platform-env-at-top", "environment: prod at the top, meant as mlplatform:environment", ("environment",), append("kind", "environment: prod\n")),
    Broken("namespace-typo-teams", "mlplatfrom:teams: every team silently dropped today", ("mlplatfrom:teams",), edit("dev", ("  mlplatform:teams:\n", "  mlplatfrom:teams:\n"))),
    Broken("namespace-typo-cluster", "mlpaltform:cluster, so no cluster at all", ("mlpaltform:cluster", C), edit("kind", ("  mlplatform:cluster:\n", "  mlpaltform:cluster:\n"))),
    Broken("no-namespace-teams", "teams: without its namespace", ("teams",), edit("kind", ("  mlplatform:teams:\n", "  teams:\n"))),
    Broken("no-namespace-project", "project: without gcp:", ("project", "gcp:project"), edit("dev", ("  gcp:project: acme-ml-dev\n", "  project: acme-ml-dev\n"))),
    Broken("gpc-typo", "gpc:project for gcp:project", ("gpc:project", "gcp:project"), edit("prod", ("  gcp:project: acme-ml-prod\n", "  gpc:project: acme-ml-prod\n"))),
    Broken("capital-namespace", "Mlplatform:components with a capital", ("Mlplatform:components",), edit("kind", ("  mlplatform:components:\n", "  Mlplatform:components:\n"))),
    Broken("unknown-namespace", "a namespace no provider of this program reads", ("k8s:context",), append("kind", "  k8s:context: kind-mlplatform\n")),
    Broken("singular-team", "mlplatform:team (singular)", ("mlplatform:team",), edit("dev", ("  mlplatform:teams:\n", "  mlplatform:team:\n"))),
    Broken("singular-component", "mlplatform:component (singular)", ("mlplatform:component",), edit("prod", ("  mlplatform:components:\n", "  mlplatform:component:\n"))),
    # --- secrets ----------------------------------------------------------------------
    Broken("plain-grafana-password", "the Grafana password typed into the file", ("mlplatform:grafanaAdminPassword",), append("dev", "  mlplatform:grafanaAdminPassword: hunter2\n")),
    Broken("plain-dex-hashes", "bcrypt hashes pasted in plain text", ("mlplatform:dexPasswordHashes",), append("kind", "  mlplatform:dexPasswordHashes:\n    lead@example.com: $2y$12$abcdefghijklmnopqrstuvabcdefghijklmnopqrstuvwxyz01234\n")),
    Broken("half-secret-hashes", "one hash encrypted, one not", ("mlplatform:dexPasswordHashes",), append("kind", "  mlplatform:dexPasswordHashes:\n    lead@example.com: {secure: v1:AAAA}\n    ana@example.com: $2y$12$plain\n")),
    Broken("plain-oidc-secret", "the OIDC client secret in plain text", ("mlplatform:oidcClientSecret",), append("prod", "  mlplatform:oidcClientSecret: GOCSPX-abcdef\n")),
    Broken("plain-iap-secret", "the IAP client secret as a bare number", ("mlplatform:iapClientSecret",), append("prod", "  mlplatform:iapClientSecret: 123456\n")),
    Broken("encrypted-project", "gcp:project set with --secret: the schema must read it", ("gcp:project",), edit("dev", ("  gcp:project: acme-ml-dev\n", "  gcp:project: {secure: v1:AAAAbbbb}\n"))),
    Broken("inline-esc-plain-secret", "an inline ESC environment with a plain password", ("environment.values.pulumiConfig.mlplatform:grafanaAdminPassword",), append("dev", "environment:\n  values:\n    pulumiConfig:\n      mlplatform:grafanaAdminPassword: hunter2\n")),
    # --- ESC environment shapes -------------------------------------------------------
    Broken("esc-string", "environment: one name, not a list", ("environment",), append("dev", "environment: acme/dev\n")),
    Broken("esc-number-import", "an import that is not a name", ("environment[1]",), append("dev", "environment: [acme/base, 42]\n")),
    Broken("esc-import-typo", "import: for imports: in an inline definition", ("environment.import",), append("dev", "environment:\n  import: [acme/base]\n")),
    Broken("esc-cluster-elsewhere", "the cluster expected from an environment the tools cannot open", (C,), literal("environment: [acme/platform]\nconfig:\n  gcp:project: acme-ml-dev\n")),
    # --- types and values -------------------------------------------------------------
    Broken("max-in-words", "max: four", (f"{P0}.max",), edit("dev", ("max: 4, provisioning", "max: four, provisioning"))),
    Broken("negative-min", "min: -1", (f"{P0}.min",), edit("dev", ("min: 0, max: 4", "min: -1, max: 4"))),
    Broken("min-above-max", "min above max", (f"{P0}.min",), edit("prod", ("min: 0, max: 8", "min: 9, max: 8"))),
    Broken("accelerator-typo", "nvidia-l4s", (f"{P0}.accelerator",), edit("dev", ("accelerator: nvidia-l4,", "accelerator: nvidia-l4s,"))),
    Broken("wrong-machine", "an N2 machine for L4 GPUs", (f"{P0}.machineType",), edit("dev", ("machineType: g2-standard-24, min", "machineType: n2-standard-8, min"))),
    Broken("preemptible", "provisioning: preemptible (the old word for spot)", (f"{P0}.provisioning",), edit("dev", ("provisioning: spot}", "provisioning: preemptible}"))),
    Broken("channel-lowercase", "releaseChannel: regular", (f"{C}.releaseChannel",), edit("dev", ("releaseChannel: REGULAR", "releaseChannel: regular"))),
    Broken("location-no-number", "location: us-central", (f"{C}.location",), edit("dev", ("    location: us-central1\n", "    location: us-central\n"))),
    Broken("location-upper", "location in capitals", (f"{C}.location",), edit("prod", ("    location: us-central1\n", "    location: US-CENTRAL1\n"))),
    Broken("private-maybe", "privateNodes: maybe", (f"{C}.privateNodes",), edit("dev", ("privateNodes: true", "privateNodes: maybe"))),
    Broken("system-pool-zero", "a system pool of zero nodes", (f"{C}.systemPool.min",), edit("dev", ("min: 1, max: 3}", "min: 0, max: 3}"))),
    Broken("tiny-disk", "a 10 GB boot disk", (f"{C}.systemPool.diskSizeGb",), edit("dev", ("min: 1, max: 3}", "min: 1, max: 3, diskSizeGb: 10}"))),
    Broken("nap-resource-name", "NAP limit by resource name", (f"{C}.autoprovisioning.limits.nvidia.com/gpu",), edit("dev", ("nvidia-l4: 24}", "nvidia-l4: 24, nvidia.com/gpu: 8}"))),
    Broken("nap-below-pools", "NAP limit below what the pools can grow to", (f"{C}.autoprovisioning.limits.nvidia-l4",), edit("dev", ("nvidia-l4: 24}", "nvidia-l4: 4}"))),
    Broken("nap-without-cpu", "NAP on without a cpu limit", (f"{C}.autoprovisioning.limits",), edit("dev", ("limits: {cpu: 512, memory: 2048,", "limits: {memory: 2048,"))),
    Broken("cidr-a-word", "an authorized network named where its range goes", (f"{C}.masterAuthorizedNetworks[0].cidr",), edit("prod", ("{cidr: 203.0.113.0/24, name: office}", "{cidr: office, name: office}"))),
    Broken("cidr-no-name", "an authorized network without a name", (f"{C}.masterAuthorizedNetworks[1].name",), edit("prod", ("{cidr: 198.51.100.0/27, name: ci-runners}", "{cidr: 198.51.100.0/27}"))),
    Broken("cidr-host-bits", "a range with host bits set", (f"{C}.masterAuthorizedNetworks[0].cidr",), edit("prod", ("{cidr: 203.0.113.0/24, name: office}", "{cidr: 203.0.113.7/24, name: office}"))),
    Broken("pods-overlap", "the pod range over the node range", (f"{C}.network.podsCidr",), edit("dev", ("    privateNodes: true\n", "    privateNodes: true\n    network: {podsCidr: 10.0.0.0/14}\n"))),
    Broken("master-slash-24", "a /24 control-plane range", (f"{C}.network.masterCidr",), edit("dev", ("    privateNodes: true\n", "    privateNodes: true\n    network: {masterCidr: 172.16.0.0/24}\n"))),
    Broken("environment-production", "mlplatform:environment: production", ("mlplatform:environment",), edit("prod", ("  mlplatform:environment: prod\n", "  mlplatform:environment: production\n"))),
    Broken("kind-gke-capital", "kind: GKE", (f"{C}.kind",), edit("dev", ("    kind: gke\n", "    kind: GKE\n"))),
    Broken("cluster-kind-missing", "the cluster without its kind", (f"{C}.kind",), edit("dev", ("    kind: gke\n", ""))),
    Broken("kind-workers", "20 kind workers", (f"{C}.workers",), edit("kind", ("    workers: 2\n", "    workers: 20\n"))),
    Broken("kind-with-gpu-pools", "a dev stack switched to kind, GPU pools kept", (f"{C}.gpuPools", f"{C}.releaseChannel"), edit("dev", ("    kind: gke\n", "    kind: kind\n"), ("    location: us-central1\n", ""), ("    privateNodes: true\n", ""), ("    systemPool: {machineType: e2-standard-8, min: 1, max: 3}\n", ""), ("    autoprovisioning:\n      enabled: true\n      limits: {cpu: 512, memory: 2048, nvidia-l4: 24}\n", ""))),
    Broken("owner-not-email", "an owner without a domain", (f"{T}[0].owner",), edit("dev", ("      owner: lead@acme.com\n", "      owner: lead\n"))),
    Broken("contributor-admin", "a contributor role of admin", (f"{T}[0].contributors[0].role",), edit("dev", ("{email: ana@acme.com, role: edit}", "{email: ana@acme.com, role: admin}"))),
    Broken("memory-lots", "quota memory: lots", (f"{T}[0].quota.memory",), edit("dev", ('cpu: "64", memory: 256Gi', 'cpu: "64", memory: lots'))),
    Broken("memory-gb", "quota memory in GB (not a Kubernetes suffix)", (f"{T}[0].quota.memory",), edit("dev", ('cpu: "64", memory: 256Gi', 'cpu: "64", memory: 256GB'))),
    Broken("negative-cpu", "a negative CPU quota", (f"{T}[0].quota.cpu",), edit("dev", ('cpu: "64", memory: 256Gi', 'cpu: "-4", memory: 256Gi'))),
    Broken("negative-gpus", "a negative GPU quota", (f"{T}[0].quota.gpus.nvidia-l4",), edit("dev", ("quota: {gpus: {nvidia-l4: 8}", "quota: {gpus: {nvidia-l4: -8}"))),
    Broken("team-capital", "a team name with a capital", (f"{T}[0].name",), edit("dev", (DEV_VISION, "    - name: Vision\n      owner: lead@acme.com\n"))),
    Broken("team-kube-system", "a team in kube-system", (f"{T}[0].name",), edit("kind", ("    - name: vision\n", "    - name: kube-system\n"))),
    Broken("team-name-64", "a 64-character team name", (f"{T}[0].name",), edit("kind", ("    - name: vision\n", "    - name: " + "v" * 64 + "\n"))),
    Broken("retention-words", "retention: 2 weeks", (f"{K}.monitoring.retention",), edit("prod", ("retention: 30d", "retention: 2 weeks"))),
    Broken("storage-no-unit", "storageSize: 200 (bytes)", (f"{K}.monitoring.storageSize",), edit("prod", ("storageSize: 200Gi", "storageSize: 200"))),
    Broken("idle-threshold-zero", "idleGpuThreshold: 0", (f"{K}.monitoring.idleGpuThreshold",), edit("prod", ("storageSize: 200Gi,", "storageSize: 200Gi, idleGpuThreshold: 0,"))),
    Broken("temperature-fahrenheit", "the GPU temperature alert in Fahrenheit", (f"{K}.monitoring.gpuTemperatureCelsius",), edit("prod", ("storageSize: 200Gi,", "storageSize: 200Gi, gpuTemperatureCelsius: 185,"))),
    Broken("mig-on-l4", "MIG on an L4", (f"{P0}.sharing",), edit("dev", ("provisioning: spot}", "provisioning: spot, sharing: {strategy: mig, partitionSize: 1g.10gb}}"))),
    Broken("time-sharing-no-clients", "time-sharing without maxSharedClients", (f"{P0}.sharing.maxSharedClients",), edit("dev", ("provisioning: spot}", "provisioning: spot, sharing: {strategy: time-sharing}}"))),
    Broken("ray-min-above-max", "more minimum Ray workers than maximum", (f"{T}[1].ray.minWorkers",), edit("dev", (DEV_NLP_RAY, "      ray: {name: ray, pool: l4, minWorkers: 3, maxWorkers: 2}\n"))),
    Broken("ray-cpu-words", "workerCpu: four", (f"{T}[1].ray.workerCpu",), edit("kind", (KIND_NLP_RAY, '      ray: {name: ray, minWorkers: 1, maxWorkers: 2, workerCpu: four, workerMemory: 4Gi}\n'))),
    Broken("teams-mapping", "teams as a mapping by name", (T,), edit("kind", ("  mlplatform:teams:\n    - name: vision\n", "  mlplatform:teams:\n    vision:\n      name: vision\n"), ("    - name: nlp\n", "    nlp:\n      name: nlp\n"), ("    - name: research\n", "    research:\n      name: research\n"))),
    Broken("pools-mapping", "gpuPools as a mapping", (f"{C}.gpuPools",), edit("dev", ("    gpuPools:\n      - {name: l4,", "    gpuPools:\n      l4: {name: l4,"))),
    Broken("contributors-strings", "contributors as bare e-mails", (f"{T}[0].contributors[0]",), edit("dev", ("contributors: [{email: ana@acme.com, role: edit}, {email: bo@acme.com, role: view}]", "contributors: [ana@acme.com, bo@acme.com]"))),
    Broken("static-users-string", "staticUsers as one comma-separated string", (f"{AUTH}.staticUsers",), edit("dev", ("staticUsers: [lead@acme.com, ana@acme.com, bo@acme.com, kim@acme.com, raj@acme.com]", "staticUsers: lead@acme.com, ana@acme.com"))),
    # --- names ------------------------------------------------------------------------
    Broken("project-underscores", "a project ID with underscores and capitals", ("gcp:project",), edit("dev", ("gcp:project: acme-ml-dev", "gcp:project: Acme_ML_Dev"))),
    Broken("project-number", "the project number for its ID", ("gcp:project",), edit("dev", ("gcp:project: acme-ml-dev", 'gcp:project: "123456789012"'))),
    Broken("project-short", "a 4-character project ID", ("gcp:project",), edit("prod", ("gcp:project: acme-ml-prod", "gcp:project: acme"))),
    Broken("bucket-spaces", "a bucket name with a space and capitals", (f"{T}[0].bucket.name",), edit("dev", ("      bucket: {}\n", "      bucket: {name: Vision Data}\n"))),
    Broken("bucket-goog", "a bucket name starting with goog", (f"{T}[0].bucket.name",), edit("dev", ("      bucket: {}\n", "      bucket: {name: goog-vision-data}\n"))),
    Broken("bucket-google", "a bucket name containing google", (f"{T}[0].bucket.name",), edit("prod", ("      bucket: {}\n", "      bucket: {name: acme-google-vision}\n"))),
    Broken("bucket-ip", "a bucket named like an IP address", (f"{T}[0].bucket.name",), edit("dev", ("      bucket: {}\n", '      bucket: {name: "10.20.30.40"}\n'))),
    Broken("bucket-gs-url", "the bucket as a gs:// URL", (f"{T}[0].bucket.name",), edit("dev", ("      bucket: {}\n", "      bucket: {name: gs://acme-vision}\n"))),
    Broken("bucket-default-too-long", "a long team name makes <project>-<team> over 63 characters", (f"{T}[0].bucket",), edit("dev", (DEV_VISION, "    - name: computer-vision-and-perception-research-group-emea-west\n      owner: lead@acme.com\n"))),
    Broken("bucket-default-goog", "a project starting with goog makes the default bucket name invalid", (f"{T}[0].bucket",), edit("dev", ("gcp:project: acme-ml-dev", "gcp:project: googly-ml-dev"))),
    Broken("bucket-shared", "two teams with one bucket", (f"{T}[1].bucket.name",), edit("dev", ("      bucket: {}\n", "      bucket: {name: acme-ml-data}\n"), (NLP_BUCKET, "      bucket: {name: acme-ml-data}\n"))),
    Broken("bucket-default-taken", "a bucket named what another team's default is", (f"{T}[1].bucket.name",), edit("dev", (NLP_BUCKET, "      bucket: {name: acme-ml-dev-vision}\n"))),
    Broken("bucket-zone", "a bucket location given as a zone", (f"{T}[0].bucket.location",), edit("dev", ("      bucket: {}\n", "      bucket: {location: us-central1-a}\n"))),
    Broken("bucket-europe", "a bucket location that is no location", (f"{T}[0].bucket.location",), edit("prod", ("      bucket: {}\n", "      bucket: {location: europe}\n"))),
    Broken("reservation-underscore", "a reservation name with an underscore", (f"{P1}.reservation",), edit("prod", ("        provisioning: queued\n", "        provisioning: reservation\n        reservation: H100_Reserved\n"), ("        max: 2\n", "        max: 2\n        min: 0\n"))),
    Broken("reservation-url", "a reservation given as a console URL", (f"{P0}.reservation",), edit("prod", ("provisioning: on-demand}", "provisioning: reservation, reservation: https://console.cloud.google.com/compute/reservations/l4}"))),
    Broken("reservation-without-mode", "a reservation name on an on-demand pool", (f"{P0}.reservation",), edit("prod", ("provisioning: on-demand}", "provisioning: on-demand, reservation: l4-block}"))),
    Broken("sa-collision", "cluster team-nlp and team nlp-nodes get one Google service-account id", (f"{T}[2].name",), edit("dev", ("    name: ml-dev\n", "    name: team-nlp\n"), ("    - name: research\n", "    - name: nlp-nodes\n"))),
    Broken("cluster-name-41", "a 41-character cluster name", (f"{C}.name",), edit("dev", ("    name: ml-dev\n", "    name: " + "m" * 41 + "\n"))),
    Broken("cluster-name-underscore", "a cluster name with an underscore", (f"{C}.name",), edit("prod", ("    name: ml-prod\n", "    name: ml_prod\n"))),
    Broken("pool-default", "a pool named default (Kueue's CPU flavor)", (f"{P0}.name",), edit("dev", ("{name: l4, accelerator", "{name: default, accelerator"), (DEV_NLP_RAY, "      ray: {name: ray, pool: default, minWorkers: 0, maxWorkers: 2}\n"))),
    Broken("pool-system", "a pool named system", (f"{P0}.name",), edit("prod", ("{name: l4, accelerator", "{name: system, accelerator"))),
    Broken("pool-capital", "a pool named L4", (f"{P0}.name",), edit("dev", ("{name: l4, accelerator", "{name: L4, accelerator"), (DEV_NLP_RAY, "      ray: {name: ray, pool: L4, minWorkers: 0, maxWorkers: 2}\n"))),
    Broken("pool-twice", "two pools of one name", (f"{P1}.name",), edit("prod", (PROD_H100, "      - name: l4\n"))),
    Broken("weight-without-cohort", "a fair-share weight on a team in no cohort", (f"{T}[0].weight",), edit("dev", ("      bucket: {}\n      pushImages: true", "      weight: 3\n      bucket: {}\n      pushImages: true"))),
    Broken("weight-without-fair-sharing", "a fair-share weight with Kueue's fair sharing switched off", (f"{T}[1].weight",), overlays("dev", "kueue: {fairSharing: false}")),
    Broken("weight-negative", "a negative fair-share weight", (f"{T}[1].weight",), edit("dev", ("      weight: 2 ", "      weight: -1 "))),
    Broken("cohort-spaces", "a cohort name with a space", (f"{T}[1].cohort",), edit("dev", ("      cohort: research\n" + NLP_BUCKET, "      cohort: Research Team\n" + NLP_BUCKET))),
    Broken("kfam-collision", "ana.b and ana-b with one role: KFAM gives them one binding", (f"{T}[0].contributors[1].email",), edit("kind", ("{email: ana@example.com, role: edit}, {email: bo@example.com, role: view}", "{email: ana.b@example.com, role: edit}, {email: ana-b@example.com, role: edit}"), ("staticUsers: [lead@example.com,", "staticUsers: [ana.b@example.com, ana-b@example.com, lead@example.com,"))),
    Broken("kfam-name-too-long", "an address whose KFAM binding name is over 253 characters", (f"{T}[0].contributors[0].email",), edit("kind", ("{email: ana@example.com, role: edit}, ", f"{{email: {LONG_EMAIL}, role: edit}}, {{email: ana@example.com, role: edit}}, "), ("staticUsers: [lead@example.com,", f"staticUsers: [{LONG_EMAIL}, lead@example.com,"))),
    Broken("team-twice", "two teams of one name", (f"{T}[2].name",), edit("dev", ("    - name: research\n", "    - name: nlp\n"))),
    Broken("ray-name-capital", "a Ray cluster name with a capital", (f"{T}[1].ray.name",), edit("kind", (KIND_NLP_RAY, '      ray: {name: Ray, minWorkers: 1, maxWorkers: 2, workerCpu: "1", workerMemory: 4Gi}\n'))),
    # --- URLs, hostnames, zones -------------------------------------------------------
    Broken("hostname-url", "the hostname written as a URL", (f"{AUTH}.hostname",), edit("prod", ("hostname: kubeflow.acme.com", "hostname: https://kubeflow.acme.com"))),
    Broken("hostname-path", "the hostname with a path", (f"{AUTH}.hostname",), edit("prod", ("hostname: kubeflow.acme.com", "hostname: kubeflow.acme.com/dex"))),
    Broken("hostname-capital", "the hostname with capitals", (f"{AUTH}.hostname",), edit("prod", ("hostname: kubeflow.acme.com", "hostname: Kubeflow.Acme.com"))),
    Broken("hostname-wildcard", "a wildcard hostname", (f"{AUTH}.hostname",), edit("prod", ("hostname: kubeflow.acme.com", 'hostname: "*.acme.com"'))),
    Broken("issuer-no-scheme", "an issuer without https://", (f"{AUTH}.oidc.issuer",), edit("prod", (PROD_OIDC, "        oidc: {issuer: accounts.google.com, clientId: 1234567890-kubeflow.apps.googleusercontent.com}\n"))),
    Broken("issuer-http", "an issuer over plain http", (f"{AUTH}.oidc.issuer",), edit("prod", (PROD_OIDC, '        oidc: {issuer: "http://login.acme.com", clientId: x}\n'))),
    Broken("zone-west10", "europe-west10-a in a europe-west1 cluster", (f"{P1}.zones",), edit("prod", ("    location: us-central1\n", "    location: europe-west1\n"), ("        zones: [us-central1-a]\n", "        zones: [europe-west10-a]\n"))),
    Broken("zone-other-region", "a zone of another region", (f"{P1}.zones",), edit("prod", ("        zones: [us-central1-a]\n", "        zones: [us-east1-b]\n"))),
    Broken("zone-is-region", "a region where a zone goes", (f"{P1}.zones",), edit("prod", ("        zones: [us-central1-a]\n", "        zones: [us-central1]\n"))),
    Broken("zone-twice", "one zone listed twice", (f"{P1}.zones",), edit("prod", ("        compactPlacement: true\n", ""), ("        zones: [us-central1-a]\n", "        zones: [us-central1-a, us-central1-a]\n"))),
    Broken("compact-two-zones", "compact placement across two zones", (f"{P1}.zones",), edit("prod", ("        zones: [us-central1-a]\n", "        zones: [us-central1-a, us-central1-b]\n"))),
    Broken("zone-typo", "a zone with a digit for its letter", (f"{P1}.zones",), edit("prod", ("        zones: [us-central1-a]\n", "        zones: [us-central1-1]\n"))),
    # --- cross-field ------------------------------------------------------------------
    Broken("teams-without-kueue", "Kueue off, teams still get queues", (f"{K}.kueue.enabled",), edit("kind", ("  mlplatform:components:\n", "  mlplatform:components:\n    kueue: {enabled: false}\n"))),
    Broken("queued-without-kueue", "Kueue off with a queued pool and teams", (f"{P1}.provisioning", f"{K}.kueue.enabled"), edit("prod", ("  mlplatform:components:\n", "  mlplatform:components:\n    kueue: {enabled: false}\n"))),
    Broken("teams-without-kubeflow", "Kubeflow off, teams kept", (T,), edit("kind", ("    kubeflow:\n      auth:\n", "    kubeflow:\n      enabled: false\n      auth:\n"), ("    pipelines: {}\n", "    pipelines: {enabled: false}\n"))),
    Broken("katib-without-trainer", "Katib on, the trainer its trials run on off", (f"{K}.trainer.enabled",), overlays("kind", "katib: {enabled: true}", "trainer: {enabled: false}")),
    Broken("model-registry-without-a-database", "a Model Registry on Cloud SQL on a kind cluster", (f"{K}.modelRegistry.database",), overlays("kind", "modelRegistry: {enabled: true, database: cloudSql}")),
    Broken("model-registry-database-typo", "a Model Registry database no one offers", (f"{K}.modelRegistry.database",), overlays("kind", "modelRegistry: {enabled: true, database: postgres}")),
    Broken("spark-without-kubeflow", "the Spark operator on, Kubeflow off", (f"{K}.kubeflow.enabled",), edit("kind", ("    kubeflow:\n      auth:\n", "    kubeflow:\n      enabled: false\n      auth:\n"), ("    pipelines: {}\n", "    pipelines: {enabled: false}\n    spark: {enabled: true}\n")), ),
    Broken("pipelines-without-kubeflow", "Kubeflow off under Pipelines", (f"{K}.kubeflow.enabled",), edit("kind", ("    kubeflow:\n      auth:\n", "    kubeflow:\n      enabled: false\n      auth:\n"))),
    Broken("pipelines-team-without-bucket", "a gke team that runs pipelines without a bucket", (f"{T}[2].bucket",), edit("dev", ("      bucket: {}                       # its pipeline root (every gke team that runs pipelines has one)\n", ""))),
    Broken("kubeflow-without-istio", "Istio off under Kubeflow", (f"{K}.istio.enabled",), edit("dev", ("  mlplatform:components:\n", "  mlplatform:components:\n    istio: {enabled: false}\n"))),
    Broken("trainer-without-jobset", "JobSet off under Trainer", (f"{K}.jobset.enabled",), edit("kind", ("  mlplatform:components:\n", "  mlplatform:components:\n    jobset: {enabled: false}\n"))),
    Broken("ray-without-kuberay", "KubeRay off, a team Ray cluster kept", (f"{T}[1].ray",), edit("dev", ("  mlplatform:components:\n", "  mlplatform:components:\n    kuberay: {enabled: false}\n"))),
    Broken("ray-missing-pool", "a Ray cluster on a pool that is not there", (f"{T}[1].ray.pool",), edit("dev", (DEV_NLP_RAY, "      ray: {name: ray, pool: a100, minWorkers: 0, maxWorkers: 2}\n"))),
    Broken("quota-gpu-absent", "a quota for GPUs no pool has", (f"{T}[0].quota.gpus.nvidia-h100-80gb",), edit("dev", ("quota: {gpus: {nvidia-l4: 8}", "quota: {gpus: {nvidia-l4: 8, nvidia-h100-80gb: 8}"))),
    Broken("prod-on-kind", "a kind stack marked prod", ("mlplatform:environment",), edit("kind", ("  mlplatform:environment: dev\n", "  mlplatform:environment: prod\n"))),
    Broken("dcgm-on-kind", "the DCGM exporter forced on kind", (f"{K}.dcgmExporter.enabled",), edit("kind", ("  mlplatform:components:\n", "  mlplatform:components:\n    dcgmExporter: {enabled: true}\n"))),
    Broken("hostname-on-kind", "a public hostname on kind", (f"{K}.kubeflow.auth",), edit("kind", ("        kind: dex\n", "        kind: dex\n        hostname: kubeflow.example.com\n"))),
    Broken("bucket-on-kind", "a team bucket on kind", (f"{T}[0].bucket",), edit("kind", ('      quota: {cpu: "8", memory: 32Gi}\n    - name: nlp\n', '      quota: {cpu: "8", memory: 32Gi}\n      bucket: {}\n    - name: nlp\n'))),
    Broken("owner-not-dex-user", "a team owner left out of the Dex users", (f"{T}[2].owner",), edit("dev", (DEV_AUTH, "        kind: dex\n        staticUsers: [lead@acme.com, ana@acme.com, bo@acme.com, kim@acme.com]\n"))),
    Broken("group-source-unknown", "a group from a source the platform does not know (ldap)", (f"{AUTH}.groups[0].source",), edit("dev", (DEV_AUTH, DEV_AUTH + "        groups: [{name: ml-nlp@acme.com, source: ldap, members: [ana@acme.com]}]\n"), ("{email: bo@acme.com, role: edit}]\n      quota: {gpus: {nvidia-l4: 4}", "{email: bo@acme.com, role: edit}, {group: ml-nlp@acme.com, role: edit}]\n      quota: {gpus: {nvidia-l4: 4}"))),
    Broken("group-sign-in-sends-none", "a group from the identity provider, whose sign-in (Google) sends no groups", (f"{AUTH}.groups[0].source",), edit("prod", ("        allowedDomains: [acme.com]\n", "        allowedDomains: [acme.com]\n        groups: [{name: ml-vision@acme.com, source: provider}]\n"), ("contributors: [{email: ana@acme.com, role: edit}]\n", "contributors: [{email: ana@acme.com, role: edit}, {group: ml-vision@acme.com, role: view}]\n"))),
    Broken("group-person-binding-collision", "a group member also listed as a person with the group's role: one binding name", (f"{T}[1].contributors[2].group",), edit("dev", (DEV_AUTH, DEV_AUTH + "        groups: [{name: ml-nlp@acme.com, members: [bo@acme.com]}]\n"), ("{email: bo@acme.com, role: edit}]\n      quota: {gpus: {nvidia-l4: 4}", "{email: bo@acme.com, role: edit}, {group: ml-nlp@acme.com, role: edit}]\n      quota: {gpus: {nvidia-l4: 4}"))),
    Broken("group-cloud-identity-on-kind", "a Google group read from Cloud Identity on a kind stack, which has no Google provider", (f"{AUTH}.groups[0].source",), edit("kind", ("        staticUsers: [lead@example.com, ana@example.com, bo@example.com, kim@example.com, raj@example.com]\n", "        staticUsers: [lead@example.com, ana@example.com, bo@example.com, kim@example.com, raj@example.com]\n        groups: [{name: ml-nlp@example.com, source: cloudIdentity}]\n"), ("contributors: [{email: ana@example.com, role: view}]\n", "contributors: [{email: ana@example.com, role: view}, {group: ml-nlp@example.com, role: edit}]\n"))),
    Broken("group-cloud-identity-with-members", "a Google group read from Cloud Identity that lists members too: two truths", (f"{AUTH}.groups[0].members",), edit("prod", ("        allowedDomains: [acme.com]\n", "        allowedDomains: [acme.com]\n        groups: [{name: ml-vision@acme.com, source: cloudIdentity, members: [ana@acme.com]}]\n"), ("contributors: [{email: ana@acme.com, role: edit}]\n", "contributors: [{email: ana@acme.com, role: edit}, {group: ml-vision@acme.com, role: view}]\n"))),
    Broken("contributor-not-dex-user", "a contributor left out of the Dex users", (f"{T}[0].contributors[1].email",), edit("kind", ("staticUsers: [lead@example.com, ana@example.com, bo@example.com,", "staticUsers: [lead@example.com, ana@example.com,"))),
    Broken("ray-worker-whole-node", "a Ray worker as large as its machine", (f"{T}[1].ray.workerCpu",), edit("dev", (DEV_NLP_RAY, '      ray: {name: ray, pool: l4, minWorkers: 0, maxWorkers: 2, workerCpu: "24"}\n'))),
    Broken("ray-worker-memory", "a Ray worker with more memory than its machine", (f"{T}[1].ray.workerMemory",), edit("dev", (DEV_NLP_RAY, "      ray: {name: ray, pool: l4, minWorkers: 0, maxWorkers: 2, workerMemory: 96Gi}\n"))),
    Broken("ray-worker-over-quota", "a Ray worker larger than the team's quota", (f"{T}[1].ray.workerCpu", f"{T}[1].ray.workerMemory"), edit("kind", (KIND_NLP_RAY, '      ray: {name: ray, minWorkers: 1, maxWorkers: 2, workerCpu: "16", workerMemory: 64Gi}\n'))),
    Broken("ray-gpus-over-quota", "a Ray worker taking more GPUs than the team may", (f"{T}[1].ray.pool",), edit("dev", ("      quota: {gpus: {nvidia-l4: 4}, cpu: \"32\", memory: 128Gi}\n      cohort: research\n" + NLP_BUCKET, "      quota: {gpus: {nvidia-l4: 1}, cpu: \"32\", memory: 128Gi}\n      cohort: research\n" + NLP_BUCKET))),
    Broken("ray-cpu-worker-small-system-pool", "CPU Ray workers bigger than the system pool, NAP off", (f"{T}[1].ray.workerCpu",), edit("dev", ("      enabled: true\n", "      enabled: false\n"), (DEV_NLP_RAY, '      ray: {name: ray, minWorkers: 0, maxWorkers: 2, workerCpu: "12"}\n'))),
    Broken("iap-without-client", "IAP on without its client ID", (f"{AUTH}.iap",), edit("prod", ("        iapClientId: 1234567890-iap.apps.googleusercontent.com\n", ""))),
    Broken("oidc-without-settings", "kind oidc without the provider", (f"{AUTH}.oidc",), edit("prod", (PROD_OIDC, ""))),
    Broken("dex-with-oidc-settings", "oidc settings under kind dex", (f"{AUTH}.oidc",), edit("prod", ("        kind: oidc\n", "        kind: dex\n"), ("        allowedDomains: [acme.com]\n", ""))),
    Broken("managed-backend-no-gmp", "the managed monitoring backend without managed Prometheus", (f"{K}.monitoring.backend",), edit("prod", ("monitoring: {retention: 30d, storageSize: 200Gi, grafanaAdmins: [lead@acme.com]}", "monitoring: {backend: gke-managed}"))),
    Broken("managed-dcgm-no-gmp", "GKE's managed DCGM without managed Prometheus", (f"{K}.dcgmExporter.source",), edit("dev", ("  mlplatform:components:\n", "  mlplatform:components:\n    dcgmExporter: {source: gke-managed}\n"))),
    Broken("fast-socket-no-gvnic", "Fast Socket with gVNIC off", (f"{P1}.fastSocket",), edit("prod", ("        fastSocket: true\n", "        fastSocket: true\n        gvnic: false\n"))),
    Broken("compact-on-t4", "compact placement on T4 (N1) machines", (f"{P0}.compactPlacement",), edit("dev", (DEV_POOL, "      - {name: t4, accelerator: nvidia-tesla-t4, machineType: n1-standard-8, max: 4, compactPlacement: true, zones: [us-central1-a]}\n"), ("nvidia-l4: 24}", "nvidia-l4: 24, nvidia-tesla-t4: 4}"), ("pool: l4,", "pool: t4,"))),
    Broken("queued-min-one", "a queued pool that keeps a node", (f"{P1}.min",), edit("prod", ("        max: 2\n", "        max: 2\n        min: 1\n"))),
    Broken("nap-misses-h100", "NAP limits without the H100 pool's accelerator", (f"{C}.autoprovisioning.limits.nvidia-h100-80gb",), edit("prod", ("nvidia-l4: 48, nvidia-h100-80gb: 16}", "nvidia-l4: 48}"))),
    Broken("owner-also-contributor", "the owner listed as a contributor too", (f"{T}[0].contributors[0].email",), edit("prod", ("contributors: [{email: ana@acme.com, role: edit}]", "contributors: [{email: lead@acme.com, role: edit}]"))),
    Broken("mirror-s3", "a chart mirror on S3", ("mlplatform:sources.charts",), append("dev", "  mlplatform:sources: {charts: s3://acme-charts}\n")),
    Broken("sources-typo", "sources.chart for sources.charts", ("mlplatform:sources.chart",), append("kind", "  mlplatform:sources: {chart: oci://europe-docker.pkg.dev/acme/charts}\n")),
    Broken("two-leader-worker-sets", "Trainer's data cache installing LeaderWorkerSet beside the component", (f"{K}.trainer.values.dataCache",), edit("kind", ("  mlplatform:components:\n", "  mlplatform:components:\n    trainer: {values: {dataCache: {enabled: true}}}\n"))),
    Broken("gke-inference-gateway-on-kind", "GKE Inference Gateway on kind", (f"{K}.inferenceGateway.provider",), edit("kind", ("    inferenceGateway: {enabled: true}\n", "    inferenceGateway: {enabled: true, provider: gke}\n"))),
    Broken("gke-gateway-existing-network-no-proxy-only-subnet", "GKE Inference Gateway on an existing network without its proxy-only subnet's range", (f"{K}.inferenceGateway.proxyOnlySubnetRange",), edit("dev-shared-vpc", (", proxyOnlySubnetRange: 10.129.0.0/23}\n", "}\n"))),
    Broken("llm-team-publishers", "a team named like the prefix of every team's published LLMs", (f"{T}[1].name",), edit("kind", ("    - name: nlp\n", "    - name: publishers\n"))),
    Broken("llm-serving-without-lws", "LLM serving with LeaderWorkerSet off", (f"{K}.serving.llm",), edit("kind", ("    leaderWorkerSet: {enabled: true}\n", "    leaderWorkerSet: {enabled: false}\n"))),
    Broken("ray-addon-on-kind", "GKE's Ray add-on on kind", (f"{K}.kuberay.source",), edit("kind", ("  mlplatform:components:\n", "  mlplatform:components:\n    kuberay: {source: gke-addon}\n"))),
    Broken("deletion-protection-string", "deletionProtection given a word, not a boolean", (f"{C}.deletionProtection",), edit("prod", ("    deletionProtection: true\n", '    deletionProtection: "enabled"\n'))),
    # --- identities: spelled as upstream compares them ------------------------------------
    Broken("owner-case-unlike-dex", "a team owner spelled with a capital, the Dex user without", (f"{T}[0].owner",), edit("dev", (DEV_VISION, "    - name: vision\n      owner: Lead@acme.com\n"))),
    Broken("contributor-case-unlike-dex", "a contributor spelled with a capital, the Dex user without", (f"{T}[0].contributors[0].email",), edit("kind", ("{email: ana@example.com, role: edit}", "{email: Ana@example.com, role: edit}"))),
    Broken("static-users-one-in-two-cases", "one Dex user listed in two letter cases (Dex keeps only one)", (f"{AUTH}.staticUsers[5]",), edit("kind", ("kim@example.com, raj@example.com]", "kim@example.com, raj@example.com, Ana@example.com]"))),
    Broken("allowed-email-case-unlike-contributor", "an OIDC account listed in one case, the team's contributor in another", (f"{T}[0].contributors[0].email",), edit("prod", ("        allowedDomains: [acme.com]\n", "        allowedDomains: [acme.com]\n        allowedEmails: [Ana@acme.com]\n"))),
    Broken("email-emoji", "an address with an emoji", (f"{AUTH}.staticUsers[5]", f"{T}[2].contributors[0].email"), edit("kind", ("kim@example.com, raj@example.com]", "kim@example.com, raj@example.com, ana😀@example.com]"), ('      quota: {cpu: "4", memory: 16Gi}\n', '      contributors: [{email: ana😀@example.com, role: view}]\n      quota: {cpu: "4", memory: 16Gi}\n'))),
    Broken("email-accented", "an address with an accented letter", (f"{AUTH}.staticUsers[0]", f"{T}[0].owner", f"{K}.monitoring.grafanaAdmins[0]"), lambda: shipped("kind").replace("lead@example.com", "léad@example.com")),
    Broken("email-display-name", "an owner written as a mail client shows it", (f"{T}[0].owner",), edit("dev", (DEV_VISION, '    - name: vision\n      owner: "Lead <lead@acme.com>"\n'))),
    Broken("email-wildcard", "a Grafana admin as a wildcard", (f"{K}.monitoring.grafanaAdmins[0]",), edit("prod", ("grafanaAdmins: [lead@acme.com]", 'grafanaAdmins: ["*@acme.com"]'))),
    Broken("email-domain-capitals", "an owner's domain in capitals", (f"{T}[0].owner",), edit("kind", ("      owner: lead@example.com\n", "      owner: lead@EXAMPLE.com\n"))),
    Broken("email-unicode-domain", "an address on an internationalised domain written in Unicode", (f"{K}.monitoring.grafanaAdmins[0]",), edit("dev", ("grafanaAdmins: [lead@acme.com]", "grafanaAdmins: [lead@acmé.com]"))),
    Broken("email-comma", "two addresses run together in one entry", (f"{AUTH}.staticUsers[0]",), edit("dev", ("staticUsers: [lead@acme.com, ana@acme.com,", 'staticUsers: ["lead@acme.com,ana@acme.com",'))),
    Broken("dex-password-name-too-long", "a static user whose password variable is over a Secret key's 253 characters", (f"{AUTH}.staticUsers[5]",), edit("kind", ("kim@example.com, raj@example.com]", f"kim@example.com, raj@example.com, {LONG_EMAIL}]"))),
    # --- namespaces the cluster owns --------------------------------------------------
    Broken("team-local-path-storage", "a team named like kind's storage namespace", (f"{T}[2].name",), edit("kind", ("    - name: research\n", "    - name: local-path-storage\n"))),
    Broken("team-gmp-public", "a team named like GKE managed Prometheus's namespace", (f"{T}[2].name",), edit("dev", ("    - name: research\n", "    - name: gmp-public\n"))),
    Broken("team-gke-managed", "a team in one of GKE's managed-service namespaces", (f"{T}[0].name",), edit("dev", (DEV_VISION, "    - name: gke-managed-cim\n      owner: lead@acme.com\n"))),
    Broken("team-gke-connect", "a team under GKE's gke- prefix", (f"{T}[2].name",), edit("dev", ("    - name: research\n", "    - name: gke-connect\n"))),
    # --- places and shapes ------------------------------------------------------------
    Broken("region-empty", "gcp:region left empty", ("gcp:region",), edit("dev", ("  gcp:region: us-central1\n", '  gcp:region: ""\n'))),
    Broken("region-list", "gcp:region as a list", ("gcp:region",), edit("dev", ("  gcp:region: us-central1\n", "  gcp:region: [us-central1]\n"))),
    Broken("region-number", "gcp:region as a number", ("gcp:region",), edit("prod", ("  gcp:region: us-central1\n", "  gcp:region: 1\n"))),
    Broken("region-a-zone", "a zone for gcp:region", ("gcp:region",), edit("dev", ("  gcp:region: us-central1\n", "  gcp:region: us-central1-a\n"))),
    Broken("region-unknown", "a region that does not exist", ("gcp:region",), edit("prod", ("  gcp:region: us-central1\n", "  gcp:region: us-middle1\n"))),
    Broken("region-other-than-cluster", "gcp:region one region, the cluster in another", ("gcp:region",), edit("dev", ("  gcp:region: us-central1\n", "  gcp:region: europe-west4\n"))),
    Broken("location-unknown-region", "a cluster in a region no catalog lists", (f"{C}.location", "gcp:region"), edit("dev", ("    location: us-central1\n", "    location: us-central9\n"))),
    Broken("registry-location-unknown", "the Artifact Registry repository in a region that does not exist", (f"{C}.imageRegistry.location",), edit("prod", ("    imageRegistry:\n", "    imageRegistry:\n      location: europe-west99\n"))),
    Broken("bucket-location-unknown", "a team bucket in a region that does not exist", (f"{T}[0].bucket.location",), edit("dev", ("      bucket: {}\n", "      bucket: {location: asia-south9}\n"))),
    Broken("system-pool-unlisted-machine", "a system pool of a machine type the catalog does not list", (f"{C}.systemPool.machineType",), edit("dev", ("machineType: e2-standard-8, min: 1, max: 3}", "machineType: n2-standard-8, min: 1, max: 3}"))),
    Broken("system-pool-machine-typo", "a misspelt system-pool machine type", (f"{C}.systemPool.machineType",), edit("prod", ("machineType: e2-standard-8, min: 2, max: 5}", "machineType: e2-standrad-8, min: 2, max: 5}"))),
    Broken("system-pool-machine-empty", "an empty system-pool machine type", (f"{C}.systemPool.machineType",), edit("dev", ("machineType: e2-standard-8, min: 1, max: 3}", 'machineType: "", min: 1, max: 3}'))),
    # --- numbers and units ------------------------------------------------------------
    Broken("nap-limit-over-int64", "a NAP cpu limit beyond int64", (f"{C}.autoprovisioning.limits.cpu",), edit("dev", ("limits: {cpu: 512,", "limits: {cpu: 9223372036854775808,"))),
    Broken("gpu-quota-huge-float", "a GPU quota written as 1e30", (f"{T}[0].quota.gpus.nvidia-l4",), edit("dev", ("quota: {gpus: {nvidia-l4: 8}", "quota: {gpus: {nvidia-l4: 1e30}"))),
    Broken("memory-quota-beyond-int64", "a memory quota of 8Ei (2^63 bytes)", (f"{T}[0].quota.memory",), edit("dev", ('cpu: "64", memory: 256Gi', 'cpu: "64", memory: 8Ei'))),
    Broken("cpu-quota-finer-than-nano", "a CPU quota finer than a nanocore", (f"{T}[0].quota.cpu",), edit("kind", ('      quota: {cpu: "8", memory: 32Gi}\n    - name: nlp\n', '      quota: {cpu: "0.5n", memory: 32Gi}\n    - name: nlp\n'))),
    Broken("kueue-timeout-overflow", "a Kueue timeout longer than a Go duration holds", (f"{K}.kueue.waitForPodsReady.timeout",), edit("kind", ("  mlplatform:components:\n", "  mlplatform:components:\n    kueue: {waitForPodsReady: {timeout: 9999999999h}}\n"))),
    Broken("retention-overflow", "a Prometheus retention past what it can hold", (f"{K}.monitoring.retention",), edit("prod", ("retention: 30d", "retention: 300y"))),
    Broken("ray-memory-no-unit", "a Ray worker's memory without a unit", (f"{T}[1].ray.workerMemory",), edit("kind", (KIND_NLP_RAY, '      ray: {name: ray, minWorkers: 1, maxWorkers: 2, workerCpu: "1", workerMemory: "4"}\n'))),
    Broken("ray-memory-bare-number", "a Ray worker's memory as a bare YAML number", (f"{T}[1].ray.workerMemory",), edit("dev", (DEV_NLP_RAY, "      ray: {name: ray, pool: l4, minWorkers: 0, maxWorkers: 2, workerMemory: 16}\n"))),
    Broken("container-memory-no-unit", "a default container memory request without a unit", (f"{T}[0].containerDefaults.memory",), edit("kind", ('      quota: {cpu: "8", memory: 32Gi}\n    - name: nlp\n', '      quota: {cpu: "8", memory: 32Gi}\n      containerDefaults: {memory: "512"}\n    - name: nlp\n'))),
    Broken("max-as-text", "a pool's max as quoted text", (f"{P0}.max",), edit("dev", ("max: 4, provisioning", 'max: "4", provisioning'))),
    Broken("max-as-float", "a pool's max as 4.0", (f"{P0}.max",), edit("dev", ("max: 4, provisioning", "max: 4.0, provisioning"))),
    Broken("private-nodes-number", "privateNodes: 1", (f"{C}.privateNodes",), edit("dev", ("privateNodes: true", "privateNodes: 1"))),
    Broken("enabled-as-text", 'a component switched on with "true" in quotes', (f"{K}.kueue.enabled",), edit("kind", ("  mlplatform:components:\n", '  mlplatform:components:\n    kueue: {enabled: "true"}\n'))),
    Broken("private-nodes-null", "privateNodes left null (Pulumi passes the null on)", (f"{C}.privateNodes",), edit("dev", ("privateNodes: true", "privateNodes: null"))),
    Broken("pool-max-null", "a pool's max left empty", (f"{P0}.max",), edit("dev", ("max: 4, provisioning", "max: , provisioning"))),
    Broken("cidr-a-number", "a pod range given as a number", (f"{C}.network.podsCidr",), edit("dev", ("    privateNodes: true\n", "    privateNodes: true\n    network: {podsCidr: 167772160}\n"))),
    # --- sign-in that cannot work -----------------------------------------------------
    Broken("oidc-client-id-empty", "an empty OIDC client ID", (f"{AUTH}.oidc.clientId",), edit("prod", (PROD_OIDC, '        oidc: {issuer: "https://accounts.google.com", clientId: ""}\n'))),
    Broken("oidc-client-id-spaces", "an OIDC client ID pasted with a space", (f"{AUTH}.oidc.clientId",), edit("prod", (PROD_OIDC, '        oidc: {issuer: "https://accounts.google.com", clientId: " 1234567890-kubeflow.apps.googleusercontent.com"}\n'))),
    Broken("issuer-google-slash", "Google's issuer with a trailing slash", (f"{AUTH}.oidc.issuer",), edit("prod", (PROD_OIDC, '        oidc: {issuer: "https://accounts.google.com/", clientId: 1234567890-kubeflow.apps.googleusercontent.com}\n'))),
    Broken("issuer-trailing-slash", "an issuer with a trailing slash its provider may not publish", (f"{AUTH}.oidc.issuer",), edit("prod", (PROD_OIDC, '        oidc: {issuer: "https://login.acme.com/", clientId: 1234567890-kubeflow.apps.googleusercontent.com}\n'))),
    Broken("issuer-discovery-url", "the discovery document's URL for the issuer", (f"{AUTH}.oidc.issuer",), edit("prod", (PROD_OIDC, '        oidc: {issuer: "https://accounts.google.com/.well-known/openid-configuration", clientId: x}\n'))),
    Broken("issuer-capital-host", "an issuer host with capitals", (f"{AUTH}.oidc.issuer",), edit("prod", (PROD_OIDC, '        oidc: {issuer: "https://Accounts.Google.com", clientId: x}\n'))),
    Broken("dex-no-static-users", "Dex with its static users removed", (f"{AUTH}.staticUsers",), edit("kind", ("        staticUsers: [lead@example.com, ana@example.com, bo@example.com, kim@example.com, raj@example.com]\n", ""))),
    Broken("dex-static-users-empty", "Dex with an empty list of static users", (f"{AUTH}.staticUsers",), edit("dev", (DEV_AUTH, "        kind: dex\n        staticUsers: []\n"))),
    Broken("iap-client-id-empty", "IAP on with an empty client ID", (f"{AUTH}.iapClientId",), edit("prod", ("        iapClientId: 1234567890-iap.apps.googleusercontent.com\n", '        iapClientId: ""\n'))),
    # --- duplicates in lists whose entries become resources ---------------------------
    Broken("pushers-twice", "one pusher listed twice (two IAM bindings of one URN)", (f"{C}.imageRegistry.pushers[1]",), edit("prod", ('pushers: ["serviceAccount:notebook-images@acme-ml-prod.iam.gserviceaccount.com"]', 'pushers: ["serviceAccount:notebook-images@acme-ml-prod.iam.gserviceaccount.com", "serviceAccount:notebook-images@acme-ml-prod.iam.gserviceaccount.com"]'))),
    Broken("authorized-network-twice", "one authorized range listed twice", (f"{C}.masterAuthorizedNetworks[2]",), edit("prod", ("      - {cidr: 198.51.100.0/27, name: ci-runners}\n", "      - {cidr: 198.51.100.0/27, name: ci-runners}\n      - {cidr: 203.0.113.0/24, name: office-again}\n"))),
    Broken("static-user-twice", "one Dex user listed twice", (f"{AUTH}.staticUsers[5]",), edit("kind", ("kim@example.com, raj@example.com]", "kim@example.com, raj@example.com, ana@example.com]"))),
    Broken("allowed-domain-twice", "one allowed domain listed twice", (f"{AUTH}.allowedDomains[1]",), edit("prod", ("allowedDomains: [acme.com]", "allowedDomains: [acme.com, acme.com]"))),
    Broken("grafana-admin-twice", "one Grafana admin listed twice", (f"{K}.monitoring.grafanaAdmins[1]",), edit("dev", ("grafanaAdmins: [lead@acme.com]", "grafanaAdmins: [lead@acme.com, lead@acme.com]"))),
    Broken("contributor-twice", "one contributor listed twice", (f"{T}[0].contributors[2].email",), edit("dev", ("contributors: [{email: ana@acme.com, role: edit}, {email: bo@acme.com, role: view}]", "contributors: [{email: ana@acme.com, role: edit}, {email: bo@acme.com, role: view}, {email: ana@acme.com, role: edit}]"))),
    Broken("team-entry-twice", "a whole team entry pasted twice", (f"{T}[3].name",), append("dev", '    - name: research\n      owner: raj@acme.com\n      quota: {gpus: {nvidia-l4: 4}, cpu: "32", memory: 128Gi}\n      cohort: research\n')),
    # --- cross-field: quotas and limits -----------------------------------------------
    Broken("ray-pool-accelerator-not-in-quota", "a team's Ray workers on L4s while its quota names only T4s", (f"{T}[1].ray.pool",), edit("dev", ("nvidia-l4: 24}", "nvidia-l4: 24, nvidia-tesla-t4: 8}"), ('      quota: {gpus: {nvidia-l4: 4}, cpu: "32", memory: 128Gi}\n      cohort: research\n' + NLP_BUCKET, '      quota: {gpus: {nvidia-tesla-t4: 4}, cpu: "32", memory: 128Gi}\n      cohort: research\n' + NLP_BUCKET))),
    Broken("nap-cpu-below-pools", "NAP's cluster-wide cpu limit below what the fixed pools take", (f"{C}.autoprovisioning.limits.cpu",), edit("dev", ("limits: {cpu: 512,", "limits: {cpu: 128,"))),
    # --- landing zones: an existing network, maintenance, secrets key, pool labels, chart values
    Broken("shared-vpc-network-as-a-path", "the network's self-link where its name goes", (f"{C}.network.existing.network",), edit("dev", ("    privateNodes: true\n", "    privateNodes: true\n" + SHARED_VPC.replace("network: shared-vpc", "network: projects/acme-net/global/networks/shared-vpc")))),
    Broken("shared-vpc-with-created-ranges", "an existing network with the ranges of a created subnet", (f"{C}.network.podsCidr",), edit("dev", ("    privateNodes: true\n", "    privateNodes: true\n" + SHARED_VPC + "      podsCidr: 10.16.0.0/14\n"))),
    Broken("maintenance-weekend-too-short", "4 hours on Saturdays and Sundays: 32 hours in 32 days, GKE wants 48", (f"{C}.maintenance.window.end",), edit("dev", ("    privateNodes: true\n", "    privateNodes: true\n    maintenance:\n      window: {start: 2026-01-03T02:00:00Z, end: 2026-01-03T06:00:00Z, recurrence: \"FREQ=WEEKLY;BYDAY=SA,SU\"}\n"))),
    Broken("maintenance-recurrence-unquoted", "BYDAY=SA,SU unquoted in a flow mapping, which the comma splits", (f"{C}.maintenance.window.SU",), edit("dev", ("    privateNodes: true\n", "    privateNodes: true\n    maintenance:\n      window: {start: 2026-01-03T02:00:00Z, end: 2026-01-03T08:00:00Z, recurrence: FREQ=WEEKLY;BYDAY=SA,SU}\n"))),
    Broken("maintenance-local-time", "a window in local time with an offset", (f"{C}.maintenance.window.start",), edit("dev", ("    privateNodes: true\n", '    privateNodes: true\n    maintenance:\n      window: {start: "2026-01-03T03:00:00+01:00", end: "2026-01-03T09:00:00Z", recurrence: FREQ=DAILY}\n'))),
    Broken("exclusion-no-upgrades-too-long", "a NO_UPGRADES freeze of two months", (f"{C}.maintenance.exclusions[0].end",), edit("dev", ("    privateNodes: true\n", '    privateNodes: true\n    maintenance:\n      window: {start: "2026-01-03T02:00:00Z", end: "2026-01-03T08:00:00Z", recurrence: FREQ=DAILY}\n      exclusions: [{name: freeze, start: "2026-11-15T00:00:00Z", end: "2027-01-15T00:00:00Z"}]\n'))),
    Broken("secrets-key-version", "a key version where the key goes", (f"{C}.secretsEncryption.key",), edit("dev", ("    privateNodes: true\n", "    privateNodes: true\n    secretsEncryption: {key: projects/acme-sec/locations/us-central1/keyRings/gke/cryptoKeys/ml/cryptoKeyVersions/3}\n"))),
    Broken("secrets-key-elsewhere", "a key ring in another region than the cluster", (f"{C}.secretsEncryption.key",), edit("dev", ("    privateNodes: true\n", "    privateNodes: true\n    secretsEncryption: {key: projects/acme-sec/locations/europe-west4/keyRings/gke/cryptoKeys/ml}\n"))),
    Broken("pool-taint-of-the-platform", "the platform's own GPU taint written again, on a pool", (f"{P0}.taints[0].key",), edit("dev", ("max: 4, provisioning: spot}", "max: 4, provisioning: spot, taints: [{key: nvidia.com/gpu, value: present}]}"))),
    Broken("pool-label-of-gke", "a GKE label on a pool", (f"{P0}.labels.cloud.google.com/gke-nodepool",), edit("dev", ("max: 4, provisioning: spot}", "max: 4, provisioning: spot, labels: {cloud.google.com/gke-nodepool: gpu}}"))),
    Broken("chart-values-password", "Grafana's admin password in plain text in a values overlay", (f"{K}.monitoring.grafanaValues.adminPassword",), edit("dev", ("monitoring: {grafanaAdmins: [lead@acme.com]}", "monitoring: {grafanaAdmins: [lead@acme.com], grafanaValues: {adminPassword: hunter2}}"))),
    Broken("chart-values-for-a-chart-not-installed", "kube-prometheus-stack values with the gke-managed backend", (f"{K}.monitoring.values",), edit("dev", ("    privateNodes: true\n", "    privateNodes: true\n    managedPrometheus: true\n"), ("monitoring: {grafanaAdmins: [lead@acme.com]}", "monitoring: {grafanaAdmins: [lead@acme.com], backend: gke-managed, values: {prometheus: {prometheusSpec: {replicas: 2}}}}\n    dcgmExporter: {source: gke-managed}"))),
    # --- issue 31: the new surfaces ----------------------------------------------------
    # Cloud SQL for Pipelines (facts/cloud_sql.py)
    Broken("cloudsql-no-vcpus", "a Cloud SQL tier of 0 vCPUs", (f"{K}.pipelines.cloudSql.tier",), edit("prod", ("tier: db-custom-2-7680", "tier: db-custom-0-0"))),
    Broken("cloudsql-odd-vcpus", "a Cloud SQL tier of 3 vCPUs", (f"{K}.pipelines.cloudSql.tier",), edit("prod", ("tier: db-custom-2-7680", "tier: db-custom-3-7680"))),
    Broken("cloudsql-memory-below-per-vcpu", "512 MiB for 2 vCPUs", (f"{K}.pipelines.cloudSql.tier",), edit("prod", ("tier: db-custom-2-7680", "tier: db-custom-2-512"))),
    Broken("cloudsql-memory-above-per-vcpu", "100 GiB for 2 vCPUs", (f"{K}.pipelines.cloudSql.tier",), edit("prod", ("tier: db-custom-2-7680", "tier: db-custom-2-102400"))),
    Broken("cloudsql-too-many-vcpus", "128 vCPUs, more than the series has", (f"{K}.pipelines.cloudSql.tier",), edit("prod", ("tier: db-custom-2-7680", "tier: db-custom-128-491520"))),
    Broken("cloudsql-memory-not-256", "memory not a multiple of 256 MiB", (f"{K}.pipelines.cloudSql.tier",), edit("prod", ("tier: db-custom-2-7680", "tier: db-custom-2-7700"))),
    Broken("cloudsql-backups-below-log-days", "3 backups for 7 days of transaction logs", (f"{K}.pipelines.cloudSql.retainedBackups",), edit("prod", ("retainedBackups: 30}", "retainedBackups: 3, logRetentionDays: 7}"))),
    Broken("cloudsql-on-kind", "Cloud SQL settings on a kind stack", (f"{K}.pipelines.cloudSql",), edit("kind", ("    pipelines: {}\n", "    pipelines: {cloudSql: {tier: db-custom-2-7680}}\n"))),
    Broken("mysql-volume-on-gke", "the in-cluster database's volume on a GKE stack", (f"{K}.pipelines.databaseStorage",), edit("dev", ("    pipelines: {}\n", "    pipelines: {databaseStorage: 100Gi}\n"))),
    Broken("cloudsql-no-private-path", "private service access off on the network the program creates", (f"{K}.pipelines.cloudSql.privateServiceAccess",), edit("dev", ("    pipelines: {}\n", "    pipelines: {cloudSql: {privateServiceAccess: false}}\n"))),
    Broken("object-store-past-a-disk", "an object store larger than a Persistent Disk", (f"{K}.pipelines.objectStoreStorage",), edit("dev", ("    pipelines: {}\n", "    pipelines: {objectStoreStorage: 100Ti}\n"))),
    # mlplatform:images.mirror (facts/registry_names.py)
    Broken("mirror-no-host", "a mirror whose first element a client reads as a Docker Hub namespace", ("mlplatform:images.mirror",), append("dev", "  mlplatform:images: {mirror: mirror/acme}\n")),
    Broken("mirror-port-out-of-range", "a mirror port past 65535", ("mlplatform:images.mirror",), append("dev", '  mlplatform:images: {mirror: "registry.acme.internal:99999/mirror"}\n')),
    Broken("mirror-too-long", "a mirror prefix that pushes image names past 255 characters", ("mlplatform:images.mirror",), append("dev", "  mlplatform:images: {mirror: registry.acme.internal/" + "/".join(["mirror"] * 30) + "}\n")),
    Broken("mirror-zone-host", "an Artifact Registry host named after a zone", ("mlplatform:images.mirror",), append("dev", "  mlplatform:images: {mirror: us-central1-a-docker.pkg.dev/acme-ml-dev/mirror}\n")),
    Broken("mirror-unknown-region", "an Artifact Registry host in a region that does not exist", ("mlplatform:images.mirror",), append("dev", "  mlplatform:images: {mirror: europe-west99-docker.pkg.dev/acme-ml-dev/mirror}\n")),
    Broken("mirror-python-host", "a Python repository's host as the image mirror", ("mlplatform:images.mirror",), append("dev", "  mlplatform:images: {mirror: us-central1-python.pkg.dev/acme-ml-dev/mirror}\n")),
    Broken("mirror-bad-project", "a project ID with an underscore in an Artifact Registry path", ("mlplatform:images.mirror",), append("dev", "  mlplatform:images: {mirror: us-docker.pkg.dev/acme_ml/mirror}\n")),
    Broken("mirror-no-repository", "an Artifact Registry mirror without its repository", ("mlplatform:images.mirror",), append("dev", "  mlplatform:images: {mirror: us-docker.pkg.dev/acme-ml-dev}\n")),
    Broken("mirror-docker-hub-alias", "Docker Hub under its registry host name", ("mlplatform:images.mirror",), append("dev", "  mlplatform:images: {mirror: registry-1.docker.io/acme}\n")),
    # mlplatform:sources
    Broken("charts-index-yaml", "a chart repository URL that names its index.yaml", ("mlplatform:sources.charts",), append("dev", '  mlplatform:sources: {charts: "https://charts.acme.internal/index.yaml"}\n')),
    Broken("charts-registry-no-repository", "an Artifact Registry chart URL without a repository", ("mlplatform:sources.charts",), append("dev", '  mlplatform:sources: {charts: "oci://europe-docker.pkg.dev/acme-ml-dev"}\n')),
    Broken("manifests-scp-remote", "a git remote in scp syntax, read as a local directory", ("mlplatform:sources.kubeflowManifests",), append("dev", '  mlplatform:sources: {kubeflowManifests: "git@github.com:acme/manifests.git"}\n')),
    Broken("manifests-web-page", "a repository's web page (/tree/) as its remote", ("mlplatform:sources.kubeflowManifests",), append("dev", '  mlplatform:sources: {kubeflowManifests: "https://github.com/kubeflow/manifests/tree/v1.10.0"}\n')),
    # networks (facts/networks.py)
    Broken("master-in-docker-bridge", "the control-plane range inside the Docker bridge's", (f"{C}.network.masterCidr",), edit("dev", ("    privateNodes: true\n", "    privateNodes: true\n    network: {masterCidr: 172.17.0.0/28}\n"))),
    Broken("services-in-docker-bridge", "the Services range inside the Docker bridge's", (f"{C}.network.servicesCidr",), edit("dev", ("    privateNodes: true\n", "    privateNodes: true\n    network: {servicesCidr: 172.17.0.0/20}\n"))),
    Broken("pods-link-local", "a link-local Pod range", (f"{C}.network.podsCidr",), edit("dev", ("    privateNodes: true\n", "    privateNodes: true\n    network: {podsCidr: 169.254.0.0/16}\n"))),
    Broken("pods-too-small-for-pools", "a Pod range too small for the pools' maximum nodes", (f"{C}.network.podsCidr",), edit("dev", ("    privateNodes: true\n", "    privateNodes: true\n    network: {podsCidr: 10.16.0.0/22}\n"))),
    Broken("subnet-too-small-for-first-nodes", "a subnet without room for the first nodes", (f"{C}.network.subnetCidr",), edit("dev", ("    privateNodes: true\n", "    privateNodes: true\n    network: {subnetCidr: 10.0.0.0/29}\n"))),
    Broken("subnet-below-smallest", "a subnet below the smallest GCP allows", (f"{C}.network.subnetCidr",), edit("dev", ("    privateNodes: true\n", "    privateNodes: true\n    network: {subnetCidr: 10.0.0.0/30}\n"))),
    Broken("authorized-networks-too-many", "101 authorized networks on a private cluster", (f"{C}.masterAuthorizedNetworks",), edit("dev", ("    privateNodes: true\n", "    privateNodes: true\n    masterAuthorizedNetworks:\n" + "".join(f"      - {{cidr: 203.0.{i // 4}.{i % 4 * 64}/26, name: n{i}}}\n" for i in range(101))))),
    # groups where a person is expected
    Broken("owner-a-group", "a stack group as a team's owner", (f"{T}[0].owner",), append("kind", "", ("        staticUsers: [lead@example.com,", "        groups: [{name: ml@example.com, members: [ana@example.com]}]\n        staticUsers: [lead@example.com,"), ("      owner: lead@example.com\n", "      owner: ml@example.com\n"))),
    Broken("contributor-email-a-group", "a stack group as a person contributor", (f"{T}[0].contributors[0].email",), append("kind", "", ("        staticUsers: [lead@example.com,", "        groups: [{name: ml@example.com, members: [ana@example.com]}]\n        staticUsers: [lead@example.com,"), ("{email: ana@example.com, role: edit}, {email: bo@example.com, role: view}", "{email: ml@example.com, role: edit}, {email: bo@example.com, role: view}"))),
    Broken("grafana-admin-a-group", "a stack group as a Grafana admin", (f"{K}.monitoring.grafanaAdmins[0]",), append("kind", "", ("        staticUsers: [lead@example.com,", "        groups: [{name: ml@example.com, members: [ana@example.com]}]\n        staticUsers: [lead@example.com,"), ("grafanaAdmins: [lead@example.com]", "grafanaAdmins: [ml@example.com]"))),
    # names the platform already uses
    Broken("ray-named-like-a-platform-secret", "a team Ray cluster whose token Secret takes the object store Secret's name", (f"{T}[1].ray.name",), edit("kind", (KIND_NLP_RAY, KIND_NLP_RAY.replace("name: ray", "name: mlpipeline-minio-artifact")))),
    # values for the other target
    Broken("local-notebook-registry-on-gke", "kind's local notebook registry on a GKE stack", (f"{K}.kubeflow.notebookRegistry",), edit("dev", ("    kubeflow:\n", "    kubeflow:\n      notebookRegistry: localhost/mlplatform\n"))),
    Broken("gke-version-too-old", "minMasterVersion older than the channel serves", (f"{C}.minMasterVersion",), edit("dev", ("    releaseChannel: REGULAR\n", '    releaseChannel: REGULAR\n    minMasterVersion: "1.29"\n'))),
    Broken("gke-version-too-new", "minMasterVersion newer than the channel serves", (f"{C}.minMasterVersion",), edit("dev", ("    releaseChannel: REGULAR\n", '    releaseChannel: STABLE\n    minMasterVersion: "1.37"\n'))),
    # zones
    Broken("pool-zone-not-in-region", "a GPU pool in a zone us-central1 does not have", (f"{P0}.zones",), edit("dev", ("provisioning: spot}", "provisioning: spot, zones: [us-central1-e]}"))),
    Broken("cluster-zone-not-in-region", "a zonal cluster in a zone that does not exist", (f"{C}.location",), edit("dev", ("    location: us-central1\n", "    location: us-central1-z\n"))),
    Broken("provider-zone-not-in-region", "gcp:zone that its region does not have", ("gcp:zone",), edit("dev", ("  gcp:region: us-central1\n", "  gcp:region: us-central1\n  gcp:zone: us-central1-d\n"))),
    # resource exhaustion and crashes
    Broken("alias-self-reference", "a chart values anchor that contains an alias of itself", (f"{K}.kueue.values",), append("kind", "", ("  mlplatform:components:\n", "  mlplatform:components:\n    kueue:\n      values: &loop {self: *loop}\n"))),
    Broken("alias-self-reference-teams", "the teams anchored and aliased inside themselves", (T,), literal("config:\n  mlplatform:cluster: {kind: kind}\n  mlplatform:teams: &teams\n    - {name: vision, owner: a@example.com, contributors: *teams}\n")),
    Broken("alias-bomb", "nested aliases that expand to a billion values", (f"{K}.kueue.values",), append("kind", "", ("  mlplatform:components:\n", "  mlplatform:components:\n    kueue:\n      values:\n" + "".join(f"        l{i}: &l{i} [" + ", ".join([f"*l{i - 1}" if i else "lol"] * 10) + "]\n" for i in range(9))))),
    Broken("nesting-too-deep", "a chart value nested 1,000 levels deep", (f"{K}.kueue.values",), append("kind", "", ("  mlplatform:components:\n", "  mlplatform:components:\n    kueue:\n      values: {deep: " + "[" * 1000 + "]" * 1000 + "}\n"))),
    # messages that mislead
    Broken("storage-too-large", "a Prometheus volume past what Kubernetes holds", (f"{K}.monitoring.storageSize",), edit("prod", ("storageSize: 200Gi", "storageSize: 9Ei"))),
    Broken("kms-key-zonal", "a KMS key ring in a zone", (f"{C}.secretsEncryption.key",), edit("dev", ("    privateNodes: true\n", "    privateNodes: true\n    secretsEncryption: {key: projects/acme-sec/locations/us-central1-a/keyRings/gke/cryptoKeys/ml}\n"))),
    # --- chart overlays that undo the platform (the charts at their pins, ../shared/upstream/charts)
    Broken("overlay-cert-manager-crds-off", "cert-manager's chart without its CRDs (templates/crd-*.yaml behind crds.enabled)", (f"{K}.certManager.values.crds.enabled",), overlays("dev", "certManager: {values: {crds: {enabled: false}}}")),
    Broken("overlay-trainer-crds-off", "Trainer's chart without its CRDs (templates/crd/*.yaml behind crds.enabled)", (f"{K}.trainer.values.crds.enabled",), overlays("dev", "trainer: {values: {crds: {enabled: false}}}")),
    Broken("overlay-prometheus-crds-off", "kube-prometheus-stack without the Prometheus Operator's CRDs (its crds subchart)", (f"{K}.monitoring.values.crds.enabled",), edit("dev", ("monitoring: {grafanaAdmins: [lead@acme.com]}", "monitoring: {grafanaAdmins: [lead@acme.com], values: {crds: {enabled: false}}}"))),
    Broken("overlay-jobset-in-trainer", "a second JobSet from Trainer's chart (its jobset subchart)", (f"{K}.trainer.values.jobset.install",), overlays("kind", "trainer: {values: {jobset: {install: true}}}")),
    Broken("overlay-grafana-in-prometheus-stack", "a second Grafana from kube-prometheus-stack's grafana subchart", (f"{K}.monitoring.values.grafana.enabled",), edit("kind", ("monitoring: {grafanaAdmins: [lead@example.com]}", "monitoring: {grafanaAdmins: [lead@example.com], values: {grafana: {enabled: true}}}"))),
    Broken("overlay-trainer-hook-runtime", "one of Trainer's chart runtimes, which only its hook Job installs", (f"{K}.trainer.values.runtimes.deepspeedDistributed.enabled",), overlays("dev", "trainer: {values: {runtimes: {deepspeedDistributed: {enabled: true}}}}")),
    Broken("overlay-kueue-config-replaced", "Kueue's controller configuration replaced by a minimal one", (f"{K}.kueue.values.managerConfig.controllerManagerConfigYaml",), overlays("dev", "kueue: {values: {managerConfig: {controllerManagerConfigYaml: \"apiVersion: config.kueue.x-k8s.io/v1beta2\\nkind: Configuration\\n\"}}}")),
    Broken("overlay-kueue-config-without-integrations", "Kueue's configuration kept but for its integrations", (f"{K}.kueue.values.managerConfig.controllerManagerConfigYaml",), overlays("dev", f"kueue: {{values: {{managerConfig: {{controllerManagerConfigYaml: {json.dumps(KUEUE_KEPT + KUEUE_PODS_READY)}}}}}}}")),
    Broken("overlay-kueue-config-other-timeout", "Kueue's pods-ready timeout in its configuration, not in the stack's key", (f"{K}.kueue.values.managerConfig.controllerManagerConfigYaml",), overlays("dev", f"kueue: {{values: {{managerConfig: {{controllerManagerConfigYaml: {json.dumps(KUEUE_KEPT + KUEUE_PODS_READY.replace('20m', '5m') + 'integrations: {frameworks: [batch/job, jobset.x-k8s.io/jobset, trainer.kubeflow.org/trainjob, ray.io/rayjob, ray.io/raycluster]}' + chr(10))}}}}}}}")),
    Broken("overlay-kueue-frameworks-dropped", "Kueue's integrations without TrainJobs", (f"{K}.kueue.values.managerConfig.controllerManagerConfigYaml",), overlays("dev", f"kueue: {{values: {{managerConfig: {{controllerManagerConfigYaml: {json.dumps(KUEUE_KEPT + KUEUE_PODS_READY + 'integrations: {frameworks: [batch/job, jobset.x-k8s.io/jobset]}' + chr(10))}}}}}}}")),
    Broken("overlay-kueue-cert-manager", "Kueue's webhook certificate from cert-manager", (f"{K}.kueue.values.enableCertManager",), overlays("kind", "kueue: {values: {enableCertManager: true}}")),
    Broken("overlay-kueue-own-monitor", "Kueue's chart's own ServiceMonitor", (f"{K}.kueue.values.enablePrometheus",), overlays("kind", "kueue: {values: {enablePrometheus: true}}")),
    Broken("overlay-kuberay-single-namespace", "the KubeRay operator limited to its own namespace", (f"{K}.kuberay.values.singleNamespaceInstall",), overlays("dev", "kuberay: {values: {singleNamespaceInstall: true}}")),
    Broken("overlay-kuberay-watch-namespace", "the KubeRay operator watching one namespace", (f"{K}.kuberay.values.watchNamespace",), overlays("kind", "kuberay: {values: {watchNamespace: [kuberay-system]}}")),
    Broken("overlay-kuberay-env-replaced", "KubeRay's env list without the platform's entry", (f"{K}.kuberay.values.env",), overlays("kind", "kuberay: {values: {env: [{name: CLUSTER_DOMAIN, value: cluster.local}]}}")),
    Broken("overlay-prometheus-operator-own-namespace", "the Prometheus Operator limited to its release namespace", (f"{K}.monitoring.values.prometheusOperator.namespaces",), edit("dev", ("monitoring: {grafanaAdmins: [lead@acme.com]}", "monitoring: {grafanaAdmins: [lead@acme.com], values: {prometheusOperator: {namespaces: {releaseNamespace: true}}}}"))),
    Broken("overlay-cert-manager-one-namespace", "cert-manager's controller limited to one namespace (ClusterIssuers off)", (f"{K}.certManager.values.extraArgs",), overlays("kind", "certManager: {values: {extraArgs: [--namespace=cert-manager]}}")),
    Broken("overlay-grafana-anonymous-admin", "Grafana open to anonymous users as Admin", (f"{K}.monitoring.grafanaValues.grafana.ini.auth.anonymous.enabled",), edit("dev", ("monitoring: {grafanaAdmins: [lead@acme.com]}", "monitoring: {grafanaAdmins: [lead@acme.com], grafanaValues: {grafana.ini: {auth.anonymous: {enabled: true, org_role: Admin}}}}"))),
    Broken("overlay-grafana-proxy-header", "Grafana trusting a header any client can send", (f"{K}.monitoring.grafanaValues.grafana.ini.auth.proxy.header_name",), edit("kind", ("monitoring: {grafanaAdmins: [lead@example.com]}", "monitoring: {grafanaAdmins: [lead@example.com], grafanaValues: {grafana.ini: {auth.proxy: {header_name: X-WEBAUTH-USER}}}}"))),
    Broken("overlay-grafana-anonymous-env", "Grafana's anonymous access switched on through its environment", (f"{K}.monitoring.grafanaValues.env.GF_AUTH_ANONYMOUS_ENABLED",), edit("dev", ("monitoring: {grafanaAdmins: [lead@acme.com]}", "monitoring: {grafanaAdmins: [lead@acme.com], grafanaValues: {env: {GF_AUTH_ANONYMOUS_ENABLED: 'true'}}}"))),
    Broken("overlay-retention-contradicts", "a retention in the overlay against the stack's own retention", (f"{K}.monitoring.values.prometheus.prometheusSpec.retention",), edit("prod", ("monitoring: {retention: 30d,", "monitoring: {values: {prometheus: {prometheusSpec: {retention: 7d}}}, retention: 30d,"))),
    Broken("overlay-storage-contradicts", "a Prometheus volume size in the overlay against the stack's storageSize", (f"{K}.monitoring.values.prometheus.prometheusSpec.storageSpec.volumeClaimTemplate.spec.resources.requests.storage",), edit("prod", ("monitoring: {retention: 30d,", "monitoring: {values: {prometheus: {prometheusSpec: {storageSpec: {volumeClaimTemplate: {spec: {resources: {requests: {storage: 50Gi}}}}}}}}, retention: 30d,"))),
    Broken("overlay-word-for-replicas", "a word where Kueue's chart takes a number", (f"{K}.kueue.values.controllerManager.replicas",), overlays("dev", "kueue: {values: {controllerManager: {replicas: two}}}")),
    Broken("overlay-quoted-replicas", "a quoted number for Grafana's replicas", (f"{K}.monitoring.grafanaValues.replicas",), edit("kind", ("monitoring: {grafanaAdmins: [lead@example.com]}", "monitoring: {grafanaAdmins: [lead@example.com], grafanaValues: {replicas: '2'}}"))),
    Broken("overlay-word-by-schema", "a word where cert-manager's values.schema.json wants a number", (f"{K}.certManager.values.webhook.replicaCount",), overlays("dev", "certManager: {values: {webhook: {replicaCount: two}}}")),
    Broken("overlay-dcgm-tolerations-emptied", "the exporter's tolerations emptied: it would leave the GPU nodes", (f"{K}.dcgmExporter.values.tolerations",), overlays("dev", "dcgmExporter: {values: {tolerations: []}}")),
    Broken("overlay-prometheus-agent", "Prometheus as an agent, which answers no queries", (f"{K}.monitoring.values.prometheus.agentMode",), edit("dev", ("monitoring: {grafanaAdmins: [lead@acme.com]}", "monitoring: {grafanaAdmins: [lead@acme.com], values: {prometheus: {agentMode: true}}}"))),
    Broken("overlay-several-at-once", "three charts' overlays wrong in one stack", (f"{K}.trainer.values.jobset.install", f"{K}.kuberay.values.rbacEnable", f"{K}.jobset.values.prometheus.enable"), overlays("kind", "trainer: {values: {jobset: {install: true}}}", "kuberay: {values: {rbacEnable: false}}", "jobset: {values: {prometheus: {enable: true}}}")),
    # --- GPUDirect networking (facts/gpu_fabric.py, docs/gpu-fabric.md) ------------------
    Broken("fabric-tcpxo-on-l4", "GPUDirect-TCPXO asked of an L4 pool", (f"{P0}.network",), edit("dev", ("max: 4, provisioning: spot}", "max: 4, provisioning: spot, network: tcpxo, fabric: {cidr: 192.168.0.0/20}}"))),
    Broken("fabric-rdma-on-a3-mega", "RDMA asked of the A3 Mega pool (it takes tcpxo)", (f"{P0}.network",), edit("dev-fabric", ("        network: tcpxo\n", "        network: rdma\n"))),
    Broken("fabric-without-networks", "network: tcpxo without its fabric's networks", (f"{P0}.network",), edit("dev-fabric", ("        fabric: {cidr: 192.168.0.0/20}\n", ""))),
    Broken("fabric-cidr-on-the-pods-range", "a fabric range inside the cluster's pod range", (f"{P0}.fabric.cidr",), edit("dev-fabric", ("fabric: {cidr: 192.168.0.0/20}", "fabric: {cidr: 10.16.0.0/20}"))),
    Broken("fabric-cidrs-overlap", "the A4 pool's fabric range over the A3 Mega pool's", (f"{P1}.fabric.cidr",), edit("dev-fabric", ("fabric: {cidr: 192.168.16.0/20}", "fabric: {cidr: 192.168.8.0/21}"))),
    Broken("fabric-rdma-two-zones", "an RDMA pool over two zones (its RoCE VPC is zonal)", (f"{P1}.zones",), edit("dev-fabric", ("        zones: [us-central1-b]\n        network: rdma\n", "        zones: [us-central1-b, us-central1-c]\n        network: rdma\n"))),
    Broken("dra-under-autoprovisioning", "DRA asked of a pool of a cluster with node auto-provisioning (GKE refuses the two together)", (f"{P0}.gpuAllocation",), edit("dev", ("provisioning: spot}\n", "provisioning: spot, gpuAllocation: dra}\n"))),
    Broken("dra-with-time-sharing", "DRA and time-shared GPUs on one pool (GKE's DRA takes no GPU sharing)", (f"{P1}.gpuAllocation",), edit("dev-fabric", ("        network: rdma\n", "        network: rdma\n        gpuAllocation: dra\n        sharing: {strategy: time-sharing, maxSharedClients: 2}\n"))),
    Broken("dra-with-driver-installation", "DRA with GKE's driver installation asked for (GKE installs no driver on a DRA pool)", (f"{P0}.gpuAllocation",), edit("dev-fabric", ("        network: tcpxo\n", "        network: tcpxo\n        gpuAllocation: dra\n        driverVersion: LATEST\n"))),
    Broken("dra-with-queued-provisioning", "DRA on a queued pool (Kueue asks for no ProvisioningRequest for a claim: the pool never grows)", (f"{P1}.provisioning",), edit("dev-fabric", ("        network: rdma\n", "        network: rdma\n        gpuAllocation: dra\n"))),
    Broken("dra-on-a-topology-aware-pool", "DRA on a fixed-size A3 pool, which Kueue places by topology (Kueue does not support DRA with TAS)", (f"{P1}.gpuAllocation",), edit("prod", ("        max: 2\n        provisioning: queued\n", "        min: 2\n        max: 2\n        gpuAllocation: dra\n"))),
    Broken("ray-on-a-topology-aware-pool", "a team Ray cluster whose workers are on a pool Kueue places by topology (Kueue 0.19 admits elastic jobs there only with an alpha gate)", (f"{T}[0].ray.pool",), edit("dev-fabric", ("      bucket: {}                       # its pipeline root\n", "      bucket: {}                       # its pipeline root\n      ray: {name: ray, pool: h100, minWorkers: 0, maxWorkers: 1}\n"))),
    Broken("fabric-gke-too-old", "a cluster pinned (knowingly) at 1.31, below A4's GPUDirect RDMA", (f"{C}.minMasterVersion",), append("dev-fabric", "  mlplatform:overrides: {gkeVersions: ['1.31']}\n", ("    releaseChannel: REGULAR\n", "    releaseChannel: REGULAR\n    minMasterVersion: '1.31'\n"))),
    # --- issue 39: stacks that passed the loader and failed at pulumi up or never ran ------
    Broken("fabric-tcpxo-existing-one-subnetwork", "eight existing TCPXO VPCs all naming one subnetwork (a subnetwork belongs to one VPC)", (f"{P0}.fabric.existing[1].subnetwork", f"{P0}.fabric.existing[7].subnetwork"), edit("dev-fabric", ("        fabric: {cidr: 192.168.0.0/20}\n", "        fabric:\n          existing:\n" + "".join(f"            - {{network: a3-gpu-{i}, subnetwork: a3-gpu-sub}}\n" for i in range(8))))),
    Broken("fabric-rdma-gvnic-on-the-cluster-network", "an RDMA pool whose gVNIC NIC is on the cluster's own VPC", (f"{P1}.fabric.existing[0].network",), edit("dev-fabric", ("    privateNodes: true\n", "    privateNodes: true\n    network:\n      existing: {network: ml-vpc, subnetwork: ml-us-central1, podsRange: pods, servicesRange: services}\n"), ("        fabric: {cidr: 192.168.16.0/20}\n", "        fabric:\n          existing:\n            - {network: ml-vpc, subnetwork: b200-gvnic}\n" + "".join(f"            - {{network: b200-roce, subnetwork: b200-roce-{i}}}\n" for i in range(8))))),
    Broken("dra-driver-without-a-dra-pool", "NVIDIA's DRA driver switched on where no pool has gpuAllocation: dra (its installer selects no node)", (f"{K}.nvidiaDraDriver.enabled",), edit("dev", ("  mlplatform:components:\n", "  mlplatform:components:\n    nvidiaDraDriver: {enabled: true}\n"))),
    Broken("dra-driver-on-kind", "NVIDIA's DRA driver switched on on kind", (f"{K}.nvidiaDraDriver.enabled",), edit("kind", ("  mlplatform:components:\n", "  mlplatform:components:\n    nvidiaDraDriver: {enabled: true}\n"))),
    Broken("ray-on-a-dra-pool", "a team Ray cluster on a DRA pool, whose nodes advertise no nvidia.com/gpu", (f"{T}[1].ray.pool",), edit("dev", ("provisioning: spot}\n", "provisioning: spot, gpuAllocation: dra}\n"), ("    autoprovisioning:\n      enabled: true\n      limits: {cpu: 512, memory: 2048, nvidia-l4: 24}\n", "    autoprovisioning: {enabled: false}\n"))),
    Broken("release-manifests-web-page", "releaseManifests pointed at a repository's /tree/ page", ("mlplatform:sources.releaseManifests",), append("dev-fabric", '  mlplatform:sources: {releaseManifests: "https://github.com/acme/mirrors/tree/main/manifests"}\n')),
    Broken("a3-ultra-default-driver-too-old", "an A3 Ultra pool on GKE's DEFAULT driver at a 1.31 patch whose default is older than its H200s need", (f"{P1}.driverVersion",), edit("dev-fabric", ("    releaseChannel: REGULAR\n", "    releaseChannel: REGULAR\n    minMasterVersion: '1.31.4-gke.1200000'\n"), ("      - name: b200\n        accelerator: nvidia-b200\n        machineType: a4-highgpu-8g\n", "      - name: h200\n        accelerator: nvidia-h200-141gb\n        machineType: a3-ultragpu-8g\n        driverVersion: DEFAULT\n"), ("nvidia-b200: 16}", "nvidia-h200-141gb: 16}"), ("  mlplatform:components:\n", "  mlplatform:overrides: {gkeVersions: ['1.31.4-gke.1200000']}\n  mlplatform:components:\n"))),
    Broken("team-dra-driver-namespace", "a team named like NVIDIA's DRA driver's namespace", (f"{T}[2].name",), edit("dev", ("    - name: research\n", "    - name: nvidia-dra-driver-gpu\n"))),
    Broken("gpu-fabric-on-kind", "gpuFabric switched on on kind, which has no GPU pools", (f"{K}.gpuFabric.enabled",), edit("kind", ("  mlplatform:components:\n", "  mlplatform:components:\n    gpuFabric: {enabled: true}\n"))),
    Broken("serving-floor-over-ceiling", "serving's minReplicas (5) above its maxReplicas (4)", (f"{K}.serving.replicas.minReplicas",), edit("dev", ("serving: {enabled: true, llm: true, replicas: {minReplicas: 0, maxReplicas: 4}}", "serving: {enabled: true, llm: true, replicas: {minReplicas: 5, maxReplicas: 4}}"))),
    Broken("serving-zero-without-its-signals", "serving's minReplicas 0 with monitoring off: no model at zero would wake", (f"{K}.serving.replicas.minReplicas",), edit("dev", ("monitoring: {grafanaAdmins: [lead@acme.com]}", "monitoring: {enabled: false}"))),
    Broken("serving-floor-negative", "serving's minReplicas -1", (f"{K}.serving.replicas.minReplicas",), edit("dev", ("serving: {enabled: true, llm: true, replicas: {minReplicas: 0, maxReplicas: 4}}", "serving: {enabled: true, llm: true, replicas: {minReplicas: -1, maxReplicas: 4}}"))),
    Broken("serving-ceiling-zero", "serving's maxReplicas 0: no replica at all", (f"{K}.serving.replicas.maxReplicas",), edit("dev", ("serving: {enabled: true, llm: true, replicas: {minReplicas: 0, maxReplicas: 4}}", "serving: {enabled: true, llm: true, replicas: {minReplicas: 0, maxReplicas: 0}}"))),
    Broken("serving-replicas-typo", "serving's replicas spelt maxReplica", (f"{K}.serving.replicas.maxReplica",), edit("dev", ("serving: {enabled: true, llm: true, replicas: {minReplicas: 0, maxReplicas: 4}}", "serving: {enabled: true, llm: true, replicas: {minReplicas: 0, maxReplica: 4}}"))),
    Broken("serving-audience-url", "a token audience with a scheme and a path", (f"{K}.serving.tokenAudience",), edit("dev", ("serving: {enabled: true, llm: true, replicas: {minReplicas: 0, maxReplicas: 4}}", "serving: {enabled: true, llm: true, tokenAudience: 'https://serving.acme.com/x'}"))),
    Broken("overlay-kserve-headless-predictors", "KServe's predictor Services headless: a model at zero has no address, the router counts no request for it and it never wakes", (f"{K}.serving.values.kserve.service.serviceClusterIPNone",), edit("dev", ("serving: {enabled: true, llm: true, replicas: {minReplicas: 0, maxReplicas: 4}}", "serving: {enabled: true, llm: true, replicas: {minReplicas: 0, maxReplicas: 4}, values: {kserve: {service: {serviceClusterIPNone: true}}}}"))),
    Broken("serving-zero-on-prod", "a prod stack whose models may scale to zero", (f"{K}.serving.replicas.minReplicas",), edit("prod", ("  mlplatform:components:\n", "  mlplatform:components:\n    serving: {enabled: true, replicas: {minReplicas: 0}}\n"))),
    Broken("serving-without-kubeflow", "serving on, kubeflow off: the teams' routes and PodDefaults are Kubeflow's", (f"{K}.kubeflow.enabled",), edit("kind", ("    pipelines: {}\n", "    pipelines: {enabled: false}\n"), ("    kubeflow:\n      auth:", "    kubeflow:\n      enabled: false\n      auth:"))),
    Broken("idle-reclaim-longer-than-retention", "an idle period (4h) longer than the Prometheus keeps samples (3h)", (f"{K}.idleReclaim.period",), edit("dev", ("monitoring: {grafanaAdmins: [lead@acme.com]}", "monitoring: {grafanaAdmins: [lead@acme.com], retention: 3h}"))),
    Broken("idle-reclaim-warning-between-runs", "an idle warning (5m) shorter than the 10 minutes between two runs", (f"{K}.idleReclaim.warning",), edit("dev", ("  mlplatform:components:\n", "  mlplatform:components:\n    idleReclaim: {warning: 5m}\n"))),
    # --- several at once: the schema's and the rules' in one run ------------------------
    Broken("pool-with-three-problems", "an unknown accelerator, min above max and a reservation without its name in one pool", (f"{P0}.accelerator", f"{P0}.min", f"{P0}.reservation"), edit("dev", ("{name: l4, accelerator: nvidia-l4, machineType: g2-standard-24, min: 0, max: 4, provisioning: spot}", "{name: l4, accelerator: nvidia-l44, machineType: g2-standard-24, min: 5, max: 4, provisioning: reservation}"))),
    Broken("schema-and-rule-together", "a retention the schema refuses and NAP limits below the pools, reported together", (f"{K}.monitoring.retention", f"{C}.autoprovisioning.limits.cpu"), edit("dev", ("limits: {cpu: 512,", "limits: {cpu: 128,"), ("monitoring: {grafanaAdmins: [lead@acme.com]}", "monitoring: {grafanaAdmins: [lead@acme.com], retention: 2weeks}"))),
    Broken("nap-below-pools-cpu-and-memory", "prod's NAP limits as they were: 1,024 vCPUs and 4,096 GiB for pools taking 1,112 and 6,528", (f"{C}.autoprovisioning.limits.cpu", f"{C}.autoprovisioning.limits.memory"), edit("prod", ("limits: {cpu: 1280, memory: 7168,", "limits: {cpu: 1024, memory: 4096,"))),
)


def written() -> dict[str, bytes]:
    """Every file of the corpus, by name."""
    files: dict[str, bytes] = {}
    for broken in CORPUS:
        for name, content in broken.files().items():
            if name in files:
                raise ValueError(f"two corpus entries write {name}")
            files[name] = content
    return files


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    files = written()
    for stale in OUT.iterdir():
        if stale.name not in files:
            stale.unlink()
    for name, content in files.items():
        (OUT / name).write_bytes(content)
    print(f"wrote {len(CORPUS)} broken stacks to {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
