"""The stack file's Kubeflow Trainer (components/trainer.py)."""

from __future__ import annotations

from facts import versions
from stackmodel.components.jobset import JOBSET
from stackmodel.components.kubeflow_parts import KUBEFLOW_NAMESPACES
from stackmodel.components.spec import Need, What, chart_component

TRAINER = chart_component(
    "trainer", "Kubeflow Trainer and our training runtimes.", module=__name__, on_by_default=True, pins=(versions.TRAINER_CHART,),
    settings=("TrainerConfig", "Kubeflow Trainer v2 controller; our runtimes come from runtimes/.", "the Kubeflow Trainer chart"),
    needs=(
        Need(JOBSET, What.CRDS),  # Trainer's controller runs TrainJobs as JobSets: it watches that kind from its start
        Need(KUBEFLOW_NAMESPACES, What.NAMESPACE, optional=True),  # kubeflow-system, Kubeflow's tree's when Kubeflow is on
    ),
)
TrainerConfig = TRAINER.model
"""Its settings' model, by the name it has (the reference's; a pickled stack finds it here)."""
