"""The training runtimes as one Pulumi component: a CustomResource per manifest of
`runtimes.catalog`. It goes after the Trainer chart (CRDs and admission webhook first);
the integrator says so with `depends_on` and gives the Kubernetes provider in `opts`."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from infra.component import Component
from runtimes import dra, kueue_guard
from runtimes.args import TrainingRuntimesArgs
from runtimes.catalog import cluster_training_runtimes, dra_runtimes, runtime_priority_class


class TrainingRuntimes(Component):
    """The runtimes data scientists name in `TrainerClient().train(runtime=...)`: the base four
    and a variant of each per GPU pool; with Kueue, the admission policy that keeps Kueue's
    count of the GPU variants' TrainJobs true (runtimes/kueue_guard.py)."""

    names: list[str]
    """The runtime names, in catalog order: what `TrainerClient().train(runtime=...)` takes."""

    def __init__(
        self,
        name: str,
        args: TrainingRuntimesArgs,
        needs: list[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
    ):
        """`needs`: the Trainer chart (CRDs and webhook). Each runtime waits for it itself:
        Pulumi does not make children wait for their component's own `depends_on`
        (pulumi/runtime/resource.py prepare_resource reads only the resource's options)."""
        super().__init__(name, opts)
        child = pulumi.ResourceOptions(parent=self, depends_on=needs)
        # Before any TrainJob's pod: the API server refuses a pod naming a PriorityClass that does not exist.
        priority = runtime_priority_class()
        k8s.scheduling.v1.PriorityClass(
            f"priority-{priority['metadata']['name']}",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=priority["metadata"]["name"]),
            value=priority["value"],
            preemption_policy=priority["preemptionPolicy"],
            global_default=priority["globalDefault"],
            description=priority["description"],
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.names = []
        for manifest in cluster_training_runtimes(args):
            metadata = manifest["metadata"]
            k8s.apiextensions.CustomResource(
                metadata["name"],
                api_version=manifest["apiVersion"],
                kind=manifest["kind"],
                metadata=k8s.meta.v1.ObjectMetaArgs(name=metadata["name"], labels=metadata["labels"]),
                spec=manifest["spec"],
                opts=child,
            )
            self.names.append(metadata["name"])
        guard = kueue_guard.policy(args.gpu_pools) if args.kueue else None
        if guard is not None:
            # Cluster-wide, in force where a team namespace binds it (components/profiles/queues.py).
            k8s.admissionregistration.v1.ValidatingAdmissionPolicy(
                guard["metadata"]["name"], metadata=guard["metadata"], spec=guard["spec"], opts=pulumi.ResourceOptions(parent=self)
            )
        dra_guard = dra.policy(dra_runtimes(args.gpu_pools))
        if dra_guard is not None:
            # In force where a team namespace binds it (components/profiles/dra.py).
            k8s.admissionregistration.v1.ValidatingAdmissionPolicy(
                dra_guard["metadata"]["name"], metadata=dra_guard["metadata"], spec=dra_guard["spec"], opts=pulumi.ResourceOptions(parent=self)
            )
        self.register_outputs({"names": self.names})
