#!/usr/bin/env bash
# Makes the local PostgreSQL check passwords (scram-sha-256) for members of the role labgate_password_auth, so the
# tests of sinks.postgres.passwordFile meet a server that refuses a wrong or missing password: the cluster's trust
# entries would accept anything and hide a password that never reaches the server. Idempotent; needs root (it edits
# the cluster's pg_hba.conf) and a superuser URL. The tests create their own login roles inside the group.
set -euo pipefail
url="${LABGATE_TEST_PG_URL:-postgres://postgres@127.0.0.1:5432/test}"
group=labgate_password_auth
entry="host all +$group 127.0.0.1/32 scram-sha-256"

psql "$url" -v ON_ERROR_STOP=1 -qAtc \
  "DO \$\$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$group') THEN CREATE ROLE $group NOLOGIN; END IF; END \$\$"
hba="$(psql "$url" -qAtc 'SHOW hba_file')"
if ! grep -qxF "$entry" "$hba"; then
  # First match wins: the entry goes above every other one, and it only matches the group's members.
  tmp="$(mktemp)"
  { echo "# labgate tests: members of $group must give their password (.ci/pg-password-auth.sh)"; echo "$entry"; cat "$hba"; } > "$tmp"
  cat "$tmp" > "$hba"
  rm -f "$tmp"
fi
psql "$url" -v ON_ERROR_STOP=1 -qAtc 'SELECT pg_reload_conf()' >/dev/null
echo "pg_hba: $entry"
