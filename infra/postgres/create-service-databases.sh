#!/usr/bin/env bash
# Creates each service's role and database (the role owns it), and lets only that role connect:
# CONNECT is revoked from PUBLIC. The role gets the fleet's session limits and pg_read_all_stats. Idempotent: re-running only re-sets passwords and grants.
# The same statements as `npm run bootstrap` (packages/fleet/src/bootstrap.ts), for places without Node.
#
# docker-compose: mounted into /docker-entrypoint-initdb.d/ of each Postgres container, which runs it
#   once on an empty volume as POSTGRES_USER over the local socket (SERVICE_DATABASES=order_service).
# Locally:
#   SERVICE_DATABASES="order_service payment_service inventory_service shipment_service" \
#   POSTGRES_URL=postgresql://postgres@127.0.0.1:5432/postgres infra/postgres/create-service-databases.sh
# Passwords: SERVICE_PASSWORD when one database is named, otherwise each role's own name (local only).
set -euo pipefail

databases="${SERVICE_DATABASES:-order_service payment_service inventory_service shipment_service}"
if [[ -n "${POSTGRES_URL:-}" ]]; then
  connect=("$POSTGRES_URL")
else
  connect=(--username "${POSTGRES_USER:-postgres}" --dbname "${POSTGRES_DB:-postgres}")
fi

count=$(wc -w <<<"$databases")
for db in $databases; do
  if [[ ! "$db" =~ ^[a-z_][a-z0-9_]{0,62}$ ]]; then
    echo "invalid database name: $db" >&2
    exit 1
  fi
  password="$db"
  if [[ "$count" -eq 1 && -n "${SERVICE_PASSWORD:-}" ]]; then password="$SERVICE_PASSWORD"; fi
  psql "${connect[@]}" --quiet --no-psqlrc -v ON_ERROR_STOP=1 -v db="$db" -v password="$password" <<'SQL'
SELECT format('CREATE ROLE %I LOGIN', :'db') WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'db')
\gexec
ALTER ROLE :"db" LOGIN PASSWORD :'password';
-- Session limits (docs/operations.md, "Database sessions, limits and outages"); the same as `npm run bootstrap` sets.
ALTER ROLE :"db" SET statement_timeout = '5s';
ALTER ROLE :"db" SET lock_timeout = '2s';
ALTER ROLE :"db" SET idle_in_transaction_session_timeout = '15s';
-- Lets /metrics see the oldest open transaction of any role in the database.
GRANT pg_read_all_stats TO :"db";
SELECT format('CREATE DATABASE %I OWNER %I', :'db', :'db')
 WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = :'db')
\gexec
REVOKE CONNECT, TEMPORARY ON DATABASE :"db" FROM PUBLIC;
GRANT CONNECT, TEMPORARY ON DATABASE :"db" TO :"db";
SQL
  echo "$db: ready"
done
