"""Pulumi entry point: validate the stack's config, then build the platform."""

import pulumi

import program
from stacks.config import ConfigError, read_pulumi_config, validate

try:
    config = validate(read_pulumi_config(), f"stack {pulumi.get_stack()}")
except ConfigError as err:
    raise pulumi.RunError(str(err)) from None
program.build(config)
