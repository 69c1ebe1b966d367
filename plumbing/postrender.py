"""Templates of a chart left out of its install, by a Helm post-renderer that `pulumi up` and the
offline render both run.

Two of KServe v0.20.0's charts (kserve-crd and kserve-llmisvc-crd) render the same
ClusterStorageContainer CRD, each behind a `lookup` that skips it when a Helm release of another
name owns the live CRD (templates/serving.kserve.io_clusterstoragecontainers.yaml). Pulumi's Chart
makes no Helm release, so both would render it and the second create fails (AlreadyExists). No
value switches a template off and a resource transform cannot drop an object, but a Chart takes a
post-renderer (pulumi-kubernetes provider/pkg/provider/helm/v4/chart.go: `postRenderer`, run by
Helm's postrender.NewExec on the rendered manifests, in which each template's documents follow a
`# Source: <chart>/<template>` line, helm.sh/helm/v3 pkg/action/action.go renderResources). This
one drops the named templates' documents and fails, naming it, when a template renders nothing:
a renamed upstream template stops the install instead of passing unseen.

The post-renderer is `python3 -c <SCRIPT> <template>...`: the standard library only, so it runs
wherever the program runs (`pulumi up` of a Python program has a python3). The offline render
(tooling/fullrender.py) runs the same command on helm's output.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi_kubernetes as k8s

COMMAND = "python3"
SCRIPT = """\
import re, sys
templates = sys.argv[1:]
text = sys.stdin.read()
documents = re.split(r"(?m)^---[ \\t]*$", text)
def source(document):
    found = re.search(r"(?m)^# Source: [^/]+/(.+?)[ \\t]*$", document)
    return found.group(1) if found else None
kept = [d for d in documents if source(d) not in templates]
missing = [t for t in templates if t not in {source(d) for d in documents}]
if missing:
    sys.exit("post-renderer: no documents of " + ", ".join(missing) + " in the chart's output: renamed upstream?")
sys.stdout.write("---".join(kept))
"""


@dataclass(frozen=True)
class PostRenderer:
    """A Helm post-renderer: `command` run with `args`, the rendered manifests on its stdin."""

    command: str
    arguments: tuple[str, ...]

    def chart_args(self) -> k8s.helm.v4.PostRendererArgs:
        """As a Chart's `post_renderer`."""
        return k8s.helm.v4.PostRendererArgs(command=self.command, args=list(self.arguments))


def omitting(templates: Sequence[str]) -> PostRenderer:
    """The post-renderer that leaves out these templates (paths inside the chart, `templates/x.yaml`)."""
    return PostRenderer(COMMAND, ("-c", SCRIPT, *templates))


class PostRenderError(Exception):
    """The post-renderer failed; the message is its own."""


def run(renderer: PostRenderer, text: str) -> str:
    """What Helm does with the post-renderer: the manifests through the command."""
    result = subprocess.run([renderer.command, *renderer.arguments], input=text, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise PostRenderError(result.stderr.strip() or f"{renderer.command} exited with {result.returncode}")
    return result.stdout
