"""The stack file's idle reclaim (components/idle_reclaim.py): GPU notebooks whose GPUs did
nothing for a while are stopped as the notebook UI stops them."""

from __future__ import annotations

import re
from decimal import Decimal

from pydantic import Field, StrictBool, field_validator, model_validator

from stacks.schema.common import DURATION, Model, problem

PERIOD_MIN_SECONDS = 30 * 60
"""Three runs of the reclaim (every 10 minutes) at least: a notebook is never judged on one sample."""
PERIOD_MAX_SECONDS = 7 * 24 * 3600
"""A week: Prometheus must still hold the samples the reclaim reads (monitoring.retention, 15d by default)."""


def seconds(duration: str) -> int:
    """A duration such as 4h or 1h30m in seconds."""
    return int(sum(Decimal(n) * {"h": 3600, "m": 60, "s": 1}[u] for n, u in re.findall(r"([0-9]+)([hms])", duration)))


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
    def _limits(self) -> IdleReclaimConfig:
        period = seconds(self.period)
        if not PERIOD_MIN_SECONDS <= period <= PERIOD_MAX_SECONDS:
            raise problem("period", f"period {self.period} is outside 30m..168h: the reclaim runs every 10 minutes and reads a week of samples at most")
        if seconds(self.warning) >= period:
            raise problem("warning", f"warning {self.warning} is not shorter than period {self.period}; warn within the period, e.g. 30m")
        return self

    @property
    def period_seconds(self) -> int:
        return seconds(self.period)

    @property
    def warning_seconds(self) -> int:
        return seconds(self.warning)
