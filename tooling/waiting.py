"""Wait for a condition on a live cluster by polling it, never by sleeping a fixed time.

The checks that drive a real cluster (`python -m stacks smoke`, the kind e2e suite) ask
"what is still pending?" and get back a list of human-readable items; empty means done.
On timeout the error names what was still pending, so a failed wait says why.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

Pending = Callable[[], Sequence[str]]
"""What is still missing, one readable item each; empty when the condition holds."""


class WaitTimeout(TimeoutError):
    """A condition that did not hold in time; `pending` is what was still missing."""

    def __init__(self, what: str, timeout: float, pending: Sequence[str]):
        self.what = what
        self.pending = list(pending)
        shown = "; ".join(self.pending[:20]) + (f"; ... {len(self.pending) - 20} more" if len(self.pending) > 20 else "")
        super().__init__(f"{what}: not done after {timeout:.0f}s; still pending: {shown or 'nothing reported'}")


def wait_for(
    what: str,
    pending: Pending,
    timeout: float,
    interval: float = 5.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Poll `pending` every `interval` seconds until it returns nothing; raise WaitTimeout
    after `timeout` seconds. A check that can tell failure from "not yet" raises itself."""
    deadline = clock() + timeout
    while True:
        left = list(pending())
        if not left:
            return
        now = clock()
        if now >= deadline:
            raise WaitTimeout(what, timeout, left)
        sleep(min(interval, deadline - now))
