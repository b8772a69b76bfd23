#!/usr/bin/env bash
# CI: the installer and the unit under a real systemd as PID 1, taken through what a laboratory does with them. A
# Debian 12 container (.ci/debian-tree.sh) boots with systemd-nspawn --private-network; commands run inside with
# nsenter; node is this machine's /usr/bin/node, bound in at the path the unit names. The analyzer is outside: the
# ASTM emulator on this machine, on one end of a socat pseudo-terminal pair whose other end is the container's
# /dev/ttyLAB0, so it sees every ACK even across a power cut of the container.
# What it cannot show: device cgroup rules (DevicePolicy=, DeviceAllow=) are not enforced inside this container (the
# gateway opens a pseudo-terminal the unit does not allow); `systemd-analyze` in .ci/systemd-check.sh checks them.
# One change to the unit under test: a drop-in shortens WatchdogSec to 5 s, so the watchdog and the installer's
# watch after each restart (one watchdog interval) take seconds instead of minutes.
# Needs root, systemd-nspawn, nsenter, socat, a built checkout with node_modules. Fails loudly; never skips.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd -P)"
# Its own mount namespace: the overlay and nspawn's state die with this script, however it ends.
if [ -z "${LABGATE_CI_UNSHARED:-}" ]; then exec env LABGATE_CI_UNSHARED=1 unshare --mount --propagation private bash "$repo/.ci/real-systemd.sh" "$@"; fi

# A failure shows what the gateway and systemd said last, while the container still runs.
fail() {
  echo "real-systemd: FAILED: $*" >&2
  if [ -n "${init_pid:-}" ]; then
    echo "--- the container's journal, last 40 lines" >&2
    inside journalctl -b --no-pager -n 40 >&2 || true
  fi
  exit 1
}
for tool in systemd-nspawn nsenter socat node; do command -v "$tool" >/dev/null || fail "$tool is missing"; done
[ "$(id -u)" = 0 ] || fail "run as root"
[ -f dist/src/release/main.js ] || fail "dist/ is missing: npm run build"

work="$(mktemp -d /tmp/labgate-real-systemd.XXXXXX)"
pids=()
binds=()
lower=""
# shellcheck source=.ci/nspawn-lib.sh
. .ci/nspawn-lib.sh
# shellcheck source=.ci/real-systemd-checks.sh
. .ci/real-systemd-checks.sh
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  container_cleanup
  rm -rf "$work"
}
trap cleanup EXIT

phase_start=$(date +%s.%N)
timings=()
# Ends the phase that ran so far, records its duration, names the next.
phase() {
  local now
  now=$(date +%s.%N)
  if [ -n "${phase_name:-}" ]; then timings+=("$(awk -v a="$now" -v b="$phase_start" -v n="$phase_name" 'BEGIN { printf "%6.1f s  %s", a - b, n }')"); fi
  phase_name="$1"
  phase_start=$now
  if [ -n "$1" ]; then echo "== real systemd: $1"; fi
}
ok() { echo "ok - $*"; }

phase "the Debian 12 tree (cached)"
lower="$(bash .ci/debian-tree.sh build | tail -n1)"
[ -f "$lower/.complete" ] || fail "no Debian tree at $lower"

phase "releases: this checkout packed, a newer one, one that fails at start"
make_releases

phase "boot"
mkdir -p "$work/share"
socat "pty,raw,echo=0,link=$work/device" "pty,raw,echo=0,link=$work/analyzer" &
pids+=($!)
for _ in $(seq 1 50); do [ -e "$work/device" ] && [ -e "$work/analyzer" ] && break; sleep 0.1; done
device="$(readlink -f "$work/device")"
[ -c "$device" ] || fail "socat made no pseudo-terminal"
chown root:20 "$device" # dialout is gid 20 on Debian, here and in the container
chmod 0660 "$device"
binds=(--bind-ro="$(readlink -f "$(command -v node)")":/usr/bin/node --bind-ro="$work/share":/srv/ci --bind="$device":/dev/ttyLAB0)
write_share_files
container_prepare
container_boot
ok "systemd $(inside systemctl --version | head -n1 | cut -d' ' -f2) is PID 1 in the container ($(inside systemctl is-system-running || true))"

phase "first install from the tarball"
check_first_install

phase "reboot: the gateway comes up by itself"
inside install -m 0640 -o root -g labgate /srv/ci/ci.yaml /etc/labgate/labgate.yaml
inside install -D -m 0644 /srv/ci/ci-timers.conf /etc/systemd/system/labgate.service.d/ci-timers.conf
container_reboot
check_up_after_boot

phase "systemctl reload: applied, refused, applied"
check_reloads

phase "watchdog: a stopped gateway is restarted"
check_watchdog

phase "power cut while results arrive"
check_power_cut

phase "upgrade, rollback both ways, failed upgrade rolled back, list"
check_upgrades

phase "power off"
container_stop
phase ""
echo "== real systemd: timings"
printf '%s\n' "${timings[@]}"
echo "real-systemd: ok"
