#!/bin/sh
# Removes the Prisma query compilers a PostgreSQL fleet never loads: @prisma/client ships one build
# per database (MySQL, SQLite, SQL Server, CockroachDB, PostgreSQL; fast and small each, ~53 MB of
# the others), and the services' generated clients import only the PostgreSQL ones
# (`datasource db { provider = "postgresql" }`). Used by the Dockerfile's deps stage and by
# packages/fleet/test/image.int.test.ts, which checks every compiler file the generated clients
# import is still there and boots the services.
#   prune-prisma-engines.sh <node_modules>
set -eu
runtime="$1/@prisma/client/runtime"
if [ ! -d "$runtime" ]; then
  echo "prune-prisma-engines: $runtime does not exist" >&2
  exit 1
fi
find "$runtime" -name 'query_compiler_*' ! -name 'query_compiler_*.postgresql.*' -delete
