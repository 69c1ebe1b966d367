"""Which MySQL authentication plugins Kubeflow Pipelines' database clients speak, and which one
each database the platform runs gives its users: the metadata server cannot sign in unless the
two meet (tests/test_pipelines.py holds every shipped choice to it). Imports nothing."""

from __future__ import annotations

NATIVE = "mysql_native_password"
CACHING_SHA2 = "caching_sha2_password"

METADATA_CLIENT_PLUGINS = frozenset({NATIVE})
"""ML Metadata 1.14.0 (gcr.io/tfx-oss-public/ml_metadata_store_server:1.14.0, the image of KFP
2.16.1's metadata-grpc-deployment): google/ml-metadata v1.14.0 builds MariaDB Connector/C
v3.0.8-release statically with the auth sources plugins/auth/my_auth.c and old_password.c only
(ml_metadata/libmysqlclient.BUILD; caching_sha2_password is a DYNAMIC plugin there, not built),
and asks for mysql_native_password (ml_metadata/metadata_store/mysql_metadata_source.cc
MYSQL_DEFAULT_AUTH). google/ml-metadata#178 (caching_sha2_password) is open."""

CLOUD_SQL_USER_PLUGIN = {"MYSQL_8_0": NATIVE, "MYSQL_8_4": CACHING_SHA2}
"""The plugin of a user Cloud SQL creates through its Admin API (pulumi-gcp sql.User), per
database version: docs.cloud.google.com/sql/docs/mysql/features ("Cloud SQL for MySQL 8.0 uses
mysql_native_password as the default authentication plugin for new users"; "Starting in Cloud SQL
for MySQL 8.4, the caching_sha2_password plugin is the default ... Any attempt to create a new
user account with the deprecated mysql_native_password authentication plugin results in an
error"), and .../create-manage-users; neither sql.User nor the Admin API's users resource has a
field for the plugin, and the 8.4 flags list has no mysql_native_password or
authentication_policy (.../flags). Read 2026-12-02."""

IN_CLUSTER_MYSQL_ARGS = ("--authentication-policy=mysql_native_password", "--mysql-native-password=ON")
"""What the Pipelines tree's MySQL 8.4 is started with so that its users sign in natively (8.4
turns the plugin off by default): kubeflow/community-distribution 26.03.1-rc.2
applications/pipeline/upstream/third-party/mysql/base/mysql-deployment.yaml ("MLMD workloads ...
depend on mysql_native_password authentication plugin"); the docker-library entrypoint creates
MYSQL_USER with the server's default plugin."""
