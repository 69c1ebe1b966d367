"""`python -m stacks …`: the tools that act on a stack, offline, for people and CI.

plan <stack> [--json]      evaluate the real program under mocks; print the resource tree
render <stack> --out DIR   write DIR/objects.yaml and DIR/upstream.yaml; with --full also
                           DIR/platform.yaml (every object, charts and trees rendered for
                           real) and DIR/index.yaml (which install each object comes from)
check <stack> [--json]     lint the full render; exit 1 on violations
images <stack>             every image the platform runs (what an air-gapped install mirrors)
versions                   print the README's version table from the pin table
reference                  print the README's stack-file reference from the schema
smoke <stack>              on the live cluster: nvidia-smi and a TrainJob per GPU pool, DCGM metrics
policy <stack>             run the policy pack's rules offline; exit 1 on violations
cost <stack>               idle and full-autoscale cost per hour, from facts/prices.py

<stack> is a name from stacks/ (dev, prod, kind) or a path to any stack file.
A bad stack file prints every problem and exits 2.

The full render (render --full, check, images) fetches charts and trees from the stack's
sources (mlplatform:sources; default the public upstreams), or from a mirror directory:
--mirror DIR, else $MLPLATFORM_MIRROR, else ../shared/upstream beside the repo if present.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from stacks.config import ConfigError, Problem, load, stack_file
from tooling.plan import Plan, Recorded, evaluate

if TYPE_CHECKING:
    from tooling.fullrender import FullRender

EXIT_VIOLATIONS = 1
EXIT_CONFIG_ERROR = 2
EXIT_RENDER_ERROR = 3


def stack_name(name_or_path: str) -> str:
    """`dev` and `stacks/Pulumi.dev.yaml` both name the stack `dev`."""
    name = stack_file(name_or_path).name
    return name.removeprefix("Pulumi.").rsplit(".", 1)[0]


def plan_for(name_or_path: str) -> Plan:
    return evaluate(load(name_or_path), stack_name(name_or_path))


def format_tree(plan: Plan) -> str:
    lines = [f"stack {plan.stack}: {len(plan.resources)} resources"]

    def walk(node: Recorded | None, prefix: str) -> None:
        children = plan.children(node)
        for i, child in enumerate(children):
            last = i == len(children) - 1
            provider = f"  [provider {child.provider_urn.rsplit('::', 1)[-1]}]" if child.provider_urn else ""
            lines.append(f"{prefix}{'└─ ' if last else '├─ '}{child.type}  {child.name}{provider}")
            walk(child, prefix + ("   " if last else "│  "))

    walk(None, "")
    lines.append("")
    lines.append("counts by type:")
    width = max((len(t) for t in plan.counts()), default=0)
    lines += [f"  {t:<{width}}  {n}" for t, n in plan.counts().items()]
    return "\n".join(lines)


def plan_json(plan: Plan) -> str:
    resources = [
        {
            "type": r.type,
            "name": r.name,
            "urn": r.urn,
            "parent": r.parent,
            "provider": r.provider_urn,
            "dependencies": list(r.dependencies),
            "protect": r.protect,
            "inputs": r.inputs,
        }
        for r in plan.resources
    ]
    return json.dumps({"stack": plan.stack, "resources": resources, "outputs": plan.outputs}, indent=2, sort_keys=True)


def versions_table() -> str:
    from facts.versions import PINS

    lines = ["| upstream | kind | version | from |", "|---|---|---|---|"]
    lines += [f"| {p.name} | {p.kind.value} | `{p.version}` | {p.location} |" for p in PINS]
    return "\n".join(lines)


def policy(plan: Plan) -> int:
    """Print each violation as `<rule>: <resource>: <message>`; 1 if there is any."""
    from policy.offline import violations
    from policy.rules import RULES

    found = violations(plan)
    for violation in found:
        print(violation)
    if found:
        print(f"stack {plan.stack}: {len(found)} policy violation{'s' if len(found) != 1 else ''}", file=sys.stderr)
        return EXIT_VIOLATIONS
    print(f"stack {plan.stack}: {len(RULES)} rules, no violations")
    return 0


def cost(name_or_path: str) -> int:
    """Print the stack's cost view; 2 for a bad stack, an unknown region or machine type."""
    from tooling.cost import PriceError, cost_view

    try:
        print(cost_view(load(name_or_path)))
    except (ConfigError, PriceError) as err:
        print(err, file=sys.stderr)
        return EXIT_CONFIG_ERROR
    return 0


MIRROR_ENV = "MLPLATFORM_MIRROR"
SHARED_MIRROR = Path(__file__).resolve().parents[1].parent / "shared" / "upstream"


def mirror_for(option: Path | None) -> Path | None:
    """The mirror directory the full render reads: the option, $MLPLATFORM_MIRROR, or the
    shared test mirror beside the repo; None: the stack's own sources."""
    if option is not None:
        return option
    if os.environ.get(MIRROR_ENV):
        return Path(os.environ[MIRROR_ENV])
    return SHARED_MIRROR if SHARED_MIRROR.is_dir() else None


def full_render_for(name_or_path: str, mirror: Path | None) -> FullRender:
    """The stack's full render; a mirror replaces the stack's sources."""
    from components.sources import mirror_sources
    from tooling.fullrender import full_render

    config = load(name_or_path)
    directory = mirror_for(mirror)
    if directory is not None:
        if not directory.is_dir():
            raise ConfigError(str(directory), [Problem("--mirror", "no such directory")])
        config = config.model_copy(update={"sources": mirror_sources(directory)})
        print(f"sources: mirror {directory}", file=sys.stderr)
    return full_render(evaluate(config, stack_name(name_or_path)))


def check_command(name_or_path: str, mirror: Path | None, as_json: bool) -> int:
    from tooling.check import RULES, check

    render = full_render_for(name_or_path, mirror)
    found = check(render)
    if as_json:
        print(json.dumps({"stack": render.stack, "violations": [v.as_dict() for v in found]}, indent=2))
    else:
        for violation in found:
            print(violation)
        summary = f"stack {render.stack}: {len(render.objects)} objects from {len(render.installs)} installs, {len(RULES)} rules"
        print(f"{summary}, {len(found)} violation{'s' if len(found) != 1 else ''}" if found else f"{summary}, no violations")
    return EXIT_VIOLATIONS if found else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stacks", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    plan_cmd = commands.add_parser("plan", help="print the resource tree of a stack, offline")
    plan_cmd.add_argument("stack")
    plan_cmd.add_argument("--json", action="store_true", help="every resource with inputs and dependencies")
    render_cmd = commands.add_parser("render", help="write objects.yaml and upstream.yaml (--full: every object)")
    render_cmd.add_argument("stack", help="a stack name from stacks/ (dev, prod, kind) or a stack file")
    render_cmd.add_argument("--out", type=Path, required=True, help="the directory to write the files into")
    render_cmd.add_argument("--full", action="store_true", help="also render every chart and tree: platform.yaml, index.yaml")
    check_cmd = commands.add_parser("check", help="lint the whole platform the cluster will receive")
    check_cmd.add_argument("stack", help="a stack name from stacks/ (dev, prod, kind) or a stack file")
    check_cmd.add_argument("--json", action="store_true", help="the violations as JSON")
    images_cmd = commands.add_parser("images", help="every image the platform runs, one per line")
    images_cmd.add_argument("stack", help="a stack name from stacks/ (dev, prod, kind) or a stack file")
    for command in (render_cmd, check_cmd, images_cmd):
        command.add_argument("--mirror", type=Path, help="a mirror directory (charts/, kubeflow-manifests/<tag>/) to render from")
    policy_cmd = commands.add_parser("policy", help="run the policy pack's rules offline")
    policy_cmd.add_argument("stack")
    cost_cmd = commands.add_parser("cost", help="idle and full-autoscale cost per hour")
    cost_cmd.add_argument("stack")
    commands.add_parser("versions", help="print the README version table from the pin table")
    commands.add_parser("reference", help="print the README stack-file reference from the schema")
    smoke_cmd = commands.add_parser("smoke", help="post-deploy GPU checks on the live cluster of a GKE stack")
    smoke_cmd.add_argument("stack")
    smoke_cmd.add_argument("--kubeconfig", help="default: $KUBECONFIG, else ~/.kube/config")
    smoke_cmd.add_argument("--context", help="kubeconfig context; default: the current one")
    smoke_cmd.add_argument("--namespace", help="where the jobs run; default: the first team's namespace")
    smoke_cmd.add_argument("--timeout", type=float, default=1800.0, help="seconds per wait (default 1800)")
    args = parser.parse_args(argv)

    if args.command == "versions":
        print(versions_table())
        return 0
    if args.command == "reference":
        from tooling.reference import reference

        print(reference())
        return 0
    if args.command == "smoke":
        from tooling.smoke import Options, smoke

        try:
            config = load(args.stack)
        except ConfigError as err:
            print(err, file=sys.stderr)
            return EXIT_CONFIG_ERROR
        options = Options(kubeconfig=args.kubeconfig, context=args.context, namespace=args.namespace, timeout=args.timeout)
        return smoke(config, stack_name(args.stack), options)
    if args.command == "cost":
        return cost(args.stack)
    if args.command in ("check", "images") or (args.command == "render" and args.full):
        return full_command(args)
    try:
        plan = plan_for(args.stack)
    except ConfigError as err:
        print(err, file=sys.stderr)
        return EXIT_CONFIG_ERROR
    if args.command == "policy":
        return policy(plan)
    if args.command == "plan":
        print(plan_json(plan) if args.json else format_tree(plan))
    else:
        from tooling.render import write

        for path in write(plan, args.out):
            print(f"wrote {path}")
    return 0


def full_command(args: argparse.Namespace) -> int:
    """check, images and render --full: everything that renders charts and trees for real."""
    from tooling.fullrender import RenderError
    from tooling.tools import ToolError

    try:
        if args.command == "check":
            return check_command(args.stack, args.mirror, args.json)
        render = full_render_for(args.stack, args.mirror)
    except ConfigError as err:
        print(err, file=sys.stderr)
        return EXIT_CONFIG_ERROR
    except (RenderError, ToolError) as err:
        print(f"render failed: {err}", file=sys.stderr)
        return EXIT_RENDER_ERROR
    if args.command == "images":
        from tooling.check import image_list

        print("\n".join(image_list(render)))
        return 0
    from tooling import fullrender
    from tooling.render import write

    for path in [*write(render.plan, args.out), *fullrender.write(render, args.out)]:
        print(f"wrote {path}")
    return 0


def run() -> None:
    """The process entry point: exit with main's code."""
    try:
        sys.exit(main())
    except BrokenPipeError:  # `python -m stacks plan dev | head`: the reader left; not an error
        sys.stderr.close()
        sys.exit(0)
