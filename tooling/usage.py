"""Last week's GPU-hours per team, from the GPU-hours recording rules (components/gpu_hours.py):
`python -m stacks cost <stack> --usage`, reading a Prometheus (`--prometheus URL`) or a recorded
sample (`--usage-file FILE`), and priced from facts/prices.py.

What is read is each recorded series' raw samples over the week (an instant query of a range
vector, `metric[7d]`: Prometheus answers with every sample it holds, `resultType: matrix`); a
recorded sample file holds those two answers as Prometheus gave them, `{"allocated": <answer>,
"busy": <answer>}`. Every sample stands for the rules' evaluation interval, so a series' GPU-hours
are the sum of its values times that interval; a team that held no GPU has no sample.

A GPU-hour is priced at its node's hourly price over the node's GPUs (the pool's machine and
provisioning, as the cost view prices it), on a node autoprovisioning made at the cheapest
machine that carries the accelerator.
"""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from components.gpu_hours import ALLOCATED, BUSY, INTERVAL_SECONDS
from facts.prices import AS_OF, PriceError
from stackmodel.schema import GkeClusterConfig
from stackmodel.stack import PlatformConfig
from tooling.cost import cheapest_node, node_price

WEEK = "7d"
KEYS = {"allocated": ALLOCATED, "busy": BUSY}
"""A recorded sample file's keys, and the recorded metric each holds."""


class UsageError(Exception):
    """The usage could not be read: a Prometheus that does not answer, a file of another shape."""


@dataclass(frozen=True)
class TeamUsage:
    team: str
    pool: str
    """The GPU pool's name; empty for a node autoprovisioning made."""
    accelerator: str
    gpu_hours: float
    idle_gpu_hours: float


@dataclass(frozen=True)
class Usage:
    rows: list[TeamUsage]
    start: datetime | None
    end: datetime | None
    """The first and last sample read (None without any)."""


def _series_hours(answer: Any, what: str) -> tuple[dict[tuple[str, str, str], float], list[float]]:
    """(team, pool, accelerator) -> GPU-hours of one Prometheus answer, and every sample's time."""
    if not isinstance(answer, dict) or answer.get("status") != "success":
        raise UsageError(f"{what}: not a successful Prometheus answer ({str(answer)[:200]})")
    data = answer.get("data") or {}
    if data.get("resultType") != "matrix":
        raise UsageError(f"{what}: expected the samples of a range vector (resultType matrix), got {data.get('resultType')!r}")
    hours: dict[tuple[str, str, str], float] = {}
    times: list[float] = []
    for series in data.get("result") or []:
        labels = series.get("metric") or {}
        key = (labels.get("namespace", ""), labels.get("pool", ""), labels.get("accelerator", ""))
        values = series.get("values") or []
        times += [float(t) for t, _ in values]
        hours[key] = hours.get(key, 0.0) + sum(float(v) for _, v in values) * INTERVAL_SECONDS / 3600
    return hours, times


def usage_of(answers: dict[str, Any]) -> Usage:
    """The usage the two recorded metrics' answers add up to."""
    missing = [k for k in KEYS if k not in answers]
    if missing:
        raise UsageError(f"no {' and no '.join(missing)} answer (a recorded sample holds {{{', '.join(repr(k) for k in KEYS)}}})")
    allocated, times = _series_hours(answers["allocated"], "allocated")
    busy, busy_times = _series_hours(answers["busy"], "busy")
    rows = [
        TeamUsage(team, pool, accelerator, held, max(0.0, held - busy.get((team, pool, accelerator), 0.0)))
        for (team, pool, accelerator), held in sorted(allocated.items())
    ]
    every = times + busy_times
    when = (datetime.fromtimestamp(min(every), UTC), datetime.fromtimestamp(max(every), UTC)) if every else (None, None)
    return Usage(rows, *when)


def read_file(path: Path) -> Usage:
    try:
        answers = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise UsageError(f"{path}: {err}") from err
    if not isinstance(answers, dict):
        raise UsageError(f"{path}: expected {{\"allocated\": <Prometheus answer>, \"busy\": <Prometheus answer>}}")
    return usage_of(answers)


def query(url: str, metric: str, timeout: float = 60.0) -> Any:
    """Prometheus' answer to `metric[7d]` now (its HTTP API, /api/v1/query)."""
    address = f"{url.rstrip('/')}/api/v1/query?{urllib.parse.urlencode({'query': f'{metric}[{WEEK}]'})}"
    try:
        with urllib.request.urlopen(address, timeout=timeout) as response:
            return json.loads(response.read())
    except (OSError, ValueError) as err:
        raise UsageError(f"{address}: {err}") from err


def read_prometheus(url: str) -> Usage:
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"--prometheus {url!r}: give the Prometheus' http:// or https:// URL (e.g. a port-forward, http://localhost:9090)")
    return usage_of({key: query(url, metric) for key, metric in KEYS.items()})


def gpu_hour_price(config: PlatformConfig, pool: str, accelerator: str) -> float | None:
    """USD per GPU-hour on `pool` (or, unnamed, the cheapest node of `accelerator`); None where
    nothing is priced: a kind cluster, a pool the stack does not have."""
    cluster = config.cluster
    if not isinstance(cluster, GkeClusterConfig):
        return None
    found = next((p for p in cluster.gpu_pools if p.name == pool), None)
    if found is not None:
        return node_price(cluster.region, found) / found.gpus_per_node
    if not pool and accelerator:
        _, gpus, price = cheapest_node(cluster.region, accelerator)
        return price / gpus
    return None


def _money(value: float | None) -> str:
    return "-" if value is None else f"{value:,.2f}"


def usage_view(config: PlatformConfig, usage: Usage, source: str) -> str:
    """The table `cost <stack> --usage` prints."""
    window = f"{usage.start:%Y-%m-%d %H:%M} to {usage.end:%Y-%m-%d %H:%M} UTC" if usage.start and usage.end else "no samples"
    head = [
        f"GPU-hours per team of cluster {config.cluster.name}, {window}, from {source}",
        f"(recording rules {ALLOCATED} and {BUSY}; idle: held below the idle threshold; USD at list prices as of {AS_OF.isoformat()}, facts/prices.py)",
    ]
    rows: list[tuple[str, ...]] = []
    unpriced: set[str] = set()
    total = [0.0, 0.0, 0.0, 0.0]
    priced = False
    for row in usage.rows:
        try:
            price = gpu_hour_price(config, row.pool, row.accelerator)
        except PriceError:
            price = None
        if price is None:
            unpriced.add(row.pool or row.accelerator or "unknown")
        cost, idle = (row.gpu_hours * price, row.idle_gpu_hours * price) if price is not None else (None, None)
        priced = priced or price is not None
        rows.append((row.team, row.pool or f"(autoprovisioned {row.accelerator})", f"{row.gpu_hours:.1f}", f"{row.idle_gpu_hours:.1f}", _money(cost), _money(idle)))
        total = [total[0] + row.gpu_hours, total[1] + row.idle_gpu_hours, total[2] + (cost or 0.0), total[3] + (idle or 0.0)]
    rows.append(("total", "", f"{total[0]:.1f}", f"{total[1]:.1f}", _money(total[2] if priced else None), _money(total[3] if priced else None)))
    titles = ("team", "pool", "GPU-hours", "idle GPU-hours", "cost", "idle cost")
    widths = [max(len(r[i]) for r in [*rows, titles]) for i in range(len(titles))]

    def line(cells: tuple[str, ...]) -> str:
        return "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    notes = []
    if not isinstance(config.cluster, GkeClusterConfig):
        notes.append("a kind cluster has no cloud cost")
    elif unpriced:
        notes.append(f"no price for {', '.join(sorted(unpriced))}: a pool this stack does not have, or a machine facts/prices.py lacks")
    return "\n".join([*head, line(titles), *(line(r) for r in rows), *(f"note: {n}" for n in notes)])
