"""Pulumi entry point: validate the stack's config, then build the platform."""

import pulumi

import program
from components.pipelines import pipelines_args, prepared_trees
from plumbing.trees import unprepared
from stackmodel.components.pipelines import PIPELINES
from stackmodel.config import running_stack_config

config = running_stack_config()
# A tree read from a local mirror of remote kustomize bases must be prepared before (the
# program writes no file): stop here, naming the command, rather than in kustomize.
missing = unprepared(prepared_trees(pipelines_args(config) if config.components[PIPELINES].enabled else None))
if missing:
    raise pulumi.RunError("the Kubeflow trees are not ready to read:\n  - " + "\n  - ".join(missing))
program.build(config)
