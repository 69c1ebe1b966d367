"""Cloud-side resources: GKE (network, cluster, pools, NAP, IAM) or a local kind cluster."""
