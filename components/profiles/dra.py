"""A team's ResourceClaimTemplates: per DRA GPU pool (`gpuAllocation: dra`), a claim of all the
GPUs of one of its nodes, which the pool's runtime variants name (runtimes/dra.py). A
ResourceClaimTemplate is namespaced and a pod can name only one of its own namespace, so each
team namespace gets one per pool."""

from __future__ import annotations

from typing import Any

from components.profiles.args import TeamArgs
from facts.dra import DEVICE_CLASS, RESOURCE_API_VERSION, claim_template_name
from runtimes import dra
from runtimes.catalog import dra_runtimes


def dra_objects(args: TeamArgs) -> list[dict[str, Any]]:
    """The claim templates, and the binding of the DRA variants' guard (runtimes/dra.py policy)."""
    objects = claim_templates(args)
    if dra_runtimes(args.gpu_pools):
        objects.append(dra.binding(args.team.name))
    return objects


def claim_templates(args: TeamArgs) -> list[dict[str, Any]]:
    """resource.k8s.io/v1 (facts/dra.py): one request of exactly the node's GPU count from the
    DRA driver's DeviceClass of whole GPUs; the pod's nodeSelector keeps it on the pool."""
    return [
        {
            "apiVersion": RESOURCE_API_VERSION,
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": claim_template_name(pool.name), "namespace": args.team.name},
            "spec": {
                "spec": {
                    "devices": {
                        "requests": [
                            {
                                "name": "gpus",
                                "exactly": {
                                    "deviceClassName": DEVICE_CLASS,
                                    "allocationMode": "ExactCount",
                                    "count": pool.gpus_per_node,
                                },
                            }
                        ]
                    }
                }
            },
        }
        for pool in args.gpu_pools
        if pool.dra
    ]
