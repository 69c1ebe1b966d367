"""Google Cloud regions, as data: the catalog `gcp:region`, `gcp:zone`, a cluster's
location, a registry's and a bucket's region are checked against.

Sources (read 2026-12-01 in stored copies): Cloud SQL "Instance locations"
(https://docs.cloud.google.com/sql/docs/instance-locations: Cloud SQL "is available in all
Google Cloud regions") and "Unified Maintenance locations"
(https://docs.cloud.google.com/unified-maintenance/docs/locations); asia-southeast3
(Bangkok) from "Certificate Authority Service locations"
(https://docs.cloud.google.com/certificate-authority-service/docs/locations). The full list
with zones is Compute Engine's "Regions and zones"
(https://cloud.google.com/compute/docs/regions-zones), or `gcloud compute regions list`.

A region Google opens after AS_OF is refused until it is added here; a stack can take it
knowingly meanwhile with `mlplatform:overrides: {regions: [<region>]}`.

ZONES: each region's zone letters. Confirmed from stored copies of Compute Engine's "Regions
and zones" (https://cloud.google.com/compute/docs/regions-zones, read 2026-12-02): us-central1
a, b, c, f; and, from an older copy of its table, asia-east1, asia-east2, asia-northeast1,
asia-south1, asia-southeast1, australia-southeast1, europe-north1, europe-west2, europe-west3,
europe-west4, northamerica-northeast1 a, b, c, and europe-west1 b, c, d. The other regions' letters
are NOT confirmed from a stored copy: they are the page's table as this project last knew it
(a, b, c; us-east1 b, c, d). A zone missing here is refused with how to take it knowingly:
`mlplatform:overrides: {zones: [<zone>]}` (`gcloud compute zones list`).
"""

from __future__ import annotations

from datetime import date

AS_OF = date(2026, 12, 1)
SOURCE = "https://cloud.google.com/compute/docs/regions-zones"

REGIONS: frozenset[str] = frozenset(
    {
        # Africa
        "africa-south1",
        # Asia Pacific
        "asia-east1",
        "asia-east2",
        "asia-northeast1",
        "asia-northeast2",
        "asia-northeast3",
        "asia-south1",
        "asia-south2",
        "asia-southeast1",
        "asia-southeast2",
        "asia-southeast3",
        "australia-southeast1",
        "australia-southeast2",
        # Europe
        "europe-central2",
        "europe-north1",
        "europe-north2",
        "europe-southwest1",
        "europe-west1",
        "europe-west2",
        "europe-west3",
        "europe-west4",
        "europe-west6",
        "europe-west8",
        "europe-west9",
        "europe-west10",
        "europe-west12",
        # Middle East
        "me-central1",
        "me-central2",
        "me-west1",
        # North America
        "northamerica-northeast1",
        "northamerica-northeast2",
        "northamerica-south1",
        "us-central1",
        "us-east1",
        "us-east4",
        "us-east5",
        "us-south1",
        "us-west1",
        "us-west2",
        "us-west3",
        "us-west4",
        # South America
        "southamerica-east1",
        "southamerica-west1",
    }
)

_BCD = ("b", "c", "d")
_ZONE_LETTERS: dict[str, tuple[str, ...]] = {"us-central1": ("a", "b", "c", "f"), "us-east1": _BCD, "europe-west1": _BCD}
ZONES: frozenset[str] = frozenset(
    f"{region}-{letter}" for region in REGIONS for letter in _ZONE_LETTERS.get(region, ("a", "b", "c"))
)
