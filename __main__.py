"""Pulumi entry point: validate the stack's config, then build the platform."""

import program
from stacks.config import running_stack_config

program.build(running_stack_config())
