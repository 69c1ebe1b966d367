"""Adding a component the way docs/development.md ("Adding a component") says, and nothing else:
this module is the component's (its settings' model, its spec, its Args and their builder, its
ComponentResource and its Installation), and the list it joins is the one the stack is parsed
with (here handed to the schema as a validation context, where a fork adds one line to
stackmodel/registry.py COMPONENTS). No other file of the program names it, yet the schema
takes its key, the stack check holds it to its needs, the plan installs it after what it needs,
and the full render and `check` see its objects.

The component: "hello", off unless a stack switches it on; a kustomize tree from a directory
the stack names (a Namespace and a Deployment), and a ConfigMap of ours with the stack's
greeting; it waits for cert-manager's CRDs (as a component with a Certificate would)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest
from pydantic import Field, ValidationError, model_validator

from infra.cluster import Cluster
from plumbing.base import PlatformComponent
from plumbing.installation import Installation, Secrets
from plumbing.readiness import Readiness
from plumbing.sources import mirror_sources
from stackmodel.components.cert_manager import CERT_MANAGER
from stackmodel.components.spec import ComponentSpec, Need, Toggle, What
from stackmodel.config import ConfigError
from stackmodel.registry import COMPONENTS, SPECS, settings_model
from stackmodel.rules import cross_checks
from stackmodel.schema.common import problem, rule
from stackmodel.stack import PlatformConfig
from tests.conftest import base_kind, with_changes
from tests.support import mirror
from tooling import check, fullrender
from tooling.plan import Plan, evaluate
from tooling.reference import reference

# --- the component, as a fork writes it -------------------------------------------------------


class HelloConfig(Toggle):
    """A hello app: a small tree of our own, and a greeting."""

    tree: str | None = Field(default=None, description="The kustomize directory it installs; required when enabled.")
    greeting: str = Field(default="hello", description="What its ConfigMap says.")

    @model_validator(mode="after")
    @rule("hello-tree-given")
    def _tree(self) -> HelloConfig:
        if self.enabled and not self.tree:
            raise problem("tree", "hello installs a kustomize tree: name its directory")
        return self


HELLO = ComponentSpec(
    "hello",
    HelloConfig,
    "A hello app; needs certManager.",
    installed_by=f"{__name__}:INSTALLATION",
    needs=(Need(CERT_MANAGER, What.CRDS),),
)


@dataclass(frozen=True)
class HelloArgs:
    tree: str
    greeting: str


def hello_args(config: PlatformConfig, secrets: Secrets) -> HelloArgs:
    settings = config.components[HELLO]
    return HelloArgs(tree=str(settings.tree), greeting=settings.greeting)


class Hello(PlatformComponent):
    """The hello app: its tree, then our greeting in the namespace the tree makes."""

    ready: pulumi.Resource

    def __init__(self, name: str, args: HelloArgs, cluster: Cluster, needs: list[pulumi.Resource], opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, cluster, opts)
        tree = k8s.kustomize.v2.Directory(name, k8s.kustomize.v2.DirectoryArgs(directory=args.tree), opts=self.child(needs))
        k8s.core.v1.ConfigMap(
            f"{name}-greeting",
            metadata=k8s.meta.v1.ObjectMetaArgs(name="greeting", namespace="hello"),
            data={"greeting": args.greeting},
            opts=self.child([tree]),
        )
        self.ready = tree
        self.register_outputs({"ready": tree.urn})


def _install(args: HelloArgs, cluster: Cluster, ready: Readiness) -> PlatformComponent:
    return Hello("hello", args, cluster, ready.resources(HELLO.needs, "hello"))


INSTALLATION = Installation(HELLO, hello_args, _install)

# --- the list it joins, and a stack that uses it --------------------------------------------

WITH_HELLO = {SPECS: (*COMPONENTS, HELLO)}
"""The list with the new entry, as the schema is handed it."""
K = "mlplatform:components"
OFF = {name: {"enabled": False} for name in ("istio", "kubeflow", "jobset", "trainer", "kuberay", "kueue", "monitoring", "pipelines")}

KUSTOMIZATION = "resources: [namespace.yaml, deployment.yaml]\n"
NAMESPACE = "apiVersion: v1\nkind: Namespace\nmetadata: {name: hello}\n"
DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: hello, namespace: hello}
spec:
  replicas: 1
  selector: {matchLabels: {app: hello}}
  template:
    metadata: {labels: {app: hello}}
    spec:
      containers:
        - name: hello
          image: docker.io/library/busybox:1.28.4
          command: [sleep, infinity]
          resources: {requests: {cpu: 10m, memory: 16Mi}, limits: {cpu: 10m, memory: 16Mi}}
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for name, text in (("kustomization.yaml", KUSTOMIZATION), ("namespace.yaml", NAMESPACE), ("deployment.yaml", DEPLOYMENT)):
        (tmp_path / name).write_text(text)
    return tmp_path


def hello_stack(tree: Path, **hello: Any) -> dict[str, Any]:
    """A kind stack of cert-manager and hello alone (no teams: they need Kubeflow and Kueue)."""
    stack = with_changes(base_kind(), {"mlplatform:teams": []})
    stack[K] = {**OFF, "hello": {"enabled": True, "tree": str(tree), **hello}}
    return stack


def parsed(raw: dict[str, Any]) -> PlatformConfig:
    return PlatformConfig.model_validate(raw, context=WITH_HELLO)


# --- what the list gives it -----------------------------------------------------------------


def test_the_schema_takes_its_key_and_it_is_off_by_default(tree: Path) -> None:
    assert not parsed(base_kind()).enabled(HELLO)
    config = parsed(hello_stack(tree, greeting="hi"))
    assert config.enabled(HELLO) and config.components[HELLO].greeting == "hi"
    assert list(settings_model((*COMPONENTS, HELLO)).model_fields)[-1] == "hello"


def test_its_own_rules_come_with_it(tree: Path) -> None:
    with pytest.raises(ValidationError) as refused:
        parsed(with_changes(hello_stack(tree), {f"{K}.hello": {"enabled": True}}))
    [error] = refused.value.errors()
    assert (error["loc"], error["ctx"]["field"], error["msg"]) == ((K, "hello"), "tree", "hello installs a kustomize tree: name its directory")


def test_without_the_list_entry_its_key_is_unknown(tree: Path) -> None:
    from stackmodel.config import validate

    with pytest.raises(ConfigError, match=r"mlplatform:components.hello: unknown key; known keys here: certManager, istio"):
        validate(hello_stack(tree), "hello")


def test_the_stack_is_held_to_what_it_needs(tree: Path) -> None:
    config = parsed(with_changes(hello_stack(tree), {f"{K}.certManager": {"enabled": False}}))
    assert cross_checks(config) == [(f"{K}.certManager.enabled", "hello needs certManager; enable certManager or disable hello")]
    assert cross_checks(parsed(hello_stack(tree))) == []


@pytest.fixture
def plan(tree: Path) -> Plan:
    config = parsed(hello_stack(tree))
    return evaluate(config.model_copy(update={"sources": mirror_sources(mirror.MIRROR)}), "hello")


def test_the_plan_installs_it_after_what_it_needs(plan: Plan) -> None:
    directory = plan.one("kubernetes:kustomize/v2:Directory", "hello")
    assert directory.urn == "urn:pulumi:hello::mlplatform::mlplatform:tests:Hello$kubernetes:kustomize/v2:Directory::hello"
    chart = plan.one("kubernetes:helm.sh/v4:Chart", "cert-manager")
    assert chart.urn in plan.waits_for(directory)
    greeting = plan.one("kubernetes:core/v1:ConfigMap", "hello-greeting")
    assert greeting.inputs["data"] == {"greeting": "hello"} and directory.urn in greeting.dependencies


@mirror.needed
def test_it_renders_and_passes_check(plan: Plan) -> None:
    render = fullrender.full_render(plan)
    ours = {(o.obj["kind"], o.key[3]): o.source for o in render.objects if o.key[2] == "hello" or o.key[3] == "hello"}
    # Source: `<component>/<install>` for a tree's objects, the component for ours.
    assert ours == {("Namespace", "hello"): "hello/hello", ("Deployment", "hello"): "hello/hello", ("ConfigMap", "greeting"): "hello"}
    assert [str(v) for v in check.check(render)] == []


def test_the_reference_lists_the_shipped_components_only() -> None:
    """The reference is the shipped list's; the test's entry is not in it."""
    assert "| `pipelines` |" in reference() and "| `hello` |" not in reference()


def test_a_spec_naming_no_installation_is_a_wiring_error() -> None:
    from plumbing.installation import installation
    from plumbing.readiness import WiringError

    missing = ComponentSpec("nothing", HelloConfig, "Nothing.", installed_by="components.nothing:INSTALLATION")
    with pytest.raises(WiringError, match=r"^component nothing: installed_by 'components.nothing:INSTALLATION' names nothing importable"):
        installation(missing)
    other = ComponentSpec("other", HelloConfig, "Another's.", installed_by=f"{__name__}:INSTALLATION")
    with pytest.raises(WiringError, match=rf"^component other: {__name__}:INSTALLATION is not the Installation of this spec$"):
        installation(other)
