"""Adding a component the way docs/development.md ("Adding a component") says, and nothing else.

First in this process, with one module of the test standing in for the component's two (its
settings' model, its spec, its Args and their builder, its ComponentResource and its
Installation): the list it joins is handed to the schema as a validation context, where a fork
adds one line to stackmodel/registry.py COMPONENTS, and no other file of the program names it,
yet the schema takes its key, the stack check holds it to its needs and the plan installs it
after what it needs. The component: "greeter", off unless a stack switches it on; a kustomize
tree from a directory the stack names (a Namespace and a Deployment), and a ConfigMap of ours
with the stack's greeting; it waits for cert-manager's CRDs.

Then the recipe itself, literally: its blocks written and applied in a copy of the working tree,
its chart packaged into a mirror, and the result planned, rendered and checked by the command
line, its overlay hint and `make docs` seen, and exactly the recipe's files changed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest
import yaml
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
from tests.support.checkout import REPO, copy_working_tree
from tooling.plan import Plan, evaluate
from tooling.reference import reference
from tooling.tools import find

# --- the component, as a fork writes it -------------------------------------------------------


class GreeterConfig(Toggle):
    """A greeter: a small tree of our own, and a greeting."""

    tree: str | None = Field(default=None, description="The kustomize directory it installs; required when enabled.")
    greeting: str = Field(default="hello", description="What its ConfigMap says.")

    @model_validator(mode="after")
    @rule("greeter-tree-given")
    def _tree(self) -> GreeterConfig:
        if self.enabled and not self.tree:
            raise problem("tree", "greeter installs a kustomize tree: name its directory")
        return self


GREETER = ComponentSpec(
    "greeter",
    GreeterConfig,
    "A greeter; needs certManager.",
    installed_by=f"{__name__}:INSTALLATION",
    needs=(Need(CERT_MANAGER, What.CRDS),),
)


@dataclass(frozen=True)
class GreeterArgs:
    tree: str
    greeting: str


def greeter_args(config: PlatformConfig, secrets: Secrets) -> GreeterArgs:
    settings = config.components[GREETER]
    return GreeterArgs(tree=str(settings.tree), greeting=settings.greeting)


class Greeter(PlatformComponent):
    """The greeter: its tree, then our greeting in the namespace the tree makes."""

    ready: pulumi.Resource

    def __init__(self, name: str, args: GreeterArgs, cluster: Cluster, needs: list[pulumi.Resource], opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, cluster, opts)
        tree = k8s.kustomize.v2.Directory(name, k8s.kustomize.v2.DirectoryArgs(directory=args.tree), opts=self.child(needs))
        k8s.core.v1.ConfigMap(
            f"{name}-greeting",
            metadata=k8s.meta.v1.ObjectMetaArgs(name="greeting", namespace="greeter"),
            data={"greeting": args.greeting},
            opts=self.child([tree]),
        )
        self.ready = tree
        self.register_outputs({"ready": tree.urn})


def _install(args: GreeterArgs, cluster: Cluster, ready: Readiness) -> PlatformComponent:
    return Greeter("greeter", args, cluster, ready.resources(GREETER.needs, "greeter"))


INSTALLATION = Installation(GREETER, greeter_args, _install)

# --- the list it joins, and a stack that uses it --------------------------------------------

WITH_GREETER = {SPECS: (*COMPONENTS, GREETER)}
"""The list with the new entry, as the schema is handed it."""
K = "mlplatform:components"
OFF = {name: {"enabled": False} for name in ("istio", "kubeflow", "jobset", "trainer", "kuberay", "kueue", "monitoring", "pipelines")}

KUSTOMIZATION = "resources: [namespace.yaml, deployment.yaml]\n"
NAMESPACE = "apiVersion: v1\nkind: Namespace\nmetadata: {name: greeter}\n"
DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: greeter, namespace: greeter}
spec:
  replicas: 1
  selector: {matchLabels: {app: greeter}}
  template:
    metadata: {labels: {app: greeter}}
    spec:
      containers:
        - name: greeter
          image: docker.io/library/busybox:1.28.4
          command: [sleep, infinity]
          resources: {requests: {cpu: 10m, memory: 16Mi}, limits: {cpu: 10m, memory: 16Mi}}
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for name, text in (("kustomization.yaml", KUSTOMIZATION), ("namespace.yaml", NAMESPACE), ("deployment.yaml", DEPLOYMENT)):
        (tmp_path / name).write_text(text)
    return tmp_path


def greeter_stack(tree: Path, **greeter: Any) -> dict[str, Any]:
    """A kind stack of cert-manager and greeter alone (no teams: they need Kubeflow and Kueue)."""
    stack = with_changes(base_kind(), {"mlplatform:teams": []})
    stack[K] = {**OFF, "greeter": {"enabled": True, "tree": str(tree), **greeter}}
    return stack


def parsed(raw: dict[str, Any]) -> PlatformConfig:
    return PlatformConfig.model_validate(raw, context=WITH_GREETER)


# --- what the list gives it -----------------------------------------------------------------


def test_the_schema_takes_its_key_and_it_is_off_by_default(tree: Path) -> None:
    assert not parsed(base_kind()).enabled(GREETER)
    config = parsed(greeter_stack(tree, greeting="hi"))
    assert config.enabled(GREETER) and config.components[GREETER].greeting == "hi"
    assert list(settings_model((*COMPONENTS, GREETER)).model_fields)[-1] == "greeter"


def test_its_own_rules_come_with_it(tree: Path) -> None:
    with pytest.raises(ValidationError) as refused:
        parsed(with_changes(greeter_stack(tree), {f"{K}.greeter": {"enabled": True}}))
    [error] = refused.value.errors()
    assert (error["loc"], error["ctx"]["field"], error["msg"]) == ((K, "greeter"), "tree", "greeter installs a kustomize tree: name its directory")


def test_without_the_list_entry_its_key_is_unknown(tree: Path) -> None:
    from stackmodel.config import validate

    with pytest.raises(ConfigError, match=r"mlplatform:components.greeter: unknown key; known keys here: certManager, istio"):
        validate(greeter_stack(tree), "greeter")


def test_the_stack_is_held_to_what_it_needs(tree: Path) -> None:
    config = parsed(with_changes(greeter_stack(tree), {f"{K}.certManager": {"enabled": False}}))
    assert cross_checks(config) == [(f"{K}.certManager.enabled", "greeter needs certManager; enable certManager or disable greeter")]
    assert cross_checks(parsed(greeter_stack(tree))) == []


@pytest.fixture
def plan(tree: Path) -> Plan:
    config = parsed(greeter_stack(tree))
    return evaluate(config.model_copy(update={"sources": mirror_sources(mirror.MIRROR)}), "greeter")


def test_the_plan_installs_it_after_what_it_needs(plan: Plan) -> None:
    directory = plan.one("kubernetes:kustomize/v2:Directory", "greeter")
    assert directory.urn == "urn:pulumi:greeter::mlplatform::mlplatform:tests:Greeter$kubernetes:kustomize/v2:Directory::greeter"
    chart = plan.one("kubernetes:helm.sh/v4:Chart", "cert-manager")
    assert chart.urn in plan.waits_for(directory)
    greeting = plan.one("kubernetes:core/v1:ConfigMap", "greeter-greeting")
    assert greeting.inputs["data"] == {"greeting": "hello"} and directory.urn in greeting.dependencies


def test_the_reference_lists_the_shipped_components_only() -> None:
    """The reference is the shipped list's; the test's entry is not in it."""
    assert "| `pipelines` |" in reference() and "| `greeter` |" not in reference()


def test_a_spec_naming_no_installation_is_a_wiring_error() -> None:
    from plumbing.installation import installation
    from plumbing.readiness import WiringError

    missing = ComponentSpec("nothing", GreeterConfig, "Nothing.", installed_by="components.nothing:INSTALLATION")
    with pytest.raises(WiringError, match=r"^component nothing: installed_by 'components.nothing:INSTALLATION' names nothing importable"):
        installation(missing)
    other = ComponentSpec("other", GreeterConfig, "Another's.", installed_by=f"{__name__}:INSTALLATION")
    with pytest.raises(WiringError, match=rf"^component other: {__name__}:INSTALLATION is not the Installation of this spec$"):
        installation(other)


# --- the recipe of docs/development.md, walked literally in a copy ------------------------------

DOCS = REPO / "docs" / "development.md"
CHART_FILES = {
    "Chart.yaml": "apiVersion: v2\nname: hello\nversion: 0.1.0\ndescription: A greeting in the cluster.\n",
    "values.yaml": "greeting: hello\n",
    "templates/configmap.yaml": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hello\n  namespace: {{ .Release.Namespace }}\n"
        "data:\n  greeting: {{ .Values.greeting | quote }}\n"
    ),
    "templates/deployment.yaml": """apiVersion: apps/v1
kind: Deployment
metadata:
  name: hello
  namespace: {{ .Release.Namespace }}
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
""",
}
"""The chart `hello` 0.1.0 the recipe's pin names: what `make mirror` would fetch."""
TOUCHED = {
    "stackmodel/components/hello.py",
    "components/hello.py",
    "stackmodel/registry.py",
    "facts/versions.py",
    "facts/support.py",
    "docs/reference.md",
    "docs/versions.md",
}
"""What the recipe changes: its two modules, the list, the pin, the support facts, and what
`make docs` writes from them."""


def recipe() -> str:
    text = DOCS.read_text()
    return text[text.index("## Adding a component\n") : text.index("## Where a rule goes\n")]


def new_files(section: str) -> dict[str, str]:
    """The recipe's new modules: its ```python title="<path>"``` blocks, as written."""
    return {
        path: textwrap.dedent(body)
        for path, body in re.findall(r'^ *```python title="([^"]+)"\n(.*?)^ *```$', section, re.S | re.M)
    }


def edits(section: str) -> list[tuple[str, list[list[str]]]]:
    """The recipe's edits of existing files: its ```diff``` blocks, each (path, hunks), a hunk
    its lines as the diff shows them (` ` context, `+` added)."""
    found = []
    for body in re.findall(r"^ *```diff\n(.*?)^ *```$", section, re.S | re.M):
        lines = textwrap.dedent(body).splitlines()
        path = lines[1].removeprefix("+++ b/")
        hunks: list[list[str]] = []
        for line in lines[2:]:
            if line.startswith("@@"):
                hunks.append([])
            else:
                hunks[-1].append(line if line else " ")
        found.append((path, hunks))
    return found


def apply(text: str, hunk: list[str]) -> str:
    """One hunk applied where its context lines stand, once in the file."""
    before = "".join(line[1:] + "\n" for line in hunk if line[0] == " ")
    after = "".join(line[1:] + "\n" for line in hunk if line[0] in " +")
    assert text.count(before) == 1, f"the recipe's context is not once in the file:\n{before}"
    return text.replace(before, after)


def run(copy: Path, *args: str | Path, status: int = 0) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, *map(str, args)], cwd=copy, capture_output=True, text=True, check=False)
    assert result.returncode == status, f"{' '.join(map(str, args))} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result


def hello_mirror(tmp_path: Path) -> Path:
    """The tests' mirror with the chart `hello` 0.1.0 packaged into its charts/."""
    into = tmp_path / "mirror"
    for entry in mirror.MIRROR.iterdir():
        if entry.name != "charts":
            (into / entry.name).parent.mkdir(parents=True, exist_ok=True)
            (into / entry.name).symlink_to(entry)
    (into / "charts").mkdir()
    for chart in (mirror.MIRROR / "charts").iterdir():
        (into / "charts" / chart.name).symlink_to(chart)
    source = tmp_path / "chart" / "hello"
    for name, text in CHART_FILES.items():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_text(text)
    subprocess.run([find("helm"), "package", str(source), "--destination", str(into / "charts")], check=True, capture_output=True)
    return into


def changed(copy: Path) -> set[str]:
    """Files of the copy that differ from the working tree or are new (caches left out)."""
    found = set()
    for path in copy.rglob("*"):
        name = str(path.relative_to(copy))
        if not path.is_file() or "__pycache__" in path.parts or name.startswith((".mlplatform", ".ruff_cache")):
            continue
        original = REPO / name
        if not original.is_file() or original.read_bytes() != path.read_bytes():
            found.add(name)
    return found


@mirror.needed
def test_the_recipe_of_the_docs_adds_a_component_that_plans_renders_and_passes_check(tmp_path: Path) -> None:
    section = recipe()
    copy = copy_working_tree(tmp_path / "copy")
    modules = new_files(section)
    assert set(modules) == {"stackmodel/components/hello.py", "components/hello.py"}
    for path, text in modules.items():
        assert not (copy / path).exists()
        (copy / path).write_text(text)
    patched = edits(section)
    assert [path for path, _ in patched] == ["facts/versions.py", "facts/support.py", "stackmodel/registry.py"]
    for path, hunks in patched:
        text = (copy / path).read_text()
        for hunk in hunks:
            text = apply(text, hunk)
        (copy / path).write_text(text)
    run(copy, "-m", "ruff", "check", "--fix", "--quiet", ".")
    run(copy, "-m", "ruff", "check", "--quiet", ".")

    # A stack that switches it on beside cert-manager: planned, rendered and checked from a mirror
    # that holds its chart, each command as a user runs it in the copy.
    stack = tmp_path / "Pulumi.hello.yaml"
    config = with_changes(base_kind(), {"mlplatform:teams": []})
    config[K] = {**OFF, "hello": {"enabled": True, "greeting": "hi"}}
    stack.write_text(yaml.safe_dump({"config": config}, sort_keys=False))
    charts = hello_mirror(tmp_path)
    out = tmp_path / "render"
    run(copy, "-m", "mlplatform", "render", stack, "--full", "--out", out, "--mirror", charts)
    index = yaml.safe_load((out / "index.yaml").read_text())
    assert "hello/hello" in json.dumps(index), "the chart's objects are in the render, from the hello component's chart"
    platform = list(yaml.safe_load_all((out / "platform.yaml").read_text()))
    greeting = next(o for o in platform if o and o["kind"] == "ConfigMap" and o["metadata"]["name"] == "hello")
    assert greeting["metadata"]["namespace"] == "hello" and greeting["data"] == {"greeting": "hi"}
    run(copy, "-m", "mlplatform", "check", stack, "--mirror", charts)

    # Its overlay hint: a key the platform sets is refused naming the stack key that sets it.
    config[K]["hello"]["values"] = {"greeting": "other"}
    stack.write_text(yaml.safe_dump({"config": config}, sort_keys=False))
    refused = run(copy, "-m", "mlplatform", "plan", stack, status=2)
    assert (
        f'{K}.hello.values.greeting: "other": the platform sets "hi" here (components/hello.py hello_values): the greeting '
        f"is the stack's to say; set {K}.hello.greeting instead"
    ) in refused.stderr

    run(copy, "scripts/update_docs.py")
    assert "| `hello` |" in (copy / "docs" / "reference.md").read_text()
    assert "hello" in (copy / "docs" / "versions.md").read_text()
    assert changed(copy) == TOUCHED
