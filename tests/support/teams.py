"""A team for the team-object tests, and its objects as the program builds them."""

from __future__ import annotations

from typing import Any

from components.profiles.args import team_args
from components.profiles.team import team_objects
from stackmodel.config import validate

TEAM = {
    "name": "vision",
    "owner": "lead@acme.com",
    "contributors": [{"email": "Ana.Li@acme.com", "role": "edit"}, {"email": "bo@acme.com", "role": "view"}],
    "quota": {"gpus": {"nvidia-l4": 8}, "cpu": "64", "memory": "256Gi"},
}


def objects_of(raw: dict[str, Any], team: str = "vision") -> dict[tuple[str, str], dict[str, Any]]:
    """(kind, name) -> object of one team of the stack `raw`, on GKE with a Google identity."""
    config = validate(raw, "test")
    found = next(t for t in config.teams if t.name == team)
    return {(o["kind"], o["metadata"]["name"]): o for o in team_objects(team_args(config, found), "team-vision@p.iam.gserviceaccount.com")}
