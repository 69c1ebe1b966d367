"""`python -m mlplatform plan|render|versions` (and its alias `python -m stacks`) as users and CI call them."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from stackmodel.config import stack_names
from tooling.cli import EXIT_CONFIG_ERROR, main, plan_json, versions_table
from tooling.plan import Plan

REPO = Path(__file__).resolve().parents[1]


def test_shipped_stacks() -> None:
    assert {"dev", "prod", "kind"} <= set(stack_names())


@pytest.mark.parametrize("stack", ["dev", "prod", "kind"])
def test_plan_prints_tree_and_counts(stack: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", stack]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"stack {stack}: ")
    assert "pulumi:providers:kubernetes  k8s" in out
    assert "counts by type:" in out


def test_plan_json_lists_inputs_dependencies_and_masks_secrets(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "dev", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    by_type = {r["type"]: r for r in plan["resources"]}
    provider = by_type["pulumi:providers:kubernetes"]
    assert provider["inputs"]["kubeconfig"] == "[secret]"
    assert provider["dependencies"], "the provider waits for the cluster"
    pool = next(r for r in plan["resources"] if r["type"] == "gcp:container/nodePool:NodePool")
    assert pool["parent"].endswith("mlplatform:infra:GkeCluster::ml-dev")
    assert "BEGIN CERTIFICATE" not in json.dumps(plan) and "bW9jay1jYQ==" not in json.dumps(plan["outputs"])


def test_plan_accepts_a_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fork = tmp_path / "Pulumi.team-b.yaml"
    fork.write_text((REPO / "tests" / "stacks" / "Pulumi.dev.yaml").read_text().replace("ml-dev", "ml-team-b"))
    assert main(["plan", str(fork)]) == 0
    assert "ml-team-b" in capsys.readouterr().out


def test_render_is_byte_identical_twice(tmp_path: Path) -> None:
    for stack in ("dev", "kind"):
        first, second = tmp_path / f"{stack}-1", tmp_path / f"{stack}-2"
        assert main(["render", stack, "--out", str(first)]) == 0
        assert main(["render", stack, "--out", str(second)]) == 0
        for name in ("objects.yaml", "upstream.yaml"):
            assert (first / name).read_bytes() == (second / name).read_bytes()
        assert yaml.safe_load((first / "upstream.yaml").read_text())["stack"] == stack


def test_plan_json_is_deterministic(capsys: pytest.CaptureFixture[str]) -> None:
    main(["plan", "prod", "--json"])
    first = capsys.readouterr().out
    main(["plan", "prod", "--json"])
    assert capsys.readouterr().out == first


def test_bad_stack_file_exits_2_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "Pulumi.bad.yaml"
    bad.write_text(
        "config:\n"
        "  mlplatform:cluster:\n"
        "    kind: gke\n"
        "    name: x1\n"
        "    location: us-central1\n"
        "    gpuPools: [{name: a, accelerator: nvidia-l4, machineType: n2-standard-8, max: 1}]\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "mlplatform", "plan", str(bad)], cwd=REPO, capture_output=True, text=True
    )
    assert result.returncode == EXIT_CONFIG_ERROR
    assert "Traceback" not in result.stderr
    assert "mlplatform:cluster.gpuPools[0].machineType: 'n2-standard-8' cannot carry nvidia-l4" in result.stderr
    assert "gcp:project: a gke cluster needs the GCP project" in result.stderr
    assert result.stdout == "", "nothing is planned for a bad stack"


def test_python_m_stacks_is_kept_as_the_alias() -> None:
    """Forks' scripts and CI written before `python -m mlplatform` keep working."""
    result = subprocess.run([sys.executable, "-m", "stacks", "--help"], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("usage: python -m stacks ")
    assert " plan " in result.stdout and " check " in result.stdout


@pytest.mark.parametrize(
    ("content", "message"),
    [("config: [1, 2]\n", "needs a top-level 'config:' mapping"), ("config: {a: [\n", "not valid YAML")],
)
def test_unreadable_stack_file(tmp_path: Path, content: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "Pulumi.x.yaml"
    bad.write_text(content)
    assert main(["plan", str(bad)]) == EXIT_CONFIG_ERROR
    assert message in capsys.readouterr().err


def test_unknown_stack_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import stackmodel.config

    for name in ("dev", "prod"):
        (tmp_path / f"Pulumi.{name}.yaml").write_text("config: {}\n")
    monkeypatch.setattr(stackmodel.config, "STACKS_DIR", tmp_path)
    assert main(["plan", "staging-eu"]) == EXIT_CONFIG_ERROR
    assert "no such stack file; shipped stacks: dev, prod" in capsys.readouterr().err


STALE = "generated from the code and since changed: run `make docs` (scripts/update_docs.py) and commit the result"


def test_the_version_table_of_docs_versions_matches_the_pin_table() -> None:
    assert versions_table() in (REPO / "docs" / "versions.md").read_text(), STALE


def test_docs_reference_matches_the_schema() -> None:
    from scripts.update_docs import REFERENCE_HEADER
    from tooling.reference import reference

    assert (REPO / "docs" / "reference.md").read_text() == REFERENCE_HEADER + reference() + "\n", STALE


def test_the_architecture_diagram_matches_the_prod_fixtures_plan(shipped_plan: Callable[[str], Plan]) -> None:
    from tooling.diagram import mermaid

    assert mermaid(shipped_plan("prod")) in (REPO / "docs" / "architecture.md").read_text(), STALE


def test_help_describes_every_command_and_every_argument(capsys: pytest.CaptureFixture[str]) -> None:
    from tooling.cli import parser

    with pytest.raises(SystemExit):
        main(["--help"])
    top = capsys.readouterr().out
    subcommands = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
    for name, sub in subcommands.items():
        assert f"\n{name} " in top, f"--help does not describe {name}"
        undocumented = [a.dest for a in sub._actions if not a.help and a.dest != "help"]
        assert undocumented == [], f"{name}: arguments without help: {undocumented}"


def test_dashboards_are_written_as_grafana_json(tmp_path: Path) -> None:
    assert main(["dashboards", "--out", str(tmp_path)]) == 0
    written = {p.name: json.loads(p.read_text()) for p in tmp_path.iterdir()}
    assert sorted(written) == ["dcgm.json", "gpus-by-team.json", "kueue.json", "ray.json"]
    assert all(d["uid"] and d["panels"] for d in written.values())


def test_ci_runs_the_readme_test_command() -> None:
    """.ci/run runs exactly the README's test command, and after it only the examples' run."""
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text().strip().splitlines()
    assert "make test" in ci and ci[ci.index("make test") + 1 :] == ["make examples"]
    assert "```sh\nmake test\n```" in readme


@pytest.mark.parametrize("stack", ["kind", "dev", "prod"])
def test_no_secret_value_reaches_plan_or_render(stack: str, tmp_path: Path, shipped_plan: Callable[[str], Plan]) -> None:
    """What `plan --json` prints and `render` writes (the commands' own functions, on the
    session's plan of the stack: the tests above run the commands themselves)."""
    from stackmodel.secrets import SECRET_KEYS
    from tooling.render import write

    plan = shipped_plan(stack)
    text = plan_json(plan) + "".join(path.read_text() for path in write(plan, tmp_path))
    for key in SECRET_KEYS:
        if isinstance(key.placeholder, str):
            assert key.placeholder not in text, key.key
    assert "[secret]" in text  # the secrets are there, masked


def test_a_duplicate_urn_is_reported_without_a_traceback(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The loader refuses every stack known to register two resources of one name; should one
    still get through, the plan stops as `pulumi up` would, with the engine's message."""
    import tooling.cli
    from tooling.plan import DuplicateUrnError

    def duplicate(*_args: object, **_kwargs: object) -> None:
        raise DuplicateUrnError("urn:pulumi:kind::mlplatform::kubernetes:core/v1:Namespace::team")

    monkeypatch.setattr(tooling.cli, "evaluate", duplicate)
    assert main(["plan", "kind"]) == 1
    err = capsys.readouterr().err
    assert "Duplicate resource URN 'urn:pulumi:kind::mlplatform::kubernetes:core/v1:Namespace::team'" in err
    assert "bug of the loader" in err and "Traceback" not in err
