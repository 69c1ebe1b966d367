# Long by design: one entry point, one short function per command, each handing off to its tool
# (a comment, not the docstring, which is the command's --help).
"""`python -m mlplatform …` (or `mlplatform …`; `python -m stacks …` is its alias): the tools that act on a stack, offline, for people and CI.

plan <stack> [--json]      evaluate the real program under mocks; print the resource tree
plan <stack> --against F   what it would delete of F (a `pulumi stack export`, a plan JSON, or
                           - for stdin); exit 4 when a team or a protected resource would go
                           (--allow-removal TEAM,... for a team removed on purpose);
                           --cloud-identity FILE: the members of cloudIdentity groups (offline:
                           none; read from Cloud Identity at pulumi up)
render <stack> --out DIR   write DIR/objects.yaml and DIR/upstream.yaml; with --full also
                           DIR/platform.yaml (every object, charts and trees rendered for
                           real) and DIR/index.yaml (which install each object comes from)
check <stack> [--json]     lint the full render, and list per team and workload whether Kueue can
                           admit it; exit 1 on violations; --on YYYY-MM-DD: the support and
                           advisory rules (facts/support.py, facts/advisories.py) on that day
                           instead of today; notes what is known but not failed
diff OLD NEW [--json]      what a move changes: two `render --full` directories, or two git
                           refs rendered in temporary worktrees (--stack NAME, --mirror DIR);
                           flags each change Kubernetes refuses in place with what pulumi up
                           does (delete-before-replace, or a stop); exit 4 on a stop
outdated [--indexes DIR]   per pin: newer upstream releases and support status, from the
                           upstreams' indexes or saved index files (--list-indexes names them);
                           exit 1 a pinned line is out of support, 5 newer releases, 6 an
                           index could not be read
images <stack>             every image the platform runs (what an air-gapped install mirrors);
                           --copy-list: `source destination` pairs that fill the stack's
                           mlplatform:images.mirror (crane copy, gcrane cp, skopeo copy); --json
prepare <stack>            write the Kubeflow trees the stack reads from a local mirror of remote
                           kustomize bases (mlplatform:sources.remoteBases), before `pulumi up`
policy <stack>             run the policy pack's rules offline; exit 1 on violations
cost <stack>               idle and full-autoscale cost per hour, from facts/prices.py; --usage:
                           last week's GPU-hours and idle GPU-hours per team, priced
dashboards --out DIR       write our Grafana dashboards as JSON, for review or import
versions                   print docs/versions.md's version table from the pin table, and every
                           patch (images ahead of their chart or tree) with its evidence
reference                  print docs/reference.md, the stack-file reference, from the schema
diagram [<stack>]          print the architecture as a Mermaid flowchart (default: prod)
smoke <stack>              on the live cluster: nvidia-smi and a TrainJob per GPU pool, DCGM metrics

<stack> is a name from stacks/ (acme's examples: dev, prod, kind) or a path to any stack file.
Exit codes: 0 fine, 1 violations (check, policy), a pin out of support (outdated) or a
program that registers two resources of one name (a loader gap), 2 a bad stack file or
argument (every problem is printed), 3 a render error (check, images, render --full, diff
of git refs), a tree that cannot be prepared (prepare) or no cluster (smoke), 4 the plan
would delete a team or protected data (plan --against) or a change needs a person (diff),
5 newer upstream releases (outdated), 6 an upstream index not read (outdated). --version:
the bundle's version.

A stack that imports Pulumi ESC environments (`environment:` in the stack file) is read
without them (keys they may set are noted on stderr as not resolved offline, never
reported missing), or with `--esc-file NAME=FILE` per environment: what `esc open NAME
--format yaml` prints, or the environment's definition.

The full render (render --full, check, images) fetches charts and trees from the stack's
sources (mlplatform:sources; default the public upstreams), or from a mirror directory:
--mirror DIR, else the clone's own (.mlplatform/upstream, `make mirror`), else $MLPLATFORM_MIRROR,
else ../shared/upstream beside the repo if present. What helm and kustomize print for a chart or
tree from a local mirror is kept in the render cache (.mlplatform/cache, or $MLPLATFORM_CACHE),
keyed by everything it depends on: the next run renders only the installs whose inputs changed;
--no-cache renders every install and keeps nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from stackmodel.config import ConfigError, Problem, load_stack, stack_file
from stackmodel.stack import PlatformConfig
from tooling.mirror import mirror_for, outdated
from tooling.plan import DuplicateUrnError, Plan, Recorded, evaluate

if TYPE_CHECKING:
    from facts.versions import Pin
    from tooling.fullrender import FullRender

EXIT_VIOLATIONS = 1
EXIT_CONFIG_ERROR = 2
EXIT_RENDER_ERROR = 3
EXIT_DESTRUCTIVE = 4
"""plan --against: a team or a protected resource would be deleted."""


def stack_name(name_or_path: str) -> str:
    """`dev` and `stacks/Pulumi.dev.yaml` both name the stack `dev`."""
    name = stack_file(name_or_path).name
    return name.removeprefix("Pulumi.").rsplit(".", 1)[0]


EscFiles = Mapping[str, Path]
"""ESC environment name -> a local file with its values (--esc-file)."""


def load(name_or_path: str, esc_files: EscFiles | None = None, mirror: Path | None = None) -> PlatformConfig:
    """The validated stack, its chart overlays judged too (against the charts of `mirror`, else
    of the mirror the full render reads); what the offline view cannot see of it is noted on stderr."""
    from plumbing.overlays import overlay_verdict
    from plumbing.sources import mirror_sources
    from program import args_of

    loaded = load_stack(name_or_path, esc_files)
    directory = mirror_for(mirror)
    verdict = overlay_verdict(args_of(loaded.config, {}).components, [mirror_sources(directory)] if directory else [])
    for note in [*loaded.notes, *(Problem(path, why) for path, why in verdict.unchecked)]:
        print(f"note: {note}", file=sys.stderr)
    if verdict.problems:
        raise ConfigError(str(stack_file(name_or_path)), [Problem(path, why) for path, why in verdict.problems])
    for warning in loaded.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return loaded.config


def esc_files_of(values: Sequence[str] | None) -> dict[str, Path]:
    """`--esc-file NAME=FILE` options as a mapping; a ConfigError for one without `=`."""
    files: dict[str, Path] = {}
    for value in values or []:
        name, equals, file = value.partition("=")
        if not (equals and name and file):
            raise ConfigError("--esc-file", [Problem("--esc-file", f"{value!r}: give NAME=FILE, e.g. acme/prod=esc-prod.yaml")])
        files[name] = Path(file)
    return files


def plan_for(name_or_path: str, esc_files: EscFiles | None = None, cloud_identity: Path | None = None) -> Plan:
    members = cloud_identity_members(cloud_identity) if cloud_identity else None
    return evaluate(load(name_or_path, esc_files), stack_name(name_or_path), cloud_identity=members)


def cloud_identity_members(path: Path) -> dict[str, list[str]]:
    """`--cloud-identity FILE`: a YAML mapping of a Google group's e-mail to its people's e-mails,
    what Cloud Identity answers offline (e.g. to see with --against who loses access when they
    leave a group); a ConfigError for a file of another shape."""
    option = "--cloud-identity"
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as err:
        raise ConfigError(option, [Problem(option, f"{path}: {err}")]) from None
    if not isinstance(data, dict) or not all(
        isinstance(g, str) and isinstance(m, list) and all(isinstance(e, str) for e in m) for g, m in data.items()
    ):
        raise ConfigError(option, [Problem(option, f"{path}: give a mapping of group to members, e.g. {{ml-nlp@acme.com: [ana@acme.com]}}")])
    return data


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
            "retainOnDelete": r.retain_on_delete,
            "inputs": r.inputs,
        }
        for r in plan.resources
    ]
    return json.dumps({"stack": plan.stack, "resources": resources, "outputs": plan.outputs}, indent=2, sort_keys=True)


def versions_table() -> str:
    """The pin table, and each patch (images ahead of their chart or tree) with its evidence."""
    from facts.versions import PINS

    def version(pin: Pin) -> str:
        return f"`{pin.version}`, images `{pin.runs}` (patched)" if pin.patch else f"`{pin.version}`"

    lines = ["| upstream | kind | version | from |", "|---|---|---|---|"]
    lines += [f"| {p.name} | {p.kind.value} | {version(p)} | {p.location} |" for p in PINS]
    lines += ["", "| patched | ships | runs | why | manifests |", "|---|---|---|---|---|"]
    lines += [f"| {p.name} | `{p.version}` | `{p.patch.release}` | {p.patch.why} | {p.patch.manifests} |" for p in PINS if p.patch]
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


def prepare(plan: Plan) -> int:
    """Write the prepared copies of the trees the plan reads (plumbing/trees.py); 3 when one
    cannot be (a missing mirror, a remote base the pin table does not list)."""
    from plumbing.trees import PrepareError
    from plumbing.trees import prepare as prepare_tree

    trees = list(plan.record.prepared_trees.values())
    if not trees:
        print(f"stack {plan.stack}: no tree to prepare (its trees' remote bases come from GitHub, or it installs none)")
        return 0
    for tree in trees:
        try:
            directory, written = prepare_tree(tree)
        except PrepareError as err:
            print(f"{tree.folder}: {err}", file=sys.stderr)
            return EXIT_RENDER_ERROR
        state = "wrote" if written else "current:"
        print(f"{state} {directory} ({tree.folder} from {tree.manifests}, remote bases from {tree.remote_bases})")
    return 0


def cost(name_or_path: str, esc_files: EscFiles | None = None) -> int:
    """Print the stack's cost view; 2 for a bad stack, an unknown region or machine type."""
    from tooling.cost import PriceError, cost_view

    try:
        print(cost_view(load(name_or_path, esc_files)))
    except (ConfigError, PriceError) as err:
        print(err, file=sys.stderr)
        return EXIT_CONFIG_ERROR
    return 0


def usage(name_or_path: str, prometheus: str | None, usage_file: Path | None, esc_files: EscFiles | None = None) -> int:
    """Print last week's GPU-hours per team (tooling/usage.py); 2 for a bad stack, 1 when the
    usage cannot be read."""
    from tooling.usage import UsageError, read_file, read_prometheus, usage_view

    try:
        config = load(name_or_path, esc_files)
    except ConfigError as err:
        print(err, file=sys.stderr)
        return EXIT_CONFIG_ERROR
    try:
        found = read_file(usage_file) if usage_file is not None else read_prometheus(str(prometheus))
    except UsageError as err:
        print(f"cost --usage: {err}", file=sys.stderr)
        return 1
    print(usage_view(config, found, str(usage_file) if usage_file is not None else str(prometheus)))
    return 0


def full_render_for(
    name_or_path: str, mirror: Path | None, esc_files: EscFiles | None = None, allow_unmirrored: bool = False
) -> FullRender:
    """The stack's full render; a mirror replaces the stack's sources. `allow_unmirrored`: render
    what the mirror holds and leave out the release manifests it lacks (FullRender.left_out)."""
    from plumbing.sources import mirror_sources
    from tooling.fullrender import full_render, rendering_early

    config = load(name_or_path, esc_files, mirror)
    directory = mirror_for(mirror)
    if directory is not None:
        if not directory.is_dir():
            raise ConfigError(str(directory), [Problem("--mirror", "no such directory")])
        config = config.model_copy(update={"sources": mirror_sources(directory)})
        print(f"sources: mirror {directory}", file=sys.stderr)
        stale = outdated(directory)
        if stale:
            print(f"warning: {stale}: `make mirror` rebuilds it", file=sys.stderr)
    with rendering_early(config) as early:
        plan = evaluate(config, stack_name(name_or_path), on_record=early)
    print(f"rendering {plan.stack}: every chart through helm, every tree through kustomize (or from the render cache)", file=sys.stderr)
    return full_render(plan, progress=lambda line: print(f"  {line}", file=sys.stderr, flush=True), allow_unmirrored=allow_unmirrored)


def left_out(render: FullRender) -> int:
    """Say on stderr what the render left out (`--allow-unmirrored`); the exit code that says so
    (EXIT_RENDER_ERROR: the render is not the whole platform), or 0 when it is whole."""
    if not render.left_out:
        return 0
    print(f"left out of the render, not in the mirror ({len(render.left_out)}; `make mirror` fetches them):", file=sys.stderr)
    for install in render.left_out:
        print(f"  {install.label}: {install.target}", file=sys.stderr)
    return EXIT_RENDER_ERROR


def check_command(
    name_or_path: str,
    mirror: Path | None,
    as_json: bool,
    esc_files: EscFiles | None = None,
    on: date | None = None,
    allow_unmirrored: bool = False,
) -> int:
    from tooling.check import RULES, notes, run

    render = full_render_for(name_or_path, mirror, esc_files, allow_unmirrored)
    day = on or date.today()
    found, platform = run(render, on=day)
    said = notes(platform)
    verdicts = platform.verdicts
    if as_json:
        admission = [{"team": v.team, "workload": v.workload, "status": v.status.value, "detail": v.detail} for v in verdicts]
        document = {"stack": render.stack, "on": day.isoformat(), "violations": [v.as_dict() for v in found], "admission": admission, "notes": said}
        print(json.dumps(document, indent=2))
    else:
        if verdicts:
            print("admission, per team and workload (Kueue's rules; rule admissible):")
            for verdict in verdicts:
                print(f"  {verdict}")
        for violation in found:
            print(violation)
        for note in said:
            print(f"note: {note}")
        reused = sum(t.reused for t in render.timings.values())
        cached = f" ({reused} from the render cache)" if reused else ""
        summary = f"stack {render.stack}: {len(render.objects)} objects from {len(render.installs)} installs{cached}, {len(RULES)} rules on {day.isoformat()}"
        print(f"{summary}, {len(found)} violation{'s' if len(found) != 1 else ''}" if found else f"{summary}, no violations")
    incomplete = left_out(render)
    return EXIT_VIOLATIONS if found else incomplete


def check_date(value: str) -> date:
    """`--on YYYY-MM-DD`; argparse turns the ValueError into a usage error naming the option."""
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a date: give YYYY-MM-DD, e.g. 2027-12-31") from None


STACK_HELP = "a stack name from stacks/ (dev, prod, kind) or the path of a stack file"


def add_esc_file(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--esc-file",
        action="append",
        metavar="NAME=FILE",
        help="the values of an ESC environment the stack imports (`esc open NAME --format yaml`); repeatable",
    )


PROG = "python -m mlplatform"
"""The command line's name in its usage: the package mlplatform/ runs it (so does the
`mlplatform` command); stacks/__main__.py, the alias kept, passes its own."""


def parser(prog: str = PROG) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"mlplatform {bundle_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="command")

    def command(name: str, help: str, stack: bool = True) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help, description=help)
        if stack:
            sub.add_argument("stack", help=STACK_HELP)
            add_esc_file(sub)
        return sub

    plan_cmd = command("plan", "print the resource tree of a stack, offline")
    plan_cmd.add_argument("--json", action="store_true", help="every resource with inputs and dependencies")
    plan_cmd.add_argument("--against", metavar="PREVIOUS", help="a state export or plan JSON (- for stdin): report what would be deleted")
    plan_cmd.add_argument("--allow-removal", metavar="TEAMS", default="", help="comma-separated teams meant to be removed")
    plan_cmd.add_argument(
        "--cloud-identity",
        type=Path,
        metavar="FILE",
        help="YAML {group e-mail: [member e-mails]}: the members of the stack's cloudIdentity groups (offline: none)",
    )
    render_cmd = command("render", "write objects.yaml and upstream.yaml (--full: every object)")
    render_cmd.add_argument("--out", type=Path, required=True, help="the directory to write the files into")
    render_cmd.add_argument("--full", action="store_true", help="also render every chart and tree: platform.yaml, index.yaml")
    check_cmd = command("check", "lint the whole platform the cluster will receive")
    check_cmd.add_argument("--json", action="store_true", help="the violations as JSON")
    check_cmd.add_argument(
        "--on", type=check_date, metavar="YYYY-MM-DD", help="the day the support and advisory rules judge (default today)"
    )
    images_cmd = command("images", "every image the platform runs, one per line")
    images_format = images_cmd.add_mutually_exclusive_group()
    images_format.add_argument(
        "--copy-list",
        action="store_true",
        help="`source destination` per image for the stack's mlplatform:images.mirror (docs/images.md: the copy loop)",
    )
    images_format.add_argument("--json", action="store_true", help="every image with its source, destination and objects")
    for sub in (render_cmd, check_cmd, images_cmd):
        sub.add_argument("--mirror", type=Path, help="a mirror directory (charts/, kubeflow-manifests/<tag>/, remote/, manifests/) to render from")
        sub.add_argument(
            "--allow-unmirrored",
            action="store_true",
            help="render what the mirror holds, list the release manifests it lacks and exit 3 (default: refuse, naming them)",
        )
        sub.add_argument(
            "--no-cache",
            action="store_true",
            help="run helm and kustomize for every install, neither reading nor writing the render cache (.mlplatform/cache)",
        )
    command("prepare", "write the Kubeflow trees the stack reads from its local remote-base mirror, before pulumi up")
    command("policy", "run the policy pack's rules offline")
    cost_cmd = command("cost", "idle and full-autoscale cost per hour; --usage: last week's GPU-hours per team")
    cost_cmd.add_argument("--usage", action="store_true", help="last week's GPU-hours, idle GPU-hours and their price per team")
    usage_source = cost_cmd.add_mutually_exclusive_group()
    usage_source.add_argument("--prometheus", metavar="URL", help="with --usage: the Prometheus to read (e.g. http://localhost:9090 through a port-forward)")
    usage_source.add_argument("--usage-file", type=Path, metavar="FILE", help="with --usage: a recorded sample instead ({\"allocated\": ..., \"busy\": ...}, docs/cost.md)")
    dashboards_cmd = command("dashboards", "write our Grafana dashboards as JSON files", stack=False)
    dashboards_cmd.add_argument("--out", type=Path, required=True, help="the directory to write <name>.json into")
    command("versions", "print the version table of docs/versions.md from the pin table", stack=False)
    command("reference", "print the stack-file reference of docs/reference.md from the schema", stack=False)
    diagram_cmd = command("diagram", "print the architecture as a Mermaid flowchart", stack=False)
    diagram_cmd.add_argument("stack", nargs="?", default="prod", help=f"{STACK_HELP}; default prod")
    add_esc_file(diagram_cmd)
    diff_cmd = command("diff", "what a move changes: objects added, removed, changed, and changes refused in place", stack=False)
    diff_cmd.add_argument("old", help="a `render --full` directory, or a git ref of this repo (rendered in a temporary worktree)")
    diff_cmd.add_argument("new", help="the same, after the move")
    diff_cmd.add_argument("--stack", help=f"the stack to render at a git ref: {STACK_HELP}")
    diff_cmd.add_argument("--mirror", type=Path, help="the mirror directory a git ref is rendered from (as for render)")
    diff_cmd.add_argument("--json", action="store_true", help="the diff as JSON")
    outdated_cmd = command("outdated", "newer upstream releases and support status per pin", stack=False)
    outdated_cmd.add_argument("--indexes", type=Path, metavar="DIR", help="read saved index files from DIR instead of the network")
    outdated_cmd.add_argument("--list-indexes", action="store_true", help="print each index's file name and URL (what to save into DIR)")
    outdated_cmd.add_argument("--on", type=check_date, metavar="YYYY-MM-DD", help="the day support is judged (default today)")
    outdated_cmd.add_argument("--json", action="store_true", help="the report as JSON")
    smoke_cmd = command("smoke", "post-deploy GPU checks on the live cluster of a GKE stack")
    smoke_cmd.add_argument("--kubeconfig", help="default: $KUBECONFIG, else ~/.kube/config")
    smoke_cmd.add_argument("--context", help="kubeconfig context; default: the current one")
    smoke_cmd.add_argument("--namespace", help="where the jobs run; default: the first team's namespace")
    smoke_cmd.add_argument("--timeout", type=float, default=1800.0, help="seconds per wait (default 1800)")
    return parser


def write_dashboards(out: Path) -> list[Path]:
    """DIR/<name>.json for each dashboard we provision (the DCGM one included, which stacks
    without GPU metrics do not install)."""
    from components.dashboards import dashboards

    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, text in dashboards().items():
        (out / name).write_text(text)
        paths.append(out / name)
    return paths


def main(argv: Sequence[str] | None = None, prog: str = PROG) -> int:
    args = parser(prog).parse_args(argv)

    if args.command == "versions":
        print(versions_table())
        return 0
    if args.command == "dashboards":
        for path in write_dashboards(args.out):
            print(f"wrote {path}")
        return 0
    if args.command == "diff":
        return diff_command(args)
    if args.command == "outdated":
        return outdated_command(args)
    if args.command == "reference":
        from tooling.reference import reference

        print(reference())
        return 0
    try:
        esc_files = esc_files_of(args.esc_file)
    except ConfigError as err:
        print(err, file=sys.stderr)
        return EXIT_CONFIG_ERROR
    if args.command == "smoke":
        from tooling.smoke import Options, smoke

        try:
            config = load(args.stack, esc_files)
        except ConfigError as err:
            print(err, file=sys.stderr)
            return EXIT_CONFIG_ERROR
        options = Options(kubeconfig=args.kubeconfig, context=args.context, namespace=args.namespace, timeout=args.timeout)
        return smoke(config, stack_name(args.stack), options)
    if args.command == "cost":
        if args.usage:
            if args.prometheus is None and args.usage_file is None:
                print("cost --usage: give --prometheus URL (a Prometheus with the platform's recording rules) or --usage-file FILE", file=sys.stderr)
                return EXIT_CONFIG_ERROR
            return usage(args.stack, args.prometheus, args.usage_file, esc_files)
        if args.prometheus is not None or args.usage_file is not None:
            print("cost: --prometheus and --usage-file go with --usage", file=sys.stderr)
            return EXIT_CONFIG_ERROR
        return cost(args.stack, esc_files)
    if args.command in ("check", "images") or (args.command == "render" and args.full):
        return full_command(args, esc_files)
    try:
        plan = plan_for(args.stack, esc_files, getattr(args, "cloud_identity", None))
    except ConfigError as err:
        print(err, file=sys.stderr)
        return EXIT_CONFIG_ERROR
    except DuplicateUrnError as err:
        return duplicate_urn(err)
    if args.command == "policy":
        return policy(plan)
    if args.command == "prepare":
        return prepare(plan)
    if args.command == "plan" and args.against:
        return against(plan, args.against, [t for t in args.allow_removal.split(",") if t])
    if args.command == "diagram":
        from tooling.diagram import mermaid

        print(mermaid(plan))
        return 0
    if args.command == "plan":
        print(plan_json(plan) if args.json else format_tree(plan))
    else:
        from tooling.render import write

        for path in write(plan, args.out):
            print(f"wrote {path}")
    return 0


def duplicate_urn(err: DuplicateUrnError) -> int:
    """What `pulumi up` would stop on: two resources of one name. The loader refuses every
    stack known to lead there, so this is a gap in its rules: said plainly, without a traceback."""
    print(
        f"the program stopped where `pulumi up` would: {err}. The stack file passed the loader's checks, "
        "so this is a bug of the loader (stackmodel/rules/): please report it with the stack file",
        file=sys.stderr,
    )
    return EXIT_VIOLATIONS


def diff_command(args: argparse.Namespace) -> int:
    """`diff OLD NEW`: 0 when nothing needs a person, 4 when a change is refused in place or
    deletes data (a stop), 2 for a directory or ref that cannot be read, 3 a failed render."""
    from tooling import diff

    mirror = mirror_for(args.mirror) if args.stack else None
    try:
        found = diff.run(args.old, args.new, args.stack, mirror)
    except diff.DiffError as err:
        print(f"diff: {err}", file=sys.stderr)
        return EXIT_RENDER_ERROR if "failed (exit" in str(err) else EXIT_CONFIG_ERROR
    print(diff.as_json(found) if args.json else "\n".join(diff.report(found)))
    return EXIT_DESTRUCTIVE if found.stops else 0


def outdated_command(args: argparse.Namespace) -> int:
    """`outdated`: exit 1 when a pinned line is out of support, 5 when newer releases exist,
    6 when an index could not be read (and nothing else), 0 when every pin is current."""
    from facts.versions import PINS
    from tooling import outdated

    if args.list_indexes:
        for pin in PINS:
            index = outdated.index_of(pin)
            if index is not None:
                print(f"{index.file}\t{index.url}\t{pin.name}")
        return 0
    if args.indexes is not None and not args.indexes.is_dir():
        print(f"--indexes {args.indexes}: no such directory", file=sys.stderr)
        return EXIT_CONFIG_ERROR
    day = args.on or date.today()
    statuses = outdated.outdated(PINS, args.indexes, day)
    if args.json:
        print(json.dumps({"on": day.isoformat(), "pins": [s.as_dict() for s in statuses]}, indent=2))
    else:
        print("\n".join(outdated.report(statuses, day)))
    return outdated.exit_code(statuses)


def bundle_version() -> str:
    """The bundle's own version: pyproject.toml's `version` (its one home), read from the repo
    when it is there, else from the installed package's metadata."""
    import tomllib

    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    if pyproject.is_file():
        version: str = tomllib.loads(pyproject.read_text())["project"]["version"]
        return version
    from importlib.metadata import version as installed

    return installed("mlplatform")


def against(plan: Plan, previous: str, allowed: list[str]) -> int:
    """Print what `plan` deletes of `previous` (a path, or - for stdin); 4 when that is alarming."""
    from tooling.removals import load_previous, removals, report

    try:
        text = sys.stdin.read() if previous == "-" else Path(previous).read_text()
        found = removals(load_previous(text), plan)
    except (OSError, ValueError) as err:
        print(f"--against {previous}: {err}", file=sys.stderr)
        return EXIT_CONFIG_ERROR
    alarming = found.alarming(allowed)
    for line in report(found, "stdin" if previous == "-" else previous, allowed):
        print(line, file=sys.stderr if alarming and line.startswith("!!") else sys.stdout)
    return EXIT_DESTRUCTIVE if alarming else 0


def full_command(args: argparse.Namespace, esc_files: EscFiles | None = None) -> int:
    """check, images and render --full: everything that renders charts and trees for real."""
    from tooling import render_cache
    from tooling.fullrender import RenderError
    from tooling.tools import ToolError

    try:
        with render_cache.disabled() if args.no_cache else contextlib.nullcontext():
            if args.command == "check":
                return check_command(args.stack, args.mirror, args.json, esc_files, args.on, args.allow_unmirrored)
            render = full_render_for(args.stack, args.mirror, esc_files, args.allow_unmirrored)
    except ConfigError as err:
        print(err, file=sys.stderr)
        return EXIT_CONFIG_ERROR
    except DuplicateUrnError as err:
        return duplicate_urn(err)
    except (RenderError, ToolError) as err:
        print(f"render failed: {err}", file=sys.stderr)
        return EXIT_RENDER_ERROR
    if args.command == "images":
        return images_command(render, args.copy_list, args.json) or left_out(render)
    from tooling import fullrender
    from tooling.render import write

    for path in [*write(render.plan, args.out), *fullrender.write(render, args.out)]:
        print(f"wrote {path}")
    for unknown in render.unknowns:
        namespace = f"{unknown.key[2]}/" if unknown.key[2] else ""
        print(
            f"note: {unknown.key[1]} {namespace}{unknown.key[3]} {unknown.field} is known only once the cloud resource exists: "
            f"platform.yaml has the placeholder {unknown.placeholder!r} (index.yaml lists it under unknown)",
            file=sys.stderr,
        )
    return left_out(render)


def images_command(render: FullRender, copy_list: bool, as_json: bool) -> int:
    """Print the render's images: a list, the mirror's copy list, or JSON."""
    from tooling import images

    if as_json:
        print(images.as_json(render))
    elif copy_list:
        mirror = images.policy_of(render).mirror
        if mirror is None:
            print(
                f"stack {render.stack}: mlplatform:images.mirror is not set; --copy-list says what to copy into it: "
                "set it (e.g. europe-docker.pkg.dev/acme-ml/mirror), then run this again",
                file=sys.stderr,
            )
            return EXIT_CONFIG_ERROR
        pairs = images.copy_list(render)
        for source, destination in pairs:
            print(f"{source} {destination}")
        print(f"stack {render.stack}: {len(pairs)} images to copy into {mirror}", file=sys.stderr)
    else:
        print("\n".join(i.image for i in images.platform_images(render)))
    return 0


def run(prog: str = PROG) -> None:
    """The process entry point: exit with main's code."""
    try:
        sys.exit(main(prog=prog))
    except BrokenPipeError:  # `python -m stacks plan dev | head`: the reader left; not an error
        sys.stderr.close()
        sys.exit(0)
