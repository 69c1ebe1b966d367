"""Names derived from config (facts/naming.py): Google service-account ids, DNS labels,
bucket names; and what a GKE node leaves for pods (facts/allocatable.py)."""

from __future__ import annotations

import hashlib
import random
import re
import string
from decimal import Decimal

import pytest

from components.monitoring import gmp_service_account_id
from facts.allocatable import allocatable
from facts.naming import (
    DEX_PASSWORD_ENV_PREFIX,
    DNS_LABEL_MAX,
    GOOGLE_SERVICE_ACCOUNT_ID,
    bounded_name,
    bucket_name_problem,
    cut,
    dex_password_env,
    google_service_account_id,
    service_account_id,
    team_bucket_name,
)
from infra.gke import node_service_account_id


def test_a_short_name_is_kept_as_written() -> None:
    assert google_service_account_id("ml-dev", suffix="-nodes") == "ml-dev-nodes"
    assert google_service_account_id("vision", prefix="team-") == "team-vision"
    assert google_service_account_id("ml-prod", suffix="-gmp-query") == "ml-prod-gmp-query"


@pytest.mark.parametrize(
    ("cluster", "nodes", "gmp"),
    [
        ("ml-dev", "ml-dev-nodes", "ml-dev-gmp-query"),
        ("research-platform-europe1", "research-platform-europe1-node", "research-platform-eu-gmp-query"),
        ("a-cluster-name-of-forty-characters-long", "a-cluster-name-of-forty-charac", "a-cluster-name-of-fo-gmp-query"),
        # 29 characters + "-nodes": the old [:30] cut gave "<name>-", an invalid id.
        ("aaaaaaaaaaaaaaaaaaaaaaaaaaaab", "aaaaaaaaaaaaaaaaaaaaaaaaaaaab", "aaaaaaaaaaaaaaaaaaaa-gmp-query"),
    ],
)
def test_cluster_accounts_keep_the_ids_live_stacks_have(cluster: str, nodes: str, gmp: str) -> None:
    """Plain cuts, never hashed: a new node account id would replace every node pool."""
    assert node_service_account_id(cluster) == nodes
    assert gmp_service_account_id(cluster) == gmp


def test_a_cut_leaves_no_dash_behind() -> None:
    assert cut("abc-def", 4) == "abc"
    assert cut("abcdef", 4) == "abcd"


def test_a_long_team_name_keeps_its_prefix_and_a_hash() -> None:
    account_id = google_service_account_id("computer-vision-research-group-emea", prefix="team-")
    assert GOOGLE_SERVICE_ACCOUNT_ID.match(account_id) and account_id.startswith("team-computer-vision-re")
    assert "--" not in google_service_account_id("abcdefghijklmnopq-rstuvwxyz", prefix="team-")


def test_two_long_names_with_one_start_stay_apart() -> None:
    a, b = "a" * 39 + "b", "a" * 39 + "c"
    assert google_service_account_id(a, prefix="team-") != google_service_account_id(b, prefix="team-")


def test_a_team_id_is_the_one_profiles_always_gave() -> None:
    """`team-<name>[:18]-<sha256(name)[:6]>` for long team names: the live accounts keep their ids."""
    name = "computer-vision-research-group"
    digest = hashlib.sha256(name.encode()).hexdigest()[:6]
    assert google_service_account_id(name, prefix="team-") == f"team-computer-vision-re-{digest}"


def test_an_id_that_cannot_be_valid_is_an_error() -> None:
    with pytest.raises(ValueError, match="not a Google service-account id"):
        google_service_account_id("a")
    with pytest.raises(ValueError, match="not a Google service-account id"):
        service_account_id("1-cluster-nodes")


def test_dns_labels_stay_within_63_characters() -> None:
    assert bounded_name("x" * 100, DNS_LABEL_MAX, suffix="-headless").endswith("-headless")
    assert len(bounded_name("x" * 100, DNS_LABEL_MAX, suffix="-headless")) == DNS_LABEL_MAX
    assert bounded_name("short", DNS_LABEL_MAX) == "short"


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("acme-ml-dev-vision", None),
        ("acme_data.example.com", None),
        ("ab", "2 characters; use 3-63 (up to 222 with dots)"),
        ("a" * 64, "64 characters; use 3-63 (up to 222 with dots)"),
        ("x" * 64 + ".example.com", "each dot-separated part is at most 63 characters"),
        ("Acme-Data", "use lowercase letters, digits, '-', '_' and '.', starting and ending with a letter or digit"),
        ("acme-data-", "use lowercase letters, digits, '-', '_' and '.', starting and ending with a letter or digit"),
        ("10.0.0.1", "it reads as an IP address"),
        ("goog-data", "names may not start with 'goog'"),
        ("acme-g00gle-data", "names may not contain 'google' or a look-alike"),
    ],
)
def test_bucket_names_follow_cloud_storage(name: str, reason: str | None) -> None:
    assert bucket_name_problem(name) == reason


def test_a_team_bucket_is_named_after_project_and_team() -> None:
    assert team_bucket_name("acme-ml-dev", "vision") == "acme-ml-dev-vision"


def test_the_stack_accounts_come_from_one_place() -> None:
    """infra/, components/monitoring and the schema's rules read the same functions."""
    from components import monitoring
    from facts import naming
    from infra import gke

    assert gke.node_service_account_id is naming.node_service_account_id
    assert monitoring.gmp_service_account_id is naming.gmp_service_account_id
    assert naming.team_service_account_id("vision") == "team-vision"


@pytest.mark.parametrize(
    ("machine", "cpu", "memory_gib"),
    [
        # Worked by hand from GKE's reservation table (facts/allocatable.py):
        # e2-standard-8: 8 - (0.06 + 0.01 + 2*0.005 + 4*0.0025) = 7.91 cores;
        # 32 GiB - (1 + 0.8 + 0.8 + 16*0.06) GiB - 100 MiB.
        ("e2-standard-8", "7.91", 32 - 3.56 - 100 / 1024),
        # g2-standard-24: 24 - (0.08 + 20*0.0025) = 23.87; 96 - (2.6 + 80*0.06) GiB - 100 MiB.
        ("g2-standard-24", "23.87", 96 - 7.4 - 100 / 1024),
        # a3-highgpu-8g, 1872 GiB: 2% above 128 GiB.
        ("a3-highgpu-8g", str(208 - (0.08 + 204 * 0.0025)), 1872 - (2.6 + 112 * 0.06 + 1744 * 0.02) - 100 / 1024),
    ],
)
def test_allocatable_is_the_machine_less_what_gke_reserves(machine: str, cpu: str, memory_gib: float) -> None:
    room = allocatable(machine)
    assert room is not None
    assert room.cpu == Decimal(cpu)
    assert float(room.memory) / 2**30 == pytest.approx(memory_gib)


def test_allocatable_of_an_unknown_machine_is_not_guessed() -> None:
    assert allocatable("a4-highgpu-8g") is None


# --- Dex password environment variables --------------------------------------------------

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
"""What every environment-variable rule accepts (Kubernetes IsEnvVarName, POSIX shells)."""


def _decoded(name: str) -> str:
    """The inverse of dex_password_env, written independently: `_XX` is one UTF-8 byte,
    anything else itself. A left inverse is what makes the encoding injective."""
    body = name.removeprefix(DEX_PASSWORD_ENV_PREFIX)
    return re.sub(rb"_([0-9A-F]{2})", lambda m: bytes([int(m[1], 16)]), body.encode()).decode()


def test_password_variables_of_look_alike_addresses_differ() -> None:
    alike = [
        "ana.b@example.com",
        "ana-b@example.com",
        "ana_b@example.com",
        "ANA.B@example.com",
        "Ana.b@example.com",
        "ana.b@example.co.m",
        "anab@example.com",
        "ana.b😀@example.com",
        "ana.bé@example.com",
        "ana.be\u0301@example.com",
    ]
    names = [dex_password_env(email) for email in alike]
    assert len(set(names)) == len(alike)
    assert dex_password_env("ana.b@example.com") == "DEX_PASSWORD_ana_2Eb_40example_2Ecom"
    assert dex_password_env("a_2E@x.io") == "DEX_PASSWORD_a_5F2E_40x_2Eio"


def test_a_password_variable_decodes_back_to_its_address_and_is_a_valid_name() -> None:
    rng = random.Random(26)
    alphabet = string.ascii_letters + string.digits + "._-+@'!#$%&*/=?^`{|}~ " + "éüß😀中_"
    for _ in range(2000):
        email = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40)))
        name = dex_password_env(email)
        assert _decoded(name) == email
        assert ENV_NAME.match(name), name
        assert re.fullmatch(r"[-._a-zA-Z0-9]+", name), name  # a Secret key (IsConfigMapKey)
