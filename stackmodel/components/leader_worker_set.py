"""The stack file's LeaderWorkerSet (components/leader_worker_set.py)."""

from __future__ import annotations

from facts import versions
from stackmodel.components.spec import chart_component

LEADER_WORKER_SET = chart_component(
    "leaderWorkerSet",
    "LeaderWorkerSet: multi-node LLM replicas (one leader and its workers, admitted whole by Kueue); serving with llm needs it.",
    module=__name__,
    pins=(versions.LWS_CHART,),
    settings=(
        "LeaderWorkerSetConfig",
        "LeaderWorkerSet, installed once for the cluster (Trainer's data cache, which would install a second copy, stays off).",
        "the LeaderWorkerSet chart",
    ),
)
LeaderWorkerSetConfig = LEADER_WORKER_SET.model
"""Its settings' model, by the name it has (the reference's; a pickled stack finds it here)."""
