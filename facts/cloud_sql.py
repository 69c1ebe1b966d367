"""Cloud SQL for MySQL, as data: the machine tiers it offers and how its backups relate to
its transaction logs. The pipelines database (stackmodel/components/pipelines.py) is checked against it.

Sources (stored copies, read 2026-12-02):
- Cloud SQL "Instance settings" (https://cloud.google.com/sql/docs/postgres/instance-settings,
  the same table as .../mysql/instance-settings): "Cores: 1 to 96 (must be either 1 or an even
  number)"; "Memory: 0.9 to 6.5 GB per vCPU (must be a multiple of 256 MB and at least 3.75 GB)".
  The custom tier is `db-custom-<vCPUs>-<memory MB>` (Cloud SQL Admin API "tiers": e.g.
  db-custom-1-3840); GB here is 1024 MB (3.75 GB = 3840 MB).
- Retained backups versus transaction-log days: point-in-time recovery replays the logs from a
  backup, so the days of logs kept cannot outrun the backups kept; the loader refuses fewer
  backups than log days. The exact wording of Cloud SQL's rule (cloud.google.com/sql/docs/mysql/
  backup-recovery/backups, "Automated backup and transaction log retention") was NOT confirmed
  from a stored copy, so only the plain case is refused (the shipped default, 7 and 7, stays).
"""

from __future__ import annotations

CUSTOM_MIN_VCPUS = 1
CUSTOM_MAX_VCPUS = 96
CUSTOM_MIN_MIB_PER_VCPU = 0.9 * 1024
CUSTOM_MAX_MIB_PER_VCPU = 6.5 * 1024
CUSTOM_MEMORY_STEP_MIB = 256
CUSTOM_MIN_MIB = 3840
SHARED_CORE_TIERS = ("db-f1-micro", "db-g1-small")
SOURCE = "https://cloud.google.com/sql/docs/mysql/instance-settings"


def custom_tier_problem(vcpus: int, mib: int) -> str | None:
    """Why Cloud SQL offers no `db-custom-<vcpus>-<mib>`, with the nearest tier it does; None if it does."""
    if not CUSTOM_MIN_VCPUS <= vcpus <= CUSTOM_MAX_VCPUS or (vcpus != 1 and vcpus % 2):
        near = min(max(vcpus + vcpus % 2, 2), CUSTOM_MAX_VCPUS) if vcpus > 1 else 1
        return (
            f"{vcpus} vCPUs: Cloud SQL's custom tiers have 1 or an even number of vCPUs up to {CUSTOM_MAX_VCPUS} "
            f"(e.g. db-custom-{near}-{_nearest_mib(near, mib)})"
        )
    low, high = max(CUSTOM_MIN_MIB_PER_VCPU * vcpus, CUSTOM_MIN_MIB), CUSTOM_MAX_MIB_PER_VCPU * vcpus
    if mib % CUSTOM_MEMORY_STEP_MIB or not low <= mib <= high:
        return (
            f"{mib} MiB for {vcpus} vCPU{'s' if vcpus > 1 else ''}: Cloud SQL takes a multiple of "
            f"{CUSTOM_MEMORY_STEP_MIB} MiB, 0.9 to 6.5 GiB per vCPU and at least {CUSTOM_MIN_MIB} MiB, here "
            f"{_step_up(low)} to {_step_down(high)} (e.g. db-custom-{vcpus}-{_nearest_mib(vcpus, mib)})"
        )
    return None


def _step_up(mib: float) -> int:
    return int(-(-mib // CUSTOM_MEMORY_STEP_MIB) * CUSTOM_MEMORY_STEP_MIB)


def _step_down(mib: float) -> int:
    return int(mib // CUSTOM_MEMORY_STEP_MIB * CUSTOM_MEMORY_STEP_MIB)


def _nearest_mib(vcpus: int, mib: int) -> int:
    low = _step_up(max(CUSTOM_MIN_MIB_PER_VCPU * vcpus, CUSTOM_MIN_MIB))
    high = _step_down(CUSTOM_MAX_MIB_PER_VCPU * vcpus)
    return min(max(_step_down(mib) if mib >= low else low, low), high)
