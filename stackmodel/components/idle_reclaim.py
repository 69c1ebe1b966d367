"""The stack file's idle reclaim (components/idle_reclaim.py): GPU notebooks whose GPUs did
nothing for a while are stopped as the notebook UI stops them."""

from __future__ import annotations

from typing import Any

from pydantic import Field, StrictBool, field_validator, model_validator

from facts import versions
from stackmodel.components.dcgm import DCGM_EXPORTER, DcgmSource
from stackmodel.components.kubeflow import KUBEFLOW
from stackmodel.components.monitoring import MONITORING
from stackmodel.components.spec import ComponentSpec, Need, What
from stackmodel.schema.cluster import Environment
from stackmodel.schema.common import DURATION, Model, duration_seconds, problem, rule
from stackmodel.schema.pools import SharingStrategy

RUN_INTERVAL_SECONDS = 10 * 60
"""The reclaim runs every 10 minutes (components/idle_reclaim.py SCHEDULE is made from this)."""
STEP_SECONDS = 60
"""The reclaim's sample step (components/idle_reclaim_job.py Settings.step_seconds): each step is
the busiest sample of its minute; it reads two steps before the period besides."""
PERIOD_MIN_SECONDS = 3 * RUN_INTERVAL_SECONDS
"""Three runs of the reclaim at least: a notebook is never judged on one sample."""
PERIOD_MAX_SECONDS = 7 * 24 * 3600
"""A week: Prometheus must still hold the samples the reclaim reads (monitoring.retention, 15d by default)."""


def seconds(duration: str) -> int:
    """A duration such as 4h or 1h30m in seconds."""
    return int(duration_seconds(duration))


def _duration(value: str) -> str:
    if not DURATION.match(value) or not any(c.isdigit() and c != "0" for c in value):
        raise ValueError(f"{value!r} is not a duration such as 4h or 1h30m: positive numbers with h, m or s")
    return value


class IdleReclaimConfig(Model):
    """Stops a GPU notebook whose GPUs stayed below the idle threshold (monitoring.idleGpuThreshold,
    DCGM's utilisation, the idle-GPU alert's signal) for `period`, the way the notebook UI stops it:
    its volumes are kept and Start in the notebook list brings it back. The notebook's events warn
    `warning` ahead; an owner may exempt a notebook with the label mlplatform.dev/idle-reclaim=exempt
    (docs/teams.md, "GPU notebooks")."""

    enabled: StrictBool | None = Field(
        default=None,
        description="Default: on for stacks that are not prod and collect GPU metrics (dcgmExporter), off on prod "
        "and wherever there are no GPU metrics to judge by.",
    )
    period: str = Field(
        default="4h",
        description="How long a GPU notebook's GPUs may stay idle before it is stopped: a duration from 30m to 168h "
        "such as 4h or 2h30m.",
    )
    warning: str = Field(
        default="30m",
        description="How long before it is stopped the notebook's events say so (a Warning event, in the notebook's "
        "Events in the UI): a duration shorter than `period`.",
    )

    @field_validator("period", "warning")
    @classmethod
    def _durations(cls, value: str) -> str:
        return _duration(value)

    @model_validator(mode="after")
    @rule("idle-reclaim-period-and-warning")
    def _limits(self) -> IdleReclaimConfig:
        period = seconds(self.period)
        if not PERIOD_MIN_SECONDS <= period <= PERIOD_MAX_SECONDS:
            raise problem("period", f"period {self.period} is outside 30m..168h: the reclaim runs every 10 minutes and reads a week of samples at most")
        if seconds(self.warning) >= period:
            raise problem("warning", f"warning {self.warning} is not shorter than period {self.period}; warn within the period, e.g. 30m")
        if seconds(self.warning) < RUN_INTERVAL_SECONDS:
            # A notebook's idle time grows by one interval between two runs: a warning window
            # shorter than that holds no run for some notebooks, which would go from "under the
            # period" straight to stopped (the job then warns first and stops a run later).
            raise problem(
                "warning",
                f"warning {self.warning} is shorter than the {RUN_INTERVAL_SECONDS // 60} minutes between two runs of the "
                f"reclaim, so many notebooks would see no run inside it; use {RUN_INTERVAL_SECONDS // 60}m or more",
            )
        return self

    @property
    def period_seconds(self) -> int:
        return seconds(self.period)

    @property
    def warning_seconds(self) -> int:
        return seconds(self.warning)


def _mig_on_managed_dcgm(config: Any) -> bool:
    """A MIG pool whose slices GKE's managed DCGM collection reports (not known to carry each
    slice's activity: stackmodel/rules/ idle-reclaim-reads-mig-slices)."""
    managed = config.components[DCGM_EXPORTER].source is DcgmSource.GKE_MANAGED
    pools = getattr(config.cluster, "gpu_pools", ())
    return managed and any(p.sharing is not None and p.sharing.strategy is SharingStrategy.MIG for p in pools)


def _where_it_can_judge(config: Any) -> bool:
    """On where it can judge (GPU metrics in the Prometheus it reads, notebooks to stop, each MIG
    slice's activity), off on prod."""
    return (
        config.environment is not Environment.PROD
        and config.enabled(DCGM_EXPORTER)
        and config.enabled(MONITORING)
        and config.enabled(KUBEFLOW)
        and not _mig_on_managed_dcgm(config)
    )


IDLE_RECLAIM = ComponentSpec(
    "idleReclaim",
    IdleReclaimConfig,
    "Stop GPU notebooks whose GPUs stayed idle; needs kubeflow, monitoring and GPU metrics.",
    # It runs in the monitoring namespace, beside the Prometheus it reads. Monitoring is required,
    # with kubeflow and GPU metrics: stackmodel/rules/ idle-reclaim-can-judge says so with the reasons,
    # so the need is not also the component-needs rule's.
    needs=(Need(MONITORING, What.NAMESPACE, optional=True),),
    on_by_default=_where_it_can_judge,
    pins=(versions.PYTHON_IMAGE,),
)
