"""Pulumi type tokens the tools and the policy pack look for in a plan, in one place.

Each token is what the provider SDK registers its resource as: the first argument its
class passes to `super().__init__` (or its `@pulumi.type_token`), read in the installed
SDKs (pulumi-kubernetes 4.34.2, pulumi-gcp 10.2.0, pulumi 3.272.0). A provider major
upgrade may move a token (helm.sh/v3 -> v4 did): re-read them then.
"""

from __future__ import annotations

# pulumi_kubernetes/helm/v4/Chart.py, helm/v3/Release.py, kustomize/v2/Directory.py,
# yaml/v2/ConfigFile.py, yaml/v2/ConfigGroup.py
HELM_CHART = "kubernetes:helm.sh/v4:Chart"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
KUSTOMIZE = "kubernetes:kustomize/v2:Directory"
CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile"
CONFIG_GROUP = "kubernetes:yaml/v2:ConfigGroup"
# pulumi_kubernetes/provider.py: @pulumi.type_token("pulumi:providers:kubernetes")
K8S_PROVIDER = "pulumi:providers:kubernetes"
# pulumi/runtime/stack.py: the root stack resource every program registers under
STACK = "pulumi:pulumi:Stack"

# pulumi_gcp/container/cluster.py, container/node_pool.py, compute/firewall.py,
# serviceaccount/account.py
GKE_CLUSTER = "gcp:container/cluster:Cluster"
GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
GCP_FIREWALL = "gcp:compute/firewall:Firewall"
GCP_SERVICE_ACCOUNT = "gcp:serviceaccount/account:Account"
# pulumi_gcp/compute/global_address.py
GCP_GLOBAL_ADDRESS = "gcp:compute/globalAddress:GlobalAddress"
# pulumi_gcp/organizations/get_project.py: the invoke's token (a read, not a resource)
GCP_GET_PROJECT = "gcp:organizations/getProject:getProject"
# pulumi_gcp/cloudidentity/get_group_lookup.py, get_group_transitive_memberships.py: a Google
# group's resource name by its e-mail, and its members, nested groups' included
GCP_GROUP_LOOKUP = "gcp:cloudidentity/getGroupLookup:getGroupLookup"
GCP_GROUP_TRANSITIVE_MEMBERSHIPS = "gcp:cloudidentity/getGroupTransitiveMemberships:getGroupTransitiveMemberships"
# pulumi_gcp/sql/database_instance.py
CLOUD_SQL_INSTANCE = "gcp:sql/databaseInstance:DatabaseInstance"
# pulumi_random/random_password.py, pulumi_command/local/command.py
RANDOM_PASSWORD = "random:index/randomPassword:RandomPassword"
LOCAL_COMMAND = "command:local:Command"

UPSTREAM_INSTALLS = (HELM_CHART, HELM_RELEASE, KUSTOMIZE, CONFIG_FILE)
"""What installs upstream software as published: charts, trees, release manifests."""
