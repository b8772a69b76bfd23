#!/usr/bin/env bash
# Installs labgate on Raspberry Pi OS (arm64) or any systemd Debian: the app in /opt/labgate, user `labgate`
# in group dialout, /etc/labgate (config + credentials), the unit and the udev rule example.
# Idempotent: run it again to upgrade; an existing /etc/labgate/labgate.yaml is never touched.
#
#   sudo systemd/install.sh                          # from this checkout (after `npm ci`, which builds dist/)
#   sudo systemd/install.sh --source labgate.tar.gz  # from a tarball made with --pack
#   systemd/install.sh --pack labgate.tar.gz         # pack this checkout (production dependencies only)
#   systemd/install.sh --destdir /tmp/root --no-system   # into a throwaway root (CI): no useradd/systemctl/udevadm
#
# DESTDIR in the environment works like --destdir.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source_arg="$here"
destdir="${DESTDIR:-}"
system=1
pack_out=""
node_bin="/usr/bin/node"
start=0

usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "install.sh: $*" >&2; exit 1; }
log() { echo "install.sh: $*"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --source) source_arg="${2:?--source needs a directory or tarball}"; shift 2 ;;
    --destdir) destdir="${2:?--destdir needs a directory}"; shift 2 ;;
    --no-system) system=0; shift ;;
    --pack) pack_out="${2:?--pack needs an output file}"; shift 2 ;;
    --node) node_bin="${2:?--node needs a path}"; shift 2 ;;
    --start) start=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
destdir="${destdir%/}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The files that make up an installed labgate, staged from a checkout into $1 with production dependencies only.
stage_from_checkout() {
  local src="$1" out="$2"
  [ -f "$src/dist/src/cli.js" ] || die "$src/dist is missing: run 'npm ci' (it builds) or 'npm run build' first"
  [ -d "$src/node_modules" ] || die "$src/node_modules is missing: run 'npm ci' first"
  mkdir -p "$out"
  cp -a "$src/package.json" "$src/package-lock.json" "$src/bin" "$src/dist" "$src/config" "$src/systemd" "$out/"
  if [ -f "$src/README.md" ]; then cp -a "$src/README.md" "$out/"; fi
  rm -rf "$out/dist/test"
  cp -a "$src/node_modules" "$out/"
  # Offline: only removes dev dependencies; the native builds (better-sqlite3, serialport) stay as built.
  (cd "$out" && npm prune --omit=dev --ignore-scripts --offline --no-audit --no-fund --loglevel=error >/dev/null)
}

if [ -n "$pack_out" ]; then
  stage_from_checkout "$here" "$work/labgate"
  tar -C "$work" -czf "$pack_out" labgate
  log "packed $(du -h "$pack_out" | cut -f1) into $pack_out"
  exit 0
fi

# --- the source tree to install --------------------------------------------------------------------------
if [ -f "$source_arg" ]; then
  mkdir -p "$work/unpacked"
  tar -C "$work/unpacked" -xzf "$source_arg"
  app_src="$(dirname "$(find "$work/unpacked" -maxdepth 3 -path '*/bin/labgate.js' | head -n1)")/.."
  [ -f "$app_src/package.json" ] || die "$source_arg does not contain a labgate tree (bin/labgate.js)"
  [ -d "$app_src/node_modules" ] || die "$source_arg has no node_modules; make it with install.sh --pack"
elif [ -d "$source_arg" ]; then
  stage_from_checkout "$(cd "$source_arg" && pwd)" "$work/labgate"
  app_src="$work/labgate"
else
  die "no such source: $source_arg"
fi

# --- preconditions -----------------------------------------------------------------------------------------
if [ "$system" = 1 ]; then
  [ "$(id -u)" = 0 ] || die "run as root (sudo), or use --destdir DIR --no-system"
  command -v systemctl >/dev/null || die "systemd is required"
fi
if [ -x "$node_bin" ]; then
  ver="$("$node_bin" -p 'process.versions.node')"
  major="${ver%%.*}"; rest="${ver#*.}"; minor="${rest%%.*}"
  if [ "$major" -lt 20 ] || { [ "$major" = 20 ] && [ "$minor" -lt 19 ]; }; then
    if [ "$system" = 1 ]; then die "$node_bin is Node $ver; labgate needs >= 20.19 (Debian's nodejs is too old: use NodeSource)"; fi
    log "warning: $node_bin is Node $ver; labgate needs >= 20.19"
  fi
elif [ "$system" = 1 ]; then
  die "$node_bin not found; install Node.js >= 20.19 (NodeSource) so that it is /usr/bin/node, as the unit expects"
fi

# --- user ---------------------------------------------------------------------------------------------------
if [ "$system" = 1 ]; then
  if ! getent group labgate >/dev/null; then groupadd --system labgate; fi
  if ! id labgate >/dev/null 2>&1; then
    useradd --system --gid labgate --groups dialout --no-create-home --home-dir /var/lib/labgate --shell /usr/sbin/nologin \
      --comment "labgate instrument gateway" labgate
    log "created user labgate (groups: labgate, dialout)"
  fi
  id -nG labgate | tr ' ' '\n' | grep -qx dialout || usermod -aG dialout labgate
fi

# --- the app: staged beside the old one, then swapped, so an interrupted upgrade never leaves half a tree ----
opt="$destdir/opt"
mkdir -p "$opt"
rm -rf "$opt/labgate.new" "$opt/labgate.old"
cp -a "$app_src" "$opt/labgate.new"
chmod -R u=rwX,go=rX "$opt/labgate.new"
if [ "$system" = 1 ]; then chown -R root:root "$opt/labgate.new"; fi
if [ -d "$opt/labgate" ]; then mv "$opt/labgate" "$opt/labgate.old"; fi
mv "$opt/labgate.new" "$opt/labgate"
rm -rf "$opt/labgate.old"
log "installed the app in $opt/labgate"

# --- configuration -----------------------------------------------------------------------------------------
etc="$destdir/etc/labgate"
install -d -m 0750 "$etc"
install -d -m 0700 "$etc/credentials"
install -m 0640 "$app_src/config/labgate.example.yaml" "$etc/labgate.example.yaml"
if [ ! -e "$etc/labgate.yaml" ]; then
  install -m 0640 "$app_src/config/labgate.example.yaml" "$etc/labgate.yaml"
  log "wrote $etc/labgate.yaml from the example: edit it, then 'labgate check-config'"
else
  log "kept the existing $etc/labgate.yaml"
fi
if [ "$system" = 1 ]; then
  chown root:labgate "$etc" "$etc/labgate.yaml" "$etc/labgate.example.yaml"
  chown root:root "$etc/credentials"
fi

# --- unit, udev rule, command --------------------------------------------------------------------------------
install -D -m 0644 "$app_src/systemd/labgate.service" "$destdir/etc/systemd/system/labgate.service"
install -D -m 0644 "$app_src/systemd/99-labgate-serial.rules" "$destdir/etc/udev/rules.d/99-labgate-serial.rules"
install -d -m 0755 "$destdir/usr/local/bin"
ln -sfn /opt/labgate/bin/labgate.js "$destdir/usr/local/bin/labgate"

if [ "$system" = 1 ]; then
  systemctl daemon-reload
  udevadm control --reload 2>/dev/null || true
  systemctl enable labgate.service >/dev/null
  if [ "$start" = 1 ]; then systemctl restart labgate.service; log "started labgate.service"; fi
  log "done. Next: edit /etc/labgate/labgate.yaml, 'sudo -u labgate labgate check-config', 'sudo systemctl restart labgate',"
  log "      then watch 'journalctl -u labgate -f' and 'curl -s http://127.0.0.1:8080/healthz'"
else
  log "done (no-system mode: no user, no systemctl, no udevadm) in ${destdir:-/}"
fi
