"""The layers of the code, checked on the code itself: the import graph (every import,
function-level ones too, of every module outside tests) points down LAYERS without cycles; the
plumbing names no component; infra, plumbing, components and runtimes read only their own Args
(the stack model is read only where Args are cut: the functions named `<what>_args` and the
functions of their module they call); each ComponentResource takes its Args (of its own
module, of its package's `args` module, or the plumbing's shared ones) and has a type token
derived from its class."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import itertools
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pulumi
import pytest

REPO = Path(__file__).resolve().parents[1]
SKIPPED = {"tests"}
"""Top-level folders outside the graph (tests may import any layer)."""

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("facts", ("facts",)),
    ("policy", ("policy",)),
    ("stack model", ("stackmodel",)),
    ("infra", ("infra",)),
    ("plumbing", ("plumbing",)),
    ("runtimes", ("runtimes",)),
    ("components", ("components",)),
    ("teams", ("components.profiles",)),
    ("composition", ("components.platform",)),
    ("program", ("program", "__main__")),
    ("tools", ("tooling",)),
    ("command line", ("mlplatform", "stacks.__main__")),
    ("scripts", ("scripts", "benchmarks", "examples", "images")),
)
"""Bottom to top; a module is in the layer of its longest listed prefix, and imports only
from its own layer or lower ones. The command line, `python -m mlplatform` (mlplatform/) and
its alias `python -m stacks` (stacks/__main__.py, beside the stack files), runs the tools."""

SLICED = ("infra", "plumbing", "components", "runtimes")
"""Code that gets its own Args and never reads the stack itself (but where it cuts them)."""


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int

    def __str__(self) -> str:
        return f"{path_of(self.source)}:{self.line} imports {self.target}"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


@cache
def modules() -> dict[str, Path]:
    """Every module of the repository outside tests and hidden or virtualenv folders."""
    found = {}
    for path in REPO.rglob("*.py"):
        top = path.relative_to(REPO).parts
        if top[0] in SKIPPED or any(p.startswith(".") or p in ("venv", "__pycache__") for p in top):
            continue
        found[module_name(path)] = path
    return found


def path_of(module: str) -> str:
    return str(modules()[module].relative_to(REPO))


def _resolve(name: str) -> str | None:
    """The repository module `name` is (or is inside), if any."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules():
            return candidate
    return None


def _imported_names(module: str, node: ast.AST) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            package = module.split(".")
            if modules()[module].name != "__init__.py":
                package = package[:-1]
            package = package[: len(package) - node.level + 1]
            base = ".".join(package + ([node.module] if node.module else []))
        # `from a import b`: b may be a module of package a, or a name in a.
        yield from (f"{base}.{alias.name}" for alias in node.names)


@cache
def imports() -> tuple[Import, ...]:
    found = []
    for module, path in sorted(modules().items()):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            for name in _imported_names(module, node):
                target = _resolve(name)
                if target is not None and target != module:
                    found.append(Import(module, target, node.lineno))  # type: ignore[attr-defined]
    return tuple(dict.fromkeys(found))


def layer_of(module: str) -> int:
    matches = [
        (len(prefix), index)
        for index, (_, prefixes) in enumerate(LAYERS)
        for prefix in prefixes
        if module == prefix or module.startswith(prefix + ".")
    ]
    assert matches, f"{path_of(module)} is in no layer: add its folder to LAYERS in {Path(__file__).name}"
    return max(matches)[1]


def folder_of(module: str) -> str:
    """The top-level folder; an entry point (`<folder>/__main__.py`) is a unit of its own:
    it runs the folder's code as a command, and nothing imports it."""
    parts = path_of(module).split("/")
    if parts[-1] == "__main__.py" and len(parts) > 1:
        return f"{parts[0]}/__main__"
    return parts[0].removesuffix(".py")


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(edges.get(node, ())):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def a_cycle(edges: dict[str, set[str]], members: list[str]) -> list[str]:
    """One shortest cycle inside a strongly connected component, as its nodes in order."""
    start = members[0]
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for successor in sorted(edges.get(node, ())):
            if successor == start:
                return paths[node]
            if successor in members and successor not in paths:
                paths[successor] = paths[node] + [successor]
                queue.append(successor)
    raise AssertionError(f"no cycle through {start}")


def cycle_report(edges: dict[str, set[str]], unit: Any) -> list[str]:
    """Each cycle of `edges` (over units of modules, `unit(module)`), as the imports along it."""
    lines = []
    for component in cycles(edges):
        path = a_cycle(edges, component)
        lines.append(" -> ".join(path + path[:1]) + ":")
        for a, b in zip(path, path[1:] + path[:1], strict=True):
            lines += [f"  {i}" for i in imports() if unit(i.source) == a and unit(i.target) == b][:3]
    return lines


# --- the import graph -------------------------------------------------------------------


def test_the_graph_sees_function_level_and_relative_imports() -> None:
    """The scan is only as good as what it finds: a lazy import inside a function counts."""
    lazy = [i for i in imports() if i.source == "infra.cluster" and i.target == "infra.gke"]
    assert lazy, "infra/cluster.py imports infra.gke inside build_cluster"
    assert {"components.dashboards.gpus_by_team", "components.dashboards.common"} <= {
        i.target for i in imports() if i.source == "components.dashboards"
    }


def test_no_import_cycle_between_files() -> None:
    edges: dict[str, set[str]] = {}
    for i in imports():
        edges.setdefault(i.source, set()).add(i.target)
    problems = cycle_report(edges, lambda module: module)
    assert problems == [], "import cycle between files:\n" + "\n".join(problems)


def test_no_import_cycle_between_top_level_folders() -> None:
    edges: dict[str, set[str]] = {}
    for i in imports():
        a, b = folder_of(i.source), folder_of(i.target)
        if a != b:
            edges.setdefault(a, set()).add(b)
    problems = cycle_report(edges, folder_of)
    assert problems == [], "import cycle between folders:\n" + "\n".join(problems)


def test_imports_point_down_the_layers() -> None:
    upward = [
        f"{i} ({LAYERS[layer_of(i.source)][0]} -> {LAYERS[layer_of(i.target)][0]})"
        for i in imports()
        if layer_of(i.target) > layer_of(i.source)
    ]
    assert upward == [], "imports up the layers:\n" + "\n".join(upward)


def test_every_module_is_in_a_layer() -> None:
    for module in modules():
        layer_of(module)


# --- what infra, components and runtimes may read ---------------------------------------


def args_builders(tree: ast.Module) -> list[ast.FunctionDef]:
    """The functions of a module that cut Args from the stack model: those named `<what>_args`
    (a component's builder its Installation names, infra/args.py `cluster_args`, ...) and the
    functions of the module they call: the one place infra, plumbing, components and runtimes
    may read the stack model (docs/development.md, "Adding a component")."""
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    found = [name for name in functions if name.endswith("_args")]
    for name in found:
        for node in ast.walk(functions[name]):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions and node.func.id not in found:
                found.append(node.func.id)
    return [functions[name] for name in functions if name in found]


def _reads_the_stack(module: str) -> Iterator[str]:
    path = modules()[module]
    yield from stack_reads(ast.parse(path.read_text(), str(path)), path_of(module))


def stack_reads(tree: ast.Module, name: str) -> Iterator[str]:
    """Where the module `name` reads the stack model instead of its Args."""
    config_names = {"pulumi.Config"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "pulumi":
            config_names |= {alias.asname or alias.name for alias in node.names if alias.name == "Config"}
    builders = args_builders(tree)
    inside = {id(n) for builder in builders for n in ast.walk(builder)}
    # A type alias of the module (ArgsBuilder = Callable[[PlatformConfig, ...], ...]) names the
    # model without reading it: only code of its functions and classes reads.
    code = {id(n) for top in tree.body if isinstance(top, (ast.FunctionDef, ast.ClassDef)) for n in ast.walk(top)}
    for node in ast.walk(tree):
        where = f"{name}:{getattr(node, 'lineno', '?')}"
        if id(node) in inside:
            continue
        if isinstance(node, ast.ImportFrom):
            named = {alias.name for alias in node.names}
            if "PlatformConfig" in named and not (builders and node in tree.body):
                yield f"{where} imports PlatformConfig (take its Args instead, cut by a function named <what>_args)"
            if node.module == "stackmodel.config" or (node.module == "stackmodel" and "config" in named):
                yield f"{where} imports the stack loader stackmodel.config"
        elif isinstance(node, ast.Import) and any(alias.name == "stackmodel.config" for alias in node.names):
            yield f"{where} imports the stack loader stackmodel.config"
        elif isinstance(node, ast.Name) and node.id == "PlatformConfig" and builders and id(node) in code:
            yield f"{where} uses PlatformConfig outside the functions that cut Args (<what>_args)"
        elif isinstance(node, ast.Attribute) and node.attr == "PlatformConfig":
            yield f"{where} uses {ast.unparse(node)}"
        elif isinstance(node, ast.Call) and ast.unparse(node.func) in config_names:
            yield f"{where} calls {ast.unparse(node.func)} (secrets and config are read in program.py)"


def test_infra_components_and_runtimes_read_only_their_args() -> None:
    found = [
        problem
        for module in sorted(modules())
        if module.split(".")[0] in SLICED
        for problem in _reads_the_stack(module)
    ]
    assert found == [], "reads the stack instead of its Args:\n" + "\n".join(found)


# --- ComponentResources -----------------------------------------------------------------


@cache
def component_classes() -> tuple[type[pulumi.ComponentResource], ...]:
    """Every ComponentResource class of the repository (importing every module that may hold one)."""
    for module in sorted(modules()):
        if module.split(".")[0] in SLICED:
            importlib.import_module(module)
    found: list[type[pulumi.ComponentResource]] = []
    pending: list[type[pulumi.ComponentResource]] = [pulumi.ComponentResource]
    while pending:
        sub: type[pulumi.ComponentResource]
        for sub in pending.pop().__subclasses__():
            pending.append(sub)
            if sub.__module__.split(".")[0] in SLICED and sub not in found:
                found.append(sub)
    return tuple(found)


def concrete(cls: type) -> bool:
    """Bases (infra.component.Component, plumbing.base.PlatformComponent) are never built
    themselves; their constructors take what every subclass passes on, not an Args."""
    subclasses: list[type] = cls.__subclasses__()
    return not any(sub.__module__.split(".")[0] in SLICED for sub in subclasses)


def test_every_component_resource_takes_its_args_first_after_its_name() -> None:
    problems = []
    for cls in component_classes():
        if not concrete(cls):
            continue
        params = list(inspect.signature(cls.__init__).parameters)[1:]
        where = f"{cls.__module__}.{cls.__qualname__}"
        if params[:1] != ["name"] or len(params) < 2:
            problems.append(f"{where}({', '.join(params)}): the first parameter must be `name`")
            continue
        hint = typing.get_type_hints(cls.__init__).get(params[1])
        if not (
            isinstance(hint, type)
            and hint.__name__.endswith("Args")
            and hint.__module__ in (cls.__module__, f"{cls.__module__.rpartition('.')[0]}.args", "plumbing.base")
            and dataclasses.is_dataclass(hint)
            and hint.__dataclass_params__.frozen  # type: ignore[attr-defined]
        ):
            problems.append(
                f"{where}: parameter {params[1]!r} is {hint!r}, not a frozen *Args of its own module, of its package's args "
                "module or plumbing/base.py's"
            )
    assert problems == [], "\n".join(problems)


def test_every_component_resource_says_why_it_exists() -> None:
    missing = [f"{c.__module__}.{c.__qualname__}" for c in component_classes() if not c.__doc__]
    assert missing == [], "no docstring saying why it exists: " + ", ".join(missing)


@pytest.fixture(scope="module")
def registered() -> dict[str, set[type]]:
    """Type token -> the classes that registered it, over stacks that between them install every
    component of the list (tests/support/every_component.py)."""
    from tests.support.every_component import every_component
    from tooling.plan import evaluate

    seen: dict[str, set[type]] = {}
    original = pulumi.ComponentResource.__init__

    def recording(self: pulumi.ComponentResource, t: str, *args: Any, **kwargs: Any) -> None:
        seen.setdefault(t, set()).add(type(self))
        original(self, t, *args, **kwargs)

    pulumi.ComponentResource.__init__ = recording  # type: ignore[method-assign]
    try:
        for name, config in every_component():
            evaluate(config, "kind" if name.startswith("kind") else name)
    finally:
        pulumi.ComponentResource.__init__ = original  # type: ignore[method-assign]
    return seen


def test_every_type_token_ends_in_its_class_name(registered: dict[str, set[type]]) -> None:
    from infra.component import type_token

    ours = {t: classes for t, classes in registered.items() if t.startswith("mlplatform:")}
    wrong = [f"{c.__module__}.{c.__qualname__} registers {t}" for t, classes in ours.items() for c in classes if t != type_token(c)]
    assert wrong == [], "\n".join(wrong)
    assert all(t.rsplit(":", 1)[1] == c.__name__ for t, classes in ours.items() for c in classes)


def test_the_shipped_stacks_build_every_component_resource(registered: dict[str, set[type]]) -> None:
    """So the token test above saw every class."""
    built = set().union(*registered.values())
    unseen = [f"{c.__module__}.{c.__qualname__}" for c in component_classes() if concrete(c) and c not in built]
    assert unseen == [], "no shipped stack builds " + ", ".join(unseen)


# --- module size ------------------------------------------------------------------------

LINE_LIMIT = 500
LONG_REASON = "Long by design:"
"""What a product module over LINE_LIMIT lines says at its top, and why: in its docstring, or
in a comment before it (a command's docstring is its --help)."""


def oversized(sources: dict[str, str]) -> list[str]:
    """Modules (name -> source) over the limit whose docstring gives no reason."""
    found = []
    for name, text in sorted(sources.items()):
        lines = text.count("\n")
        head = "".join(itertools.takewhile(lambda line: line.startswith("#"), text.splitlines(keepends=True)))
        if lines > LINE_LIMIT and LONG_REASON not in (ast.get_docstring(ast.parse(text)) or "") + head:
            found.append(f"{name}: {lines} lines and no `{LONG_REASON} <why>` at its top: split it by concern, or say why not")
    return found


def test_no_product_module_over_the_limit_without_its_reason() -> None:
    sources = {path_of(m): modules()[m].read_text() for m in modules()}
    assert oversized(sources) == []


def test_the_size_rule_names_a_long_module_without_a_reason() -> None:
    long = "\n".join(f"x{i} = {i}" for i in range(LINE_LIMIT + 1)) + "\n"
    assert oversized({"a.py": '"""Short."""\n' + long}) == [
        f"a.py: {LINE_LIMIT + 2} lines and no `{LONG_REASON} <why>` at its top: split it by concern, or say why not"
    ]
    assert oversized({"a.py": f'"""Short.\n\n{LONG_REASON} one table."""\n' + long}) == []
    assert oversized({"a.py": f"# {LONG_REASON} one command each.\n" + '"""Short."""\n' + long}) == []
    assert oversized({"a.py": '"""Short."""\n'}) == []


def test_only_the_functions_that_cut_args_read_the_stack_model() -> None:
    """The rule's one exception: a function named `<what>_args` and the functions of its module it calls."""
    source = """
from stackmodel.stack import PlatformConfig

def kserve_args(config: PlatformConfig, secrets):
    return KServeArgs(config.components[KSERVE].values, _registry(config))

def _registry(config: PlatformConfig):
    return config.project

def elsewhere(config: PlatformConfig):
    return config.project

INSTALLATION = Installation(KSERVE, kserve_args, _install)
"""
    tree = ast.parse(source)
    assert [f.name for f in args_builders(tree)] == ["kserve_args", "_registry"]
    assert list(stack_reads(tree, "kserve.py")) == ["kserve.py:10 uses PlatformConfig outside the functions that cut Args (<what>_args)"]
    alone = ast.parse(source.replace("def kserve_args", "def kserve").replace("def _registry", "def registry"))
    assert next(iter(stack_reads(alone, "kserve.py"))) == (
        "kserve.py:2 imports PlatformConfig (take its Args instead, cut by a function named <what>_args)"
    )


# --- the plumbing names no component ----------------------------------------------------------


def test_the_plumbing_names_no_component() -> None:
    """plumbing/ installs nothing of its own: it imports no component's module (components/, a
    component's settings in stackmodel/components/) but the spec every component has."""
    named = [
        str(i)
        for i in imports()
        if i.source.startswith("plumbing")
        and (i.target.startswith("components") or (i.target.startswith("stackmodel.components") and i.target != "stackmodel.components.spec"))
    ]
    assert named == []


def test_the_policy_pack_reads_the_facts_alone() -> None:
    """The pack judges the plan's resources (pulumi preview --policy-pack policy runs it without the program)."""
    found = [str(i) for i in imports() if i.source.startswith("policy") and not i.target.startswith(("policy", "facts"))]
    assert found == []
