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

GO_MYSQL_DRIVER_PLUGINS = frozenset({NATIVE, CACHING_SHA2})
"""go-sql-driver/mysql, the client of Katib's database manager (v1.5.0, kubeflow/katib v0.19.0 go.mod) and of
the Model Registry server (v1.9.3 under gorm.io/driver/mysql v1.6.0, kubeflow/hub v0.3.8 go.mod; the v0.3.9
server is the same line): auth.go speaks mysql_native_password (cfg.AllowNativePasswords, true by default, dsn.go)
and caching_sha2_password, whose full authentication over plain TCP asks the server for its RSA public key
(auth.go handleAuthResult, `cachingSha2PasswordRequestPublicKey`, at both tags). So either a server that gives its
users caching_sha2_password (the in-cluster MySQL 8.4, Cloud SQL for MySQL 8.4) or one that gives them
mysql_native_password (Cloud SQL for MySQL 8.0) lets them sign in, with no flag."""
KATIB_CLIENT_PLUGINS = GO_MYSQL_DRIVER_PLUGINS
MODEL_REGISTRY_CLIENT_PLUGINS = GO_MYSQL_DRIVER_PLUGINS
IN_CLUSTER_MYSQL_DEFAULT_PLUGIN = CACHING_SHA2
"""What MySQL 8.4 gives a user the docker-library entrypoint creates (MYSQL_USER, root) when started without
`--authentication-policy`: its default plugin, caching_sha2_password (MySQL 8.4 reference manual, "Pluggable
Authentication": mysql_native_password is deprecated and disabled by default from 8.4). Katib's and the Model
Registry's in-cluster servers are started that way (their trees pass no such flag)."""
