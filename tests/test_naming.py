"""Length-safe names (facts/naming.py): Google service-account ids and DNS labels."""

from __future__ import annotations

import hashlib

import pytest

from facts.naming import DNS_LABEL_MAX, GOOGLE_SERVICE_ACCOUNT_ID, bounded_name, google_service_account_id


def test_a_short_name_is_kept_as_written() -> None:
    assert google_service_account_id("ml-dev", suffix="-nodes") == "ml-dev-nodes"
    assert google_service_account_id("vision", prefix="team-") == "team-vision"
    assert google_service_account_id("ml-prod", suffix="-gmp-query") == "ml-prod-gmp-query"


@pytest.mark.parametrize("length", range(20, 41))
def test_a_long_name_gives_a_valid_id_that_keeps_prefix_and_suffix(length: int) -> None:
    name = ("ab-" * 20)[:length].rstrip("-") + "z"
    account_id = google_service_account_id(name, suffix="-nodes")
    assert GOOGLE_SERVICE_ACCOUNT_ID.match(account_id), account_id
    assert account_id.endswith("-nodes") and len(account_id) <= 30


def test_a_cut_that_lands_on_a_dash_leaves_no_dash_behind() -> None:
    # 29 characters + "-nodes": the old `[:30]` cut gave "<name>-", an invalid id.
    name = "a" * 28 + "b"
    assert f"{name}-nodes"[:30].endswith("-")
    account_id = google_service_account_id(name, suffix="-nodes")
    assert GOOGLE_SERVICE_ACCOUNT_ID.match(account_id), account_id
    # The name cut right after a '-': that dash goes, the hash follows one '-'.
    cut_on_dash = "abcdefghijklmnopq-rstuvwxyz"
    assert "--" not in google_service_account_id(cut_on_dash, suffix="-nodes")


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
        google_service_account_id("1-cluster", suffix="-nodes")


def test_dns_labels_stay_within_63_characters() -> None:
    assert bounded_name("x" * 100, DNS_LABEL_MAX, suffix="-headless").endswith("-headless")
    assert len(bounded_name("x" * 100, DNS_LABEL_MAX, suffix="-headless")) == DNS_LABEL_MAX
    assert bounded_name("short", DNS_LABEL_MAX) == "short"
