"""The stack file's JobSet (components/jobset.py)."""

from __future__ import annotations

from facts import versions
from stackmodel.components.spec import chart_component

JOBSET = chart_component(
    "jobset", "JobSet, which TrainJobs run as; trainer needs it.", module=__name__, on_by_default=True, pins=(versions.JOBSET_CHART,),
    settings=("JobSetConfig", "JobSet, installed once (Trainer's own copy is switched off).", "the JobSet chart"),
)
JobSetConfig = JOBSET.model
"""Its settings' model, by the name it has (the reference's; a pickled stack finds it here)."""
