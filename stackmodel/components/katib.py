"""The stack file's Katib (components/katib.py): hyperparameter search, each trial a TrainJob."""

from __future__ import annotations

from pydantic import Field, StrictInt

from facts import versions
from stackmodel.components.cert_manager import CERT_MANAGER
from stackmodel.components.istio import ISTIO
from stackmodel.components.kubeflow import KUBEFLOW
from stackmodel.components.spec import ComponentSpec, Need, Toggle, What
from stackmodel.components.trainer import TRAINER
from stackmodel.schema.common import Model, VolumeSize


class KatibRoom(Model):
    """Room kept in every team's quota for what Katib runs beside the trials Kueue admits: a
    suggestion pod per running search, and the metrics collector Katib adds to each running
    trial's first pod (docs/katib.md). A search beyond it has its pods refused by the quota."""

    searches: StrictInt = Field(default=1, ge=0, le=20, description="Searches (Katib Experiments) a team runs at once.")
    trials: StrictInt = Field(default=4, ge=0, le=100, description="Trials running at once, over all of a team's searches.")


class KatibConfig(Toggle):
    """Katib: hyperparameter search (the Kubeflow SDK's OptimizerClient), every trial a TrainJob on
    the platform's runtimes, queued by Kueue like any TrainJob; its UI at /katib/."""

    database_storage: VolumeSize = Field(
        default="10Gi",
        description="The volume of Katib's MySQL (protected and retained): every trial's metrics. Grows where the "
        "storage class allows expansion; never shrinks.",
    )
    room: KatibRoom = Field(default=KatibRoom(), description="Per team: quota kept for Katib's own pods beside the trials.")


KATIB = ComponentSpec(
    "katib",
    KatibConfig,
    "Katib hyperparameter search, trials as TrainJobs; needs kubeflow, trainer, certManager and istio.",
    needs=(
        Need(KUBEFLOW, What.CONTROLLER),  # its objects live in Kubeflow's namespace; team namespaces are profiles
        Need(TRAINER, What.CRDS),  # every trial is a TrainJob: its controller watches the kind from its start
        Need(CERT_MANAGER, What.CRDS),  # its webhooks' certificate
        Need(ISTIO, What.CRDS),  # its route and policy
    ),
    pins=(versions.KATIB,),
)
