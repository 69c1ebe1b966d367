"""Numbers the APIs the platform writes to can hold, as data: a value beyond them plans
cleanly and fails (or is silently changed) only when the API reads it.

- Kubernetes quantities (requests, limits, quotas): ParseQuantity rounds a value finer than
  1n up to 1n and caps a binary-suffixed one (Ki ... Ei) at 2^63-1 (k8s.io/apimachinery
  v0.34.0 pkg/api/resource/quantity.go ParseQuantity, math.go maxAllowed); consumers read
  quantities as int64 (Value, MilliValue: the scheduler, Kueue), so nothing above 2^63-1
  survives. (The Quantity doc comment still says "3 decimal places"; the code keeps nano.)
- Integer fields of the GKE and Kubernetes APIs we fill (NAP resource limits, GPU quotas)
  are int64.
- Durations: Kueue reads `waitForPodsReady.timeout` as a metav1.Duration, which is Go's
  time.ParseDuration (apimachinery v0.34.0 pkg/apis/meta/v1/duration.go; kueue v0.19.2
  apis/config/v1beta1/configuration_types.go); Prometheus reads its retention with
  prometheus/common model.ParseDuration, which refuses "duration out of range" past a
  time.Duration (v0.70.1 model/time.go; y = 365d, w = 7d). A Go time.Duration is an int64
  count of nanoseconds (pkg.go.dev/time, "about 290 years").
- YAML: Pulumi reads a stack file with go-yaml (pulumi/pulumi sdk/go/common/encoding/marshal.go,
  `gopkg.in/yaml.v2`), which refuses an anchor whose value contains an alias of itself
  ("anchor '%s' value contains itself") and a document mostly made of expanded aliases
  ("document contains excessive aliasing"): once more than 100 values came through aliases and
  more than 1,000 were decoded, the share that came through aliases may be at most 99% up to
  400,000 decoded values, falling linearly to 10% at 4,000,000 (go-yaml v2.4.0 and v3.0.1
  decode.go `allowedAliasRatio`, `unmarshal`; read 2026-12-02 at those tags). The loader
  refuses the same, and bounds what it reads besides (stackmodel/stackfile.py): the sizes below are
  this project's choice, far above any stack file (the shipped ones are about 3 KB, 8 levels
  and 300 values), so that any file is refused or accepted within seconds.
"""

from __future__ import annotations

from decimal import Decimal

INT64_MAX = 2**63 - 1
QUANTITY_MAX = Decimal(INT64_MAX)
QUANTITY_STEP = Decimal("1e-9")
"""The finest a quantity is kept: 1n."""
GO_DURATION_MAX_SECONDS = Decimal(INT64_MAX) / Decimal(10**9)

STACK_FILE_MAX_BYTES = 1 << 20
"""The largest stack file the loader reads (a choice: 300 times the largest shipped one)."""
YAML_MAX_DEPTH = 64
"""The deepest nesting the loader reads (a choice: stack files nest about 8 levels, chart values a few more)."""
YAML_MAX_VALUES = 100_000
"""The most values, aliases expanded, the loader reads (a choice: Pulumi's go-yaml takes up to
400,000 at 99% aliases, which the schema would need tens of seconds for)."""
YAML_ALIAS_MIN_ALIASED = 100
YAML_ALIAS_MIN_DECODES = 1000
_ALIAS_RATIO_LOW, _ALIAS_RATIO_HIGH = 400_000, 4_000_000


def yaml_allowed_alias_ratio(decoded: int) -> float:
    """go-yaml's `allowedAliasRatio`: the share of decoded values that may come through aliases."""
    if decoded <= _ALIAS_RATIO_LOW:
        return 0.99
    if decoded >= _ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decoded - _ALIAS_RATIO_LOW) / (_ALIAS_RATIO_HIGH - _ALIAS_RATIO_LOW)


QUEUED_POOL_READY_MIN_SECONDS = 600
"""The shortest pods-ready timeout a queued (DWS) pool's workloads can meet. Kueue admits such a
workload when its ProvisioningRequest is provisioned; only then do the new nodes boot, install
the GPU driver and pull the images. Cluster autoscaler keeps those nodes for the pods for its
`--scale-down-unneeded-time`, 10 minutes by default (kubernetes/autoscaler
cluster-autoscaler/proposals/provisioning-request.md, "atomic-scale-up": "the duration during
which users need to create the Pods is equal to the value of --scale-down-unneeded-time"; the
default from its FAQ), the window the autoscaler itself allows. GKE publishes no boot time for
these nodes (NOT confirmed from a stored copy), so a shorter timeout is a warning, not an error."""

PERSISTENT_DISK_MAX_BYTES = 64 * 2**40
"""The largest volume GKE's default StorageClass (standard-rwo: a Compute Engine balanced
Persistent Disk; the program names no other class) provisions: a Persistent Disk is at most
64 TiB (Compute Engine "Persistent Disk" limits, https://cloud.google.com/compute/docs/disks).
NOT confirmed from a stored copy of that page (searched 2026-12-02)."""
