"""The one place the tooling reaches past the Pulumi SDK's public API, and only for speed.

The offline plan (tooling/plan.py) runs on Pulumi's public mocks alone; what is here makes it
faster and nothing else. Each hook checks the SDK's shape before it touches anything: on an
SDK whose internals moved it does nothing, and the plan is the same, only slower.
tests/test_sdk_contracts.py holds each hook to the SDK the lock files install (it is on there,
and a plan is identical with it and without).

- Source positions: the SDK captures the Python stack of every resource it registers, for the
  engine's diagnostics (pulumi/runtime/resource.py `register_resource` calls the module's
  `_get_stack_trace`, `traceback.extract_stack` and a file URI per frame). Offline nothing
  reads them, and the capture was a sixth of a plan's time. While `no_source_positions` is
  active each registration gets an empty stack trace, which the SDK reads as "no source
  position" (`_get_source_position`).
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

from pulumi.runtime import resource as sdk_resource
from pulumi.runtime.proto import source_pb2

_HOOK = "_get_stack_trace"


@cache
def source_positions_hook_fits() -> bool:
    """Whether this SDK captures stacks as the hook expects: a module function `_get_stack_trace()`
    that `register_resource` looks up at each call and whose StackTrace an empty one may replace."""
    capture = getattr(sdk_resource, _HOOK, None)
    register = getattr(sdk_resource, "register_resource", None)
    if not callable(capture) or register is None:
        return False
    try:
        looked_up = f"{_HOOK}()" in inspect.getsource(register)
        gives_a_trace = not inspect.signature(capture).parameters and isinstance(capture(), source_pb2.StackTrace)
    except Exception:  # any other shape: leave the SDK alone
        return False
    return looked_up and gives_a_trace


def _no_trace() -> source_pb2.StackTrace:
    return source_pb2.StackTrace()


_lock = threading.Lock()
_users = 0
_captured: Callable[[], Any] | None = None


@contextmanager
def no_source_positions() -> Iterator[bool]:
    """No stack captured per registration meanwhile, where the SDK allows it (yields whether it
    does). Process-wide, counted: plans that run at once or inside one another share it, and
    the SDK's own capture is back when the last one ends."""
    global _users, _captured
    if not source_positions_hook_fits():
        yield False
        return
    with _lock:
        if _users == 0:
            _captured = getattr(sdk_resource, _HOOK)
            setattr(sdk_resource, _HOOK, _no_trace)
        _users += 1
    try:
        yield True
    finally:
        with _lock:
            _users -= 1
            if _users == 0:
                setattr(sdk_resource, _HOOK, _captured)
                _captured = None
