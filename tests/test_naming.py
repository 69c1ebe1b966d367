"""Length-safe names (facts/naming.py): Google service-account ids and DNS labels."""

from __future__ import annotations

import hashlib

import pytest

from facts.naming import DNS_LABEL_MAX, GOOGLE_SERVICE_ACCOUNT_ID, bounded_name, cut, google_service_account_id, service_account_id
from infra.gke import node_service_account_id
from components.monitoring import gmp_service_account_id


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
