"""The stack file's Kueue (components/kueue.py): queues, quotas and all-or-nothing admission."""

from __future__ import annotations

from pydantic import Field, StrictBool, StrictInt, field_validator

from facts import versions
from facts.limits import GO_DURATION_MAX_SECONDS
from stackmodel.components.leader_worker_set import LEADER_WORKER_SET
from stackmodel.components.spec import ComponentSpec, Need, Toggle, What
from stackmodel.schema.chart_values import ChartValues, chart_values_field
from stackmodel.schema.common import DURATION, Model, duration_seconds


class WaitForPodsReady(Model):
    """Kueue's all-or-nothing admission (its `waitForPodsReady`): a workload Kueue admitted whose
    pods are not all ready in time is evicted, its quota freed, and requeued with backoff, so
    a half-started multi-node job never holds GPUs for long."""

    timeout: str = Field(
        default="20m",
        description="How long an admitted workload may take until every pod is scheduled, running and ready "
        "(a GPU pool scaling from zero plus the image pull) before Kueue evicts and requeues it; a duration "
        "such as 20m or 1h30m.",
    )
    block_admission: StrictBool = Field(
        default=False,
        description="Admit nothing else until the admitted workload's pods are all ready: strict one-at-a-time "
        "admission, at the price of admissions waiting on every node scale-up.",
    )
    backoff_limit_count: StrictInt | None = Field(
        default=None,
        ge=1,
        le=1000,
        description="Evictions for unready pods after which Kueue deactivates the workload; none: requeue "
        "it forever, backing off 60s doubling up to an hour.",
    )

    @field_validator("timeout")
    @classmethod
    def _timeout(cls, value: str) -> str:
        if not DURATION.match(value) or not any(c.isdigit() and c != "0" for c in value):
            raise ValueError(f"{value!r} is not a duration such as 20m or 1h30m: positive numbers with h, m or s")
        if duration_seconds(value) > GO_DURATION_MAX_SECONDS:
            raise ValueError(
                f"{value!r} is longer than a Go duration holds (about 292 years): Kueue reads it with Go's "
                "time.ParseDuration, which refuses it; use a timeout such as 1h"
            )
        return value


class KueueConfig(Toggle):
    """Kueue with the TrainJob, JobSet and Ray integrations; one ResourceFlavor per GPU pool,
    and a ProvisioningRequest admission check per queued pool."""

    wait_for_pods_ready: WaitForPodsReady = Field(
        default=WaitForPodsReady(),
        description="All-or-nothing admission: a multi-node TrainJob or RayJob starts whole, or is evicted "
        "and requeued.",
    )
    fair_sharing: StrictBool = Field(
        default=True,
        description="Kueue's fair sharing: the teams of a cohort share what its members leave idle by their "
        "`weight` (a team's own quota always comes back to it), and a team above its share is preempted first. "
        "false: Kueue's classic preemption, first come first served for idle quota (weights are then refused).",
    )
    values: ChartValues = chart_values_field("the Kueue chart")


# No need of Trainer, JobSet or KubeRay: Kueue defers an integration until its CRD appears
# (kubernetes-sigs/kueue pkg/controller/jobframework/setup.go, "deferring setting up controller").
KUEUE = ComponentSpec(
    "kueue",
    KueueConfig,
    "Queues and quotas per team; queued GPU pools need it.",
    on_by_default=True,
    pins=(versions.KUEUE_CHART,),
    # Its LeaderWorkerSet integration, where LWS is installed, watches that kind from its start.
    needs=(Need(LEADER_WORKER_SET, What.CRDS, optional=True),),
)
