"""The GPU catalog: facts the pools, runtimes and quotas rely on."""

import pytest

from facts.gpu_catalog import (
    ACCELERATORS,
    BOOT_DISK_TYPES,
    accelerator,
    boot_disk_type,
    bundled_gpus,
    describe_machine_types,
)


@pytest.mark.parametrize(
    ("name", "machine_type", "gpus"),
    [
        ("nvidia-l4", "g2-standard-8", 1),
        ("nvidia-l4", "g2-standard-24", 2),
        ("nvidia-l4", "g2-standard-96", 8),
        ("nvidia-tesla-a100", "a2-megagpu-16g", 16),
        ("nvidia-a100-80gb", "a2-ultragpu-4g", 4),
        ("nvidia-h100-80gb", "a3-highgpu-8g", 8),
        ("nvidia-h100-mega-80gb", "a3-megagpu-8g", 8),
        ("nvidia-tesla-t4", "n1-standard-16", 4),
    ],
)
def test_gpus_per_node(name: str, machine_type: str, gpus: int) -> None:
    assert accelerator(name).gpus_per_node(machine_type) == gpus


def test_every_machine_type_belongs_to_one_accelerator() -> None:
    seen: dict[str, str] = {}
    for acc in ACCELERATORS.values():
        for machine in acc.machine_types:
            assert machine not in seen, f"{machine} listed for {seen.get(machine)} and {acc.name}"
            seen[machine] = acc.name


def test_mig_only_on_datacenter_gpus() -> None:
    assert accelerator("nvidia-l4").mig_partitions == ()
    assert "1g.10gb" in accelerator("nvidia-h100-80gb").mig_partitions
    assert "1g.5gb" in accelerator("nvidia-tesla-a100").mig_partitions


def test_dws_and_compact_placement_not_on_n1() -> None:
    t4 = accelerator("nvidia-tesla-t4")
    assert not t4.dws and not t4.compact_placement
    assert all(a.dws for a in ACCELERATORS.values() if a.family in ("a2", "a3", "a4", "g2"))


def test_unknown_accelerator_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="unknown accelerator 'nvidia-p100'; known: nvidia-tesla-t4"):
        accelerator("nvidia-p100")


def test_machine_type_list_is_short_for_messages() -> None:
    assert describe_machine_types(accelerator("nvidia-l4")) == "g2-standard-4 … g2-standard-96"
    assert describe_machine_types(accelerator("nvidia-a100-80gb")) == (
        "a2-ultragpu-1g, a2-ultragpu-2g, a2-ultragpu-4g, a2-ultragpu-8g"
    )


@pytest.mark.parametrize(
    ("machine_type", "gpus"),
    [
        # cloud.google.com/compute/docs/gpus: G2, A2 and A3 come with their GPUs ...
        ("g2-standard-24", 2),
        ("g2-standard-32", 1),
        ("a2-megagpu-16g", 16),
        ("a3-highgpu-8g", 8),
        # ... N1 machines carry attached GPUs (billed apart), other families none.
        ("n1-standard-8", 0),
        ("e2-standard-8", 0),
    ],
)
def test_bundled_gpus(machine_type: str, gpus: int) -> None:
    assert bundled_gpus(machine_type) == gpus


def test_only_t4_is_attached_to_general_purpose_machines() -> None:
    assert [a.name for a in ACCELERATORS.values() if a.attached] == ["nvidia-tesla-t4"]


def test_boot_disk_types_name_catalog_machines_that_gke_can_boot() -> None:
    """Only machine types of the catalog, and only boot disk types a GKE node pool takes
    (GKE "Configuring a custom boot disk": pd-standard, pd-balanced, pd-ssd, hyperdisk-balanced)."""
    machines = {m for acc in ACCELERATORS.values() for m in acc.machine_types}
    assert set(BOOT_DISK_TYPES) == {"a3-ultragpu-8g", "a4-highgpu-8g"}
    assert set(BOOT_DISK_TYPES) <= machines
    for types in BOOT_DISK_TYPES.values():
        assert "pd-balanced" not in types  # else GKE's default would do
        assert set(types) <= {"pd-standard", "pd-balanced", "pd-ssd", "hyperdisk-balanced"}
    assert boot_disk_type("a3-megagpu-8g") is None
    assert boot_disk_type("e2-standard-8") is None
