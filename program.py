"""The whole platform, in data-flow order: config -> Args -> cluster -> components -> outputs.

`__main__.py` calls `build` under the Pulumi engine; `python -m stacks plan` calls it
under mocks. Each layer reads only what the layer before it produced. This is the edge:
the one place that reads the stack's secrets from the Pulumi config.
"""

from __future__ import annotations

import json
from typing import Any

import pulumi

from components.platform import PlatformArgs, install, platform_args
from infra.cloud_identity import read_members
from infra.cluster import build_cluster
from plumbing.base import InstallRecord
from plumbing.installation import Secrets
from plumbing.overlays import overlay_verdict
from stackmodel.components.kubeflow import KUBEFLOW
from stackmodel.config import ConfigError, Problem
from stackmodel.rules import AUTH, cross_checks, with_read_members
from stackmodel.schema import GroupSource
from stackmodel.secrets import NAMESPACE, SecretKey, required_secrets
from stackmodel.stack import PlatformConfig


def build(config: PlatformConfig) -> InstallRecord:
    """Register the platform for `config`; return the install's record of its charts and trees,
    which `pulumi up` has no use for and the offline tools read (plumbing.base.InstallRecord)."""
    config = with_cloud_identity_members(config)
    args = args_of(config, read_secrets(config))
    # The chart overlays, as the offline tools judge them (tooling/cli.py load).
    stop_on([Problem(path, why) for path, why in overlay_verdict(args.components).problems])
    cluster = build_cluster(args.cluster)
    installed = install(args, cluster)
    pulumi.export("clusterName", cluster.name)
    pulumi.export("kubeconfig", cluster.kubeconfig)
    pulumi.export("kubeflowUrl", kubeflow_url(config))
    pulumi.export("profiles", [team.name for team in config.teams])
    gateway = installed.https_gateway
    if gateway is not None:
        # The A record of auth.hostname points here; the managed certificate waits for it.
        pulumi.export("gatewayAddress", gateway.address)
    if cluster.image_registry is not None:
        # Where CI pushes the notebook images and teams push theirs (docs/images.md).
        pulumi.export("imageRegistry", cluster.image_registry.url)
    return installed.record


def args_of(config: PlatformConfig, secrets: Secrets) -> PlatformArgs:
    """The platform's Args, each component's cut by the builder its Installation names."""
    return platform_args(config, secrets)


def with_cloud_identity_members(config: PlatformConfig) -> PlatformConfig:
    """`config` with its cloudIdentity groups' members read (infra/cloud_identity.py): every group
    that cannot be read stops the run, naming its path and the fixes; each member left out (one
    who cannot sign in to this stack) is a warning of the preview or update."""
    groups = {g.name: f"{AUTH}.groups[{k}]" for k, g in enumerate(config.components[KUBEFLOW].auth.groups) if g.source is GroupSource.CLOUD_IDENTITY}
    if not groups:
        return config
    read, failed = read_members(list(groups), config.project)
    stop_on([Problem(groups[group], why) for group, why in failed.items()])
    resolved, left_out = with_read_members(config, read)
    for path, why in left_out:
        pulumi.log.warn(f"{path}: {why}")
    # The members read may break a rule the stack's own could not (two whose e-mails give one
    # binding name): the same rules again, before any resource is registered.
    stop_on([Problem(path, why) for path, why in cross_checks(resolved)])
    return resolved


def stop_on(problems: list[Problem]) -> None:
    """Stop the preview or update with the stack's problems, listed as the loader lists them."""
    if problems:
        raise pulumi.RunError(str(ConfigError(f"stack {pulumi.get_stack()}", problems)))


def read_secrets(config: PlatformConfig) -> Secrets:
    """Every secret the stack's choices need, read once."""
    return {key: secret(key) for key in required_secrets(config)}


def secret(key: SecretKey) -> pulumi.Output[Any]:
    """The secret's value as a Pulumi secret; a clear RunError naming the command if it is unset."""
    raw = pulumi.Config(NAMESPACE).get_secret(key.key)
    if raw is None:
        raise pulumi.RunError(f"{NAMESPACE}:{key.key} ({key.what}) is not set; set it with: {key.how}")

    def decode(value: str) -> Any:
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value

    return pulumi.Output.secret(raw.apply(decode))


def kubeflow_url(config: PlatformConfig) -> str:
    """Where people open Kubeflow: the public hostname, or a port-forward on kind."""
    hostname = config.components[KUBEFLOW].auth.hostname
    if hostname:
        return f"https://{hostname}/"
    return "http://localhost:8080/ (kubectl port-forward -n istio-system svc/istio-ingressgateway 8080:80)"
