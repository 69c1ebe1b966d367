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
"""

from __future__ import annotations

from decimal import Decimal

INT64_MAX = 2**63 - 1
QUANTITY_MAX = Decimal(INT64_MAX)
QUANTITY_STEP = Decimal("1e-9")
"""The finest a quantity is kept: 1n."""
GO_DURATION_MAX_SECONDS = Decimal(INT64_MAX) / Decimal(10**9)
