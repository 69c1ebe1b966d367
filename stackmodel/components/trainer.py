"""The stack file's Kubeflow Trainer (components/trainer.py)."""

from __future__ import annotations

from facts import versions
from stackmodel.components.jobset import JOBSET
from stackmodel.components.kubeflow_parts import KUBEFLOW_NAMESPACES
from stackmodel.components.spec import ComponentSpec, Need, Toggle, What
from stackmodel.schema.chart_values import ChartValues, chart_values_field


class TrainerConfig(Toggle):
    """Kubeflow Trainer v2 controller; our runtimes come from runtimes/."""

    values: ChartValues = chart_values_field("the Kubeflow Trainer chart")


TRAINER = ComponentSpec(
    "trainer",
    TrainerConfig,
    "Kubeflow Trainer and our training runtimes.",
    needs=(
        Need(JOBSET, What.CRDS),  # Trainer's controller runs TrainJobs as JobSets: it watches that kind from its start
        Need(KUBEFLOW_NAMESPACES, What.NAMESPACE, optional=True),  # kubeflow-system, Kubeflow's tree's when Kubeflow is on
    ),
    on_by_default=True,
    pins=(versions.TRAINER_CHART,),
)
