"""Randomised mutations of the shipped stacks (tests/support/mutations.py): a seeded sample
through `python -m stacks plan`, every one exits 0 or 2 without a traceback, and every one
the schema documents as invalid is refused. `python -m benchmarks.mutations` runs all of
them (about two thousand), planning the accepted ones for real."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import tooling.cli
from stackmodel.config import stack_names
from tests.support.mutations import DROP, Mutation, all_mutations, mutations, run, sample

SAMPLE = 120
SEED = 26


ANY = object()


def _one(stack: str, path: tuple[str | int, ...], kind: str, value: object = ANY) -> Mutation:
    found = [m for m in mutations(stack) if m.path == path and m.kind == kind and (value is ANY or m.value == value)]
    assert found, f"no {kind} mutation at {path}"
    return found[0]


def test_the_mutations_cover_every_kind_and_know_what_the_schema_documents() -> None:
    everything = all_mutations()
    assert {m.kind for m in everything} == {"drop", "empty", "duplicate", "wrong-type", "out-of-range", "overlay"}
    # every fixture of tests/stacks/, whichever a branch adds (a stack name means a fixture here)
    assert {m.stack for m in everything} == set(stack_names()) >= {"dev", "dev-shared-vpc", "kind", "prod"}
    C = "mlplatform:cluster"
    assert _one("dev", (C, "gpuPools", 0, "max"), "wrong-type", "seven").invalid
    assert _one("dev", (C, "gpuPools", 0, "max"), "out-of-range", 10**6).invalid  # le=1000
    assert not _one("dev", (C, "gpuPools", 0, "min"), "out-of-range", 0).invalid  # ge=0
    assert _one("dev", (C, "privateNodes"), "wrong-type", "seven").invalid
    assert _one("prod", (C, "imageRegistry", "pushers"), "duplicate").invalid
    assert _one("dev", ("mlplatform:teams", 0, "owner"), "empty").invalid
    assert _one("dev", ("mlplatform:teams", 0, "owner"), "drop").invalid  # required
    assert not _one("dev", ("mlplatform:teams", 0, "contributors"), "drop").invalid  # optional: either way
    assert _one("dev", ("mlplatform:teams", 0, "quota", "memory"), "out-of-range", "1e30").invalid
    memory = ("mlplatform:teams", 0, "quota", "memory")
    assert [m.value for m in mutations("dev") if m.path == memory and m.kind == "wrong-type" and m.value == 7] == []  # a quantity
    assert _one("dev", (C, "autoprovisioning", "limits", "cpu"), "out-of-range", 2**63).invalid  # int64
    assert _one("dev", (C, "autoprovisioning", "limits", "cpu"), "out-of-range", -1).invalid  # Int64: ge=0
    assert _one("dev", (C, "autoprovisioning", "limits", "cpu"), "wrong-type", None).invalid
    bucket = ("mlplatform:teams", 0, "bucket")
    assert [m for m in mutations("dev") if m.path == bucket and m.kind == "wrong-type" and m.value is None] == []  # optional
    assert _one("dev", (C, "name"), "drop").value is DROP
    # issue 31's surfaces, which no fixture sets (tests/support/mutations.py SURFACES)
    assert _one("dev", ("mlplatform:images", "mirror"), "empty").invalid
    assert _one("dev", ("mlplatform:sources", "charts"), "wrong-type", 7).invalid
    assert _one("dev", ("mlplatform:overrides", "zones"), "duplicate").invalid
    assert _one("dev", ("mlplatform:overrides", "gkeVersions"), "wrong-type", "seven").invalid
    assert _one("prod", (C, "network", "podsCidr"), "wrong-type", 7).invalid
    assert _one("prod", (C, "minMasterVersion"), "empty").invalid
    assert _one("prod", ("mlplatform:components", "pipelines", "cloudSql", "retainedBackups"), "out-of-range", 0).invalid
    K = "mlplatform:components"
    overlay = [m for m in everything if m.stack == "kind" and m.kind == "overlay"]
    assert (K, "trainer", "values", "jobset", "install") in {m.path for m in overlay}
    assert all(m.invalid for m in overlay)


def test_a_seeded_sample_of_overlay_keys_is_refused(tmp_path: Path) -> None:
    """Keys the program sets, changed in an overlay: each refused, every chart of the fixtures."""
    chosen = random.Random(SEED).sample([m for m in all_mutations() if m.kind == "overlay"], 24)
    outcomes = [run(m, tmp_path) for m in chosen]
    assert [f"{o.mutation.id}: {o.failures()}" for o in outcomes if o.failures() or o.code != 2] == []


def test_a_seeded_sample_of_mutations_exits_0_or_2_and_refuses_what_is_documented_invalid(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Accepted stacks stop where the program would start (a plan each would take the suite
    minutes; the benchmark plans them)."""
    reached: list[str] = []

    def accepted(_config: object, stack: str, _build: object = None, cloud_identity: object = None) -> None:
        reached.append(stack)
        raise SystemExit(0)

    monkeypatch.setattr(tooling.cli, "evaluate", accepted)
    outcomes = [run(m, tmp_path) for m in sample(SAMPLE, SEED)]
    failures = [f"{o.mutation.id}: {', '.join(o.failures())}\n{o.output[-500:]}" for o in outcomes if o.failures()]
    assert failures == []
    codes = {o.code for o in outcomes}
    assert codes == {0, 2}, "the sample holds both accepted and refused stacks"
    assert len(reached) == sum(o.code == 0 for o in outcomes)


@pytest.mark.parametrize(
    ("stack", "path", "kind", "value"),
    [
        ("kind", ("mlplatform:teams", 1, "contributors"), "duplicate", ANY),
        ("kind", ("mlplatform:components", "kubeflow", "auth", "staticUsers"), "duplicate", ANY),
        ("kind", ("mlplatform:teams", 1, "ray"), "drop", ANY),
    ],
    ids=["duplicate contributor", "duplicate static user", "ray cluster dropped"],
)
def test_mutations_through_to_the_program_never_crash_it(
    stack: str, path: tuple[str | int, ...], kind: str, value: object, tmp_path: Path
) -> None:
    """A duplicated list entry that got past the loader would stop the program with a
    duplicate URN (exit 1): refused; and a stack a mutation leaves valid plans."""
    mutation = _one(stack, path, kind, value)
    outcome = run(mutation, tmp_path)
    assert outcome.failures() == []
    assert outcome.code == (2 if mutation.invalid else 0), outcome.output[-800:]
