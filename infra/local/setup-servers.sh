#!/usr/bin/env bash
# Installs (Debian/Ubuntu, apt-get), configures and starts the PostgreSQL and RabbitMQ that `npm start`
# and `npm test` expect: postgres trusted on loopback TCP, max_connections >= 200, RabbitMQ with
# guest/guest on 127.0.0.1:5672. As root: `sudo bash infra/local/setup-servers.sh`. Idempotent: where
# both run already it only checks them. .ci/run runs it first.
set -euo pipefail

log() { printf '\n== %s\n' "$*"; }
# Waits up to 30 s for PostgreSQL to accept connections on loopback; if it does not, pg_isready's
# non-zero status ends the script (set -e).
wait_for_postgres() {
  for _ in $(seq 1 30); do
    pg_isready -q -h 127.0.0.1 -p 5432 && break
    sleep 1
  done
  pg_isready -h 127.0.0.1 -p 5432
}
export DEBIAN_FRONTEND=noninteractive

# --- packages -------------------------------------------------------------------------------
missing=()
command -v pg_ctlcluster >/dev/null || missing+=(postgresql)
command -v rabbitmq-server >/dev/null || missing+=(rabbitmq-server)
if ((${#missing[@]} > 0)); then
  log "installing ${missing[*]}"
  apt-get update -qq
  # policy-rc.d keeps the packages from trying to start services through init (none runs here);
  # they are started below, the same way on every machine.
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- PostgreSQL -------------------------------------------------------------------------------
version=$( (ls /etc/postgresql 2>/dev/null || true) | sort -V | tail -n1)
if [[ -z "$version" ]]; then
  log "creating a PostgreSQL cluster"
  version=$(ls /usr/lib/postgresql | sort -V | tail -n1)
  pg_createcluster "$version" main
fi
hba="/etc/postgresql/$version/main/pg_hba.conf"
# Tests connect as postgres over loopback TCP without a password (POSTGRES_URL's default).
if ! grep -Eq '^host\s+all\s+all\s+127\.0\.0\.1/32\s+trust' "$hba"; then
  log "trusting loopback TCP connections in $hba"
  sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust' "$hba"
  reload_pg=1
fi
if ! pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" { print $4 }' | grep -q online; then
  log "starting PostgreSQL $version"
  pg_ctlcluster --skip-systemctl-redirect "$version" main start
elif [[ -n "${reload_pg:-}" ]]; then
  pg_ctlcluster --skip-systemctl-redirect "$version" main reload
fi
wait_for_postgres

# The e2e suite runs up to 8 service instances with a pool of 10 each, besides the tests' own
# connections: PostgreSQL's default of 100 connections leaves too little headroom.
max_connections=$(psql -h 127.0.0.1 -U postgres -d postgres -Atc 'SHOW max_connections')
if ((max_connections < 200)); then
  log "raising max_connections from $max_connections to 300 (restarts PostgreSQL)"
  psql -h 127.0.0.1 -U postgres -d postgres -qc 'ALTER SYSTEM SET max_connections = 300'
  pg_ctlcluster --skip-systemctl-redirect "$version" main restart
  wait_for_postgres
fi

# --- RabbitMQ ---------------------------------------------------------------------------------
if ! rabbitmqctl -q status >/dev/null 2>&1; then
  log "starting RabbitMQ"
  rabbitmq-server -detached
fi
started=
for _ in $(seq 1 12); do
  if rabbitmqctl -q await_startup --timeout 10 >/dev/null 2>&1; then
    started=1
    break
  fi
  sleep 2
done
if [[ -z "$started" ]]; then
  echo "RabbitMQ did not start; see /var/log/rabbitmq" >&2
  exit 1
fi
