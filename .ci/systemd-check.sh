#!/usr/bin/env bash
# CI: the systemd unit and the installer. Runs as root in a container without a running systemd:
#   1. systemd/install.sh into a throwaway root (DESTDIR) from the checkout; then from a tarball made with --pack,
#      twice: the second run changes nothing and keeps an edited config; the installed CLI validates the example.
#      (Refused tarballs, upgrades and rollbacks run in test/runtime/install*.test.ts under a fake systemctl, and
#      under a real systemd as PID 1 in .ci/real-systemd.sh.)
#   2. `systemd-analyze verify` on the installed unit: no output at all (warnings such as an unknown key fail too).
#   3. `systemd-analyze security --offline=true`: overall exposure 2.0 or lower.
#   4. node inside an approximation of the unit's sandbox (there is no PID 1 systemd here to run the unit):
#      user nobody with only group dialout, a user namespace as PrivateUsers= makes one, no new privileges, and
#      the unit's syscall filter; it opens a pty, SQLite, HTTP and runs systemd-notify. Without dialout it must
#      fail to open the port.
# Fails loudly when anything it needs is missing; never skips.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v systemd-analyze >/dev/null || need+=(systemd)
command -v socat >/dev/null || need+=(socat)
/usr/bin/python3 -c 'import seccomp' 2>/dev/null || need+=(python3-seccomp)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update
  apt-get install -y --no-install-recommends "${need[@]}"
fi
[ -f dist/bundle/cli.js ] || npm run build

work="$(mktemp -d)"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
root="$work/root"
fail() { echo "systemd-check: $*" >&2; exit 1; }
# Every installed file with its mode and content hash (the app tree by hash of its listing, for speed).
listing() {
  (cd "$1" && find . -path ./opt/labgate/releases -prune -o -print0 | sort -z | xargs -0 stat -c '%n %a %F %N' &&
    find etc usr -type f -print0 | sort -z | xargs -0 sha256sum &&
    find opt/labgate/releases -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum)
}

echo "== installer into a throwaway root, from this checkout"
systemd/install.sh --destdir "$root" --no-system
for f in opt/labgate/current/bin/labgate.js opt/labgate/current/dist/bundle/cli.js etc/labgate/labgate.yaml etc/labgate/labgate.example.yaml \
  etc/systemd/system/labgate.service etc/udev/rules.d/99-labgate-serial.rules usr/local/bin/labgate; do
  [ -e "$root/$f" ] || [ -L "$root/$f" ] || fail "missing $f"
done
[ "$(stat -c %a "$root/etc/labgate")" = 750 ] || fail "/etc/labgate should be 0750"
[ "$(stat -c %a "$root/etc/labgate/credentials")" = 700 ] || fail "/etc/labgate/credentials should be 0700"
[ "$(stat -c %a "$root/etc/labgate/labgate.yaml")" = 640 ] || fail "labgate.yaml should be 0640"
[ ! -e "$root/opt/labgate/current/node_modules/typescript" ] || fail "dev dependencies were installed"
grep -Eq '^ExecStart=/usr/bin/node( --[a-z-]+=[0-9]+)* /opt/labgate/current/bin/labgate.js ' "$root/etc/systemd/system/labgate.service" ||
  fail "the unit does not run /opt/labgate/current"
node "$root/opt/labgate/current/bin/labgate.js" check-config --schema-only --config "$root/etc/labgate/labgate.yaml"

# A tarball is a frozen source, so two installs from it must leave byte-identical roots (the checkout's dist/
# may be rebuilt meanwhile).
echo "== installer from a packed tarball, twice (idempotent; keeps the lab's config)"
systemd/install.sh --pack "$work/packs"
tarball="$(ls "$work"/packs/labgate-*.tar.gz)"
arch="$(node -p 'process.platform + "-" + process.arch + "-abi" + process.versions.modules')"
case "$tarball" in *"-$arch.tar.gz") ;; *) fail "the tarball's name does not say $arch: $tarball" ;; esac
root2="$work/root2"
systemd/install.sh --source "$tarball" --destdir "$root2" --no-system
echo "# edited by the lab" >>"$root2/etc/labgate/labgate.yaml"
before="$(listing "$root2")"
systemd/install.sh --source "$tarball" --destdir "$root2" --no-system
after="$(listing "$root2")"
[ "$before" = "$after" ] || { diff <(echo "$before") <(echo "$after") >&2 || true; fail "second install changed the root"; }
grep -q '^# edited by the lab$' "$root2/etc/labgate/labgate.yaml" || fail "the existing config was overwritten"
node "$root2/opt/labgate/current/bin/labgate.js" check-config --schema-only --config "$root2/etc/labgate/labgate.example.yaml"

echo "== systemd-analyze verify"
unit="$root/etc/systemd/system/labgate.service"
if [ -x /usr/bin/node ] && [ -z "${LABGATE_VERIFY_IN_ROOT:-}" ]; then
  out="$(systemd-analyze verify "$unit" 2>&1)" || true
else
  # No /usr/bin/node on this host: verify inside the throwaway root, with the host's units and the real node
  # binary at the path the unit names.
  mkdir -p "$root/usr/lib/systemd" "$root/usr/bin"
  cp -a /usr/lib/systemd/system "$root/usr/lib/systemd/"
  cp "$(command -v node)" "$root/usr/bin/node"
  out="$(systemd-analyze verify --root="$root" labgate.service 2>&1)" || true
fi
[ -z "$out" ] || fail "systemd-analyze verify: $out"
echo "ok"

echo "== systemd-analyze security --offline=true"
report="$(systemd-analyze security --offline=true --no-pager "$unit" 2>&1)" || true
echo "$report" | grep '✗' || true
overall="$(echo "$report" | sed -n 's/.*Overall exposure level for labgate.service: \([0-9.]*\).*/\1/p')"
[ -n "$overall" ] || fail "no exposure level in: $report"
echo "exposure: $overall (ceiling 2.0)"
awk -v x="$overall" 'BEGIN { exit !(x <= 2.0) }' || fail "exposure $overall is above 2.0"
systemd-analyze security --offline=true --threshold=20 --no-pager "$unit" >/dev/null || fail "systemd-analyze --threshold=20 failed"
echo "== node inside the unit's sandbox (approximation)"
sbx="$work/sandbox"
mkdir -p "$sbx"
chmod 0755 "$work" "$sbx"
socat "pty,raw,echo=0,link=$sbx/device" "pty,raw,echo=0,link=$sbx/analyzer" &
pids+=($!)
/usr/bin/python3 test/runtime/fixtures/notify-sink.py "$sbx/notify" >"$sbx/notify.out" &
pids+=($!)
for _ in $(seq 1 50); do [ -e "$sbx/device" ] && [ -S "$sbx/notify" ] && break; sleep 0.1; done
chmod 0666 "$sbx/notify"
dev="$(readlink -f "$sbx/device")"
chown root:dialout "$dev"
chmod 0660 "$dev"
sandboxed() {
  setpriv --reuid=nobody --regid=nogroup "$@" --no-new-privs unshare --user \
    /usr/bin/python3 test/runtime/fixtures/seccomp-exec.py node test/runtime/fixtures/sandbox-smoke.mjs "$sbx/device" "$sbx/notify"
}
out="$(sandboxed --groups=dialout 2>&1)" || fail "sandboxed node failed: $out"
echo "$out" | grep -v '^{"level"'
echo "$out" | grep -qx 'SMOKE OK' || fail "sandboxed node did not finish"
grep -q '^READY=1 STATUS=smoke$' "$sbx/notify.out" || fail "READY=1 did not reach the notify socket"
out="$(sandboxed --clear-groups 2>&1)" && fail "opened the port without dialout"
echo "$out" | grep -q '^OPEN FAILED: .*Permission denied, cannot open' || fail "without dialout, expected EACCES: $out"
echo "without dialout: refused, as it must be"

echo "systemd-check: ok"
