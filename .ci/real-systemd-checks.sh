# The checks of .ci/real-systemd.sh (sourced): each step of a laboratory's life with the gateway, and what must hold
# after it. Globals from the caller: work, repo, pids; fail, ok, inside (nspawn-lib.sh).

prop() { inside systemctl show -P "$1" labgate.service; }
mainpid() { prop MainPID; }
state() { echo "$(prop ActiveState)/$(prop SubState)"; }

# Polls `$3...` every 0.2 s until it succeeds; fails naming $2 after $1 seconds.
wait_for() {
  local limit=$(($1 * 5)) what="$2"
  shift 2
  for _ in $(seq 1 "$limit"); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  fail "timed out after $((limit / 5)) s waiting for $what"
}
is_running() { [ "$(state)" = active/running ]; }
main_pid_is_not() { local now; now="$(mainpid)"; [ "$now" != 0 ] && [ "$now" != "$1" ]; }

# The release whose better-sqlite3 the service's main process has mapped: what really runs, not what a link says.
running_release() {
  inside grep -m1 -o '/opt/labgate/releases/[^/]*/' "/proc/$(mainpid)/maps" | cut -d/ -f5
}

# /healthz's lastReload (JSON, null before the first reload), read inside the container's own network.
last_reload() { inside node /srv/ci/healthz.cjs; }

# A copy of the v1 tree as release $1 (version) - $2 (commit), with `code` put at the start of `labgate run` when $3
# is given; its manifest written by its own code as --pack does. Prints the tarball's name (in $work/share).
variant() {
  local dir="$work/$2" name
  mkdir -p "$dir"
  cp -a "$work/v1/labgate" "$dir/"
  node -e 'const f=process.argv[1], p=JSON.parse(require("fs").readFileSync(f)); p.version=process.argv[2];
    require("fs").writeFileSync(f, JSON.stringify(p, null, 2))' "$dir/labgate/package.json" "$1"
  # In tsc's run.js and in the bundle's file that holds it (dist/bundle/modules.json), which the service runs.
  if [ -n "${3:-}" ]; then
    node -e 'const fs=require("fs"), d=process.argv[1] + "/dist", a="const config = loadConfig(file);";
      const m=JSON.parse(fs.readFileSync(d + "/bundle/modules.json", "utf8"));
      const files=[d + "/src/commands/run.js", ...Object.keys(m).filter((k) => m[k].includes("src/commands/run.js")).map((k) => d + "/bundle/" + k)];
      if (files.length !== 2) { console.error("run.js is in " + (files.length - 1) + " files of the bundle"); process.exit(1); }
      for (const f of files) { const t=fs.readFileSync(f,"utf8");
        if (!t.includes(a)) { console.error(f + " no longer has: " + a); process.exit(1); }
        fs.writeFileSync(f, t.replace(a, process.argv[2] + "\n    " + a)); }' "$dir/labgate" "$3"
  fi
  rm "$dir/labgate/labgate-release.json"
  name="$(node "$dir/labgate/dist/src/release/main.js" manifest --commit "$2")"
  tar -C "$dir" -cf "$work/share/${name%.gz}" labgate # uncompressed: the installer reads either, and it is faster
  echo "${name%.gz}"
}

make_releases() {
  mkdir -p "$work/share" "$work/v1"
  systemd/install.sh --pack "$work/share" >/dev/null
  v1_tar="$(cd "$work/share" && ls labgate-*.tar.gz)"
  tar -C "$work/v1" -xzf "$work/share/$v1_tar"
  v1="$(node "$work/v1/labgate/dist/src/release/main.js" check)"
  v2_tar="$(variant 0.2.0 ci-v2)"
  v2=0.2.0-ci-v2
  # It fails as a broken release does, and logs its error just after a whole second: the line a report bounded
  # by whole seconds loses.
  v3_tar="$(variant 0.3.0 ci-broken "await new Promise((r) => setTimeout(r, 1020 - (Date.now() % 1000)));
    console.error('labgate 0.3.0-ci-broken: simulated start-up failure'); process.exit(1);")"
  v3=0.3.0-ci-broken
  ok "packed $v1_tar; made $v2_tar and $v3_tar"
}

write_share_files() {
  local instrument mapping
  instrument='{id: chem1, driver: astm, timezone: UTC, transport: {kind: serial, path: /dev/ttyLAB0, baudRate: 9600}, mapping: '
  mapping='[{code: GLU, loinc: 2345-7, unit: mmol/L}, {code: NA, loinc: 2951-2, unit: mmol/L}, {code: K, loinc: 2823-3, unit: mmol/L}, {code: CREA, loinc: 2160-0, unit: umol/L}'
  printf 'gateway: {id: ci-gw, dataDir: /var/lib/labgate, http: {host: 127.0.0.1, port: 8080}, diskFloorMb: 0}\ninstruments:\n  - %s%s]}\nsinks: {}\n' \
    "$instrument" "$mapping" >"$work/share/ci.yaml"
  printf 'gateway: {id: ci-gw, dataDir: /var/lib/labgate, http: {host: 127.0.0.1, port: 8080}, diskFloorMb: 0}\ninstruments:\n  - %s%s, {code: CL, loinc: 2075-0, unit: mmol/L}]}\nsinks: {}\n' \
    "$instrument" "$mapping" >"$work/share/ci-reloaded.yaml"
  { cat "$work/share/ci.yaml"; echo 'misspelt: true'; } >"$work/share/ci-invalid.yaml"
  printf '[Service]\nWatchdogSec=5s\n' >"$work/share/ci-timers.conf"
  cat >"$work/share/healthz.cjs" <<'EOF'
fetch('http://127.0.0.1:8080/healthz').then((r) => r.json()).then((h) => console.log(JSON.stringify(h.lastReload ?? null)), () => process.exit(1));
EOF
  cat >"$work/share/store.cjs" <<'EOF'
// Results per accession in the live store (read-only; fine beside the running gateway in WAL mode).
const Database = require('/opt/labgate/current/node_modules/better-sqlite3');
const db = new Database('/var/lib/labgate/labgate.db', { readonly: true, fileMustExist: true, timeout: 5000 });
const rows = db.prepare('SELECT accession, count(*) AS n FROM results GROUP BY accession ORDER BY accession').all();
console.log(db.pragma('integrity_check', { simple: true }));
for (const r of rows) console.log(`${r.accession} ${r.n}`);
EOF
}

check_first_install() {
  local out
  inside tar -C /root -xzf "/srv/ci/$v1_tar"
  out="$(inside /root/labgate/systemd/install.sh --source "/srv/ci/$v1_tar" 2>&1)" || { echo "$out" >&2; fail "the first install failed"; }
  echo "$out" | sed 's/^/  | /'
  [ "$(inside readlink /opt/labgate/current)" = "releases/$v1" ] || fail "current is not $v1"
  local enabled
  enabled="$(inside systemctl is-enabled labgate.service 2>&1 || true)"
  [ "$enabled" = enabled ] || fail "a first install leaves labgate.service '$enabled': it would not start after a power cut"
  ok "first install: labgate.service enabled (starts at every boot)"
  [ "$(inside systemctl is-active labgate.service || true)" = inactive ] || fail "a first install started the service before it was configured"
  ok "first install: not started (configure first)"
  [ "$(inside stat -c '%a %U:%G' /etc/labgate)" = "750 root:labgate" ] || fail "/etc/labgate is $(inside stat -c '%a %U:%G' /etc/labgate)"
  inside id -nG labgate | grep -qw dialout || fail "user labgate is not in dialout"
  ok "first install: user labgate (dialout), /etc/labgate 0750 root:labgate, current -> releases/$v1"
}

check_up_after_boot() {
  wait_for 120 "labgate.service active after boot" is_running
  [ "$(prop StatusText)" = "accepting results" ] || fail "no READY=1 status: '$(prop StatusText)'"
  [ "$(prop NRestarts)" = 0 ] || fail "it restarted $(prop NRestarts) times on its way up"
  ok "after reboot: active/running by itself, READY=1 ('$(prop StatusText)'), no restart"
  if inside journalctl -b -u labgate.service --no-pager -o cat | grep 'mode is different'; then
    fail "systemd says the configuration directory's mode differs from the unit's (above)"
  fi
  ok "no 'ConfigurationDirectory ... mode is different' notice at start"
}

# `systemctl reload` returns before the gateway applied the file: /healthz's lastReload says when it has.
reload_with() {
  local before after
  before="$(last_reload)"
  inside install -m 0640 -o root -g labgate "/srv/ci/$1" /etc/labgate/labgate.yaml
  inside systemctl reload labgate.service
  for _ in $(seq 1 100); do
    after="$(last_reload 2>/dev/null || true)"
    if [ -n "$after" ] && [ "$after" != "$before" ]; then echo "$after"; return 0; fi
    sleep 0.2
  done
  fail "no reload on /healthz 20 s after systemctl reload with $1"
}

check_reloads() {
  local pid got
  wait_for 30 "/healthz" last_reload
  pid="$(mainpid)"
  got="$(reload_with ci-reloaded.yaml)"
  echo "$got" | grep -q '"outcome":"applied"' || fail "reload not applied: $got"
  ok "reload applied: $got"
  got="$(reload_with ci-invalid.yaml)"
  echo "$got" | grep -q '"outcome":"refused"' || fail "an invalid file was not refused: $got"
  is_running || fail "a refused reload left the service $(state)"
  ok "reload refused: $got"
  got="$(reload_with ci.yaml)"
  echo "$got" | grep -q '"outcome":"applied"' || fail "reload not applied: $got"
  [ "$(mainpid)" = "$pid" ] || fail "a reload restarted the gateway (main PID $pid -> $(mainpid))"
  ok "the same main PID ($pid) through three reloads"
}

check_watchdog() {
  local pid restarts
  pid="$(mainpid)"
  restarts="$(prop NRestarts)"
  inside sh -c 'kill -STOP "$1"' sh "$pid" # the shell's kill: this Debian has no procps
  wait_for 60 "a new main process after the watchdog" main_pid_is_not "$pid"
  wait_for 60 "the restarted gateway's READY=1" is_running
  [ "$(prop NRestarts)" -gt "$restarts" ] || fail "NRestarts did not grow"
  inside journalctl -u labgate.service --no-pager -o cat | grep -q 'Watchdog timeout' || fail "no watchdog timeout in the journal"
  ok "watchdog: the stopped gateway ($pid) timed out and was restarted (main PID $(mainpid))"
}

delivered() { grep -c ': delivered$' "$work/emulator.out" || true; }
at_least_delivered() { [ "$(delivered)" -ge "$1" ]; }

check_power_cut() {
  # Enough specimens that the cut lands among them: over a pseudo-terminal a session takes some 50 ms.
  local emu specimens=60 before n acc
  node "$repo/bin/labgate.js" emulate --port "$work/analyzer" --baud 9600 --every 1 --reply-timeout 3 --specimens "$specimens" >"$work/emulator.out" 2>&1 &
  emu=$!
  pids+=("$emu")
  wait_for 90 "three specimens ACKed" at_least_delivered 3
  before="$(delivered)"
  container_power_cut
  [ "$(delivered)" -lt "$specimens" ] || fail "the analyzer finished before the power cut"
  ok "power cut: the container's PID 1 killed once $before specimens were ACKed ($(delivered) by the time it was dead), the analyzer still sending"
  container_boot
  wait_for 120 "labgate.service active after the power cut" is_running
  ok "after the power cut: booted, the gateway active by itself ($(prop StatusText))"
  wait_for 180 "the analyzer's last specimen" test ! -e "/proc/$emu"
  wait "$emu" || { cat "$work/emulator.out" >&2; fail "the emulator failed"; }
  grep -q '^no answer' "$work/emulator.out" || fail "no session was cut off by the power cut: $(cat "$work/emulator.out")"
  [ "$(delivered)" = "$specimens" ] || fail "the analyzer got $(delivered) of $specimens specimens ACKed"
  inside node /srv/ci/store.cjs >"$work/store.out"
  [ "$(head -n1 "$work/store.out")" = ok ] || fail "store integrity: $(head -n1 "$work/store.out")"
  for n in $(seq 1 "$specimens"); do
    acc="$(printf 'EMU-%04d' "$n")"
    grep -qx "$acc 4" "$work/store.out" || fail "specimen $acc, ACKed, is not in the store exactly once with its 4 results: $(cat "$work/store.out")"
  done
  [ "$(tail -n +2 "$work/store.out" | wc -l)" = "$specimens" ] || fail "the store holds more than was sent: $(cat "$work/store.out")"
  ok "every ACKed specimen stored once with its 4 results, none twice ($specimens specimens; integrity ok)"
}

# Runs the installer of the current release inside; sets out (stdout+stderr) and status.
installer() {
  status=0
  out="$(inside /opt/labgate/current/systemd/install.sh "$@" 2>&1)" || status=$?
  echo "$out" | sed 's/^/  | /'
}
expect_running() {
  [ "$(inside readlink /opt/labgate/current)" = "releases/$1" ] || fail "current is $(inside readlink /opt/labgate/current), expected $1"
  [ "$(inside readlink /opt/labgate/previous)" = "releases/$2" ] || fail "previous is $(inside readlink /opt/labgate/previous), expected $2"
  is_running || fail "labgate.service is $(state)"
  [ "$(running_release)" = "$1" ] || fail "the service runs $(running_release), expected $1"
}

check_upgrades() {
  installer --source "/srv/ci/$v2_tar"
  [ "$status" = 0 ] || fail "the upgrade to $v2 failed"
  expect_running "$v2" "$v1"
  ok "upgrade: $v2 runs, $v1 is previous"
  installer --rollback
  [ "$status" = 0 ] || fail "--rollback failed"
  expect_running "$v1" "$v2"
  installer --rollback
  [ "$status" = 0 ] || fail "the second --rollback failed"
  expect_running "$v2" "$v1"
  ok "--rollback both ways: $v1 ran again, then $v2"
  installer --source "/srv/ci/$v3_tar"
  [ "$status" = 1 ] || fail "the failed upgrade exited $status, expected 1"
  echo "$out" | grep -q "$v3 failed to start; its last log lines:" || fail "no report of the failed start"
  echo "$out" | sed -n '/failed to start; its last log lines:/,/rolled back/p' | grep -q '| labgate 0.3.0-ci-broken: simulated start-up failure' ||
    fail "the report lacks the failing release's own error"
  echo "$out" | grep -q "rolled back: labgate.service runs $v2 again" || fail "no automatic rollback reported"
  expect_running "$v2" "$v3"
  ok "failed upgrade: rolled back by itself, $v2 runs again, the report has $v3's error"
  installer --list
  echo "$out" | grep -qx "$v2 (current)" && echo "$out" | grep -qx "$v3 (previous)" && echo "$out" | grep -qx "$v1" || fail "--list: $out"
  ok "--list: $v2 current, $v3 previous, $v1 kept"
}
