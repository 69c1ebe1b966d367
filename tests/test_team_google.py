"""A team's Google identity on GKE (components/profiles/google.py): the service account id, the
Workload Identity binding, the bucket."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from components.profiles.google import team_service_account_id
from stackmodel.schema import Team
from tests.conftest import base_gke, with_changes
from tests.support.teams import TEAM
from tooling.plan import Plan


def test_google_service_account_ids_are_length_safe() -> None:
    assert team_service_account_id(Team.model_validate({**TEAM, "name": "nlp"})) == "team-nlp"
    long = Team.model_validate({**TEAM, "name": "a" * 40})
    other = Team.model_validate({**TEAM, "name": "a" * 39 + "b"})
    assert 6 <= len(team_service_account_id(long)) <= 30
    assert team_service_account_id(long) != team_service_account_id(other)


def test_gke_team_identity_and_bucket(plan_of: Callable[[dict[str, Any]], Plan]) -> None:
    plan = plan_of(with_changes(base_gke(), {"mlplatform:teams": [{**TEAM, "bucket": {}}]}))
    member = plan.one("gcp:serviceaccount/iAMMember:IAMMember", "vision-gsa-workload-identity").inputs
    assert member["role"] == "roles/iam.workloadIdentityUser"
    assert member["member"] == "serviceAccount:acme-test.svc.id.goog[vision/default-editor]"
    bucket = plan.one("gcp:storage/bucket:Bucket", "vision-bucket").inputs
    assert bucket["name"] == "acme-test-vision" and bucket["uniformBucketLevelAccess"] is True
    admin = plan.one("gcp:storage/bucketIAMMember:BucketIAMMember", "vision-bucket-admin").inputs
    assert admin["role"] == "roles/storage.objectAdmin"
    assert admin["member"] == "serviceAccount:team-vision@acme-test.iam.gserviceaccount.com"
    account = plan.one("kubernetes:core/v1:ServiceAccount", "vision/default-editor").inputs
    assert account["metadata"]["annotations"]["iam.gke.io/gcp-service-account"] == "team-vision@acme-test.iam.gserviceaccount.com"

