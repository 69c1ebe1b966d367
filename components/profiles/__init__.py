"""Teams as code, one module per concern of a team: per team a Kubeflow profile namespace
with its owner, contributors written exactly as KFAM writes them, a quota and a LimitRange
(`namespace`), a Kueue ClusterQueue + `default` LocalQueue (`queues`), NetworkPolicies
(`network`), the team's PodDefault with its Ray address, token and bucket mount
(`pod_default`), optionally a RayCluster behind the Kubeflow gateway (`ray`), and on GKE a
Google service account (Workload Identity) and an optional bucket (`google`). `team` makes
them one component per team, each object waiting only for what it needs; `names` keeps the
names live objects have; `args` cuts the teams' Args from the stack model.
"""
