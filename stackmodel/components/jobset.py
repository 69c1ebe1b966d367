"""The stack file's JobSet (components/jobset.py)."""

from __future__ import annotations

from facts import versions
from stackmodel.components.spec import ComponentSpec, Toggle
from stackmodel.schema.chart_values import ChartValues, chart_values_field


class JobSetConfig(Toggle):
    """JobSet, installed once (Trainer's own copy is switched off)."""

    values: ChartValues = chart_values_field("the JobSet chart")


JOBSET = ComponentSpec(
    "jobset",
    JobSetConfig,
    "JobSet, which TrainJobs run as; trainer needs it.",
    on_by_default=True,
    pins=(versions.JOBSET_CHART,),
)
