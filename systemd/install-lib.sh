# Functions of systemd/install.sh (sourced; not run on its own). Globals set by install.sh: opt, etc_dir, destdir,
# node_bin, system, service, service_user, keep, work.
#
# Layout: $opt/releases/<version>-<commit>/   one tree per release, read-only, never changed once there
#         $opt/current  -> releases/<name>     what the unit runs (ExecStart=/usr/bin/node /opt/labgate/current/...)
#         $opt/previous -> releases/<name>     what a rollback returns to
# Links are relative, so the layout also works inside a throwaway root (--destdir).

unit=labgate.service

# Points $opt/$1 at releases/$2 with one rename(2): a reader sees the old link or the new one, never neither.
relink() {
  ln -sfn "releases/$2" "$opt/.$1.tmp"
  mv -T "$opt/.$1.tmp" "$opt/$1"
}

# The release a link names, or nothing.
release_of() {
  local target
  target="$(readlink "$opt/$1" 2>/dev/null)" || return 0
  basename "$target"
}

# Runs a command as the service user (the smoke test must see what the service will see), from / as the unit does.
as_service_user() {
  if [ "$system" = 1 ]; then (cd / && runuser -u "$service_user" -- "$@"); else "$@"; fi
}

# The release's own checks, as the service user, before anything is switched to it: its native modules load in
# the target's node, it accepts the live configuration, and it reads the live store's schema.
smoke_test() {
  local rel="$opt/releases/$1" out
  log "smoke test of $1 as ${service_user:-$(id -un)}"
  if ! out="$(as_service_user "$node_bin" "$rel/bin/labgate.js" check-config --schema-only --config "$etc_dir/labgate.yaml" 2>&1)"; then
    printf '%s\n' "$out" | sed 's/^/  /' >&2
    return 1
  fi
  printf '%s\n' "$out" | sed 's/^/  /'
  if ! out="$(as_service_user "$node_bin" "$rel/dist/src/release/main.js" smoke --config "$etc_dir/labgate.yaml" 2>&1)"; then
    printf '%s\n' "$out" | sed 's/^/  /' >&2
    return 1
  fi
  printf '%s\n' "$out" | sed 's/^/  /'
}

# The unit, the udev rule and the command of the release that is current.
install_system_files() {
  local rel="$opt/releases/$1"
  install -D -m 0644 "$rel/systemd/labgate.service" "$destdir/etc/systemd/system/$unit"
  install -D -m 0644 "$rel/systemd/99-labgate-serial.rules" "$destdir/etc/udev/rules.d/99-labgate-serial.rules"
  install -d -m 0755 "$destdir/usr/local/bin"
  ln -sfn /opt/labgate/current/bin/labgate.js "$destdir/usr/local/bin/labgate"
  if [ "$service" = 1 ]; then systemctl daemon-reload; fi
  if [ "$system" = 1 ]; then udevadm control --reload 2>/dev/null || true; fi
}

# Makes $1 current, and what was current previous.
switch_to() {
  local was
  was="$(release_of current)"
  if [ -n "$was" ] && [ "$was" != "$1" ]; then relink previous "$was"; fi
  relink current "$1"
  install_system_files "$1"
  log "current -> releases/$1${was:+ (previous -> releases/$was)}"
}

# The gateway starts at every boot, so it comes back by itself after a power cut. Only once the unit file is in
# place: systemd refuses to enable a unit it does not know, and that refusal must be seen, not swallowed.
enable_at_boot() {
  [ "$system" = 1 ] || return 0
  if ! systemctl enable --quiet "$unit"; then
    echo "install.sh: could not enable $unit (above): it will not start at boot" >&2
    return 1
  fi
  log "$unit is enabled: it starts at every boot"
}

# A systemd time span ("2min", "1min 30s", "500ms", "infinity") in whole seconds, at least 1, at most 900.
span_seconds() {
  local total=0 tok n u
  [ "$1" = infinity ] && { echo 900; return; }
  for tok in $1; do
    n="${tok%%[a-z]*}"; u="${tok#"$n"}"
    case "$u" in
      us) ;;
      ms) total=$((total + (n + 999) / 1000)) ;;
      s | '') total=$((total + n)) ;;
      min) total=$((total + n * 60)) ;;
      h) total=$((total + n * 3600)) ;;
      *) total=$((total + 60)) ;;
    esac
  done
  [ "$total" -lt 1 ] && total=1
  [ "$total" -gt 900 ] && total=900
  echo "$total"
}

prop() { systemctl show -P "$1" "$unit"; }

# Restarts the unit and waits for it to prove itself: READY=1 (ActiveState=active for Type=notify) within the
# unit's start timeout, then no restart and no new invocation for one watchdog interval (a crash or a missed
# watchdog right after READY=1 counts as a failed start). An exit before READY=1 fails at once: Restart=always
# would retry it forever. Returns 0 when it held; sets watched_invocation to the first invocation it started.
restart_and_watch() {
  local before start_s settle_s deadline inv="" state restarts=""
  watched_invocation=""
  before="$(prop InvocationID)"
  start_s="$(span_seconds "$(prop TimeoutStartUSec)")"
  settle_s="$(span_seconds "$(prop WatchdogUSec)")"
  [ "$(prop WatchdogUSec)" = 0 ] && settle_s=10
  # --no-block: with Restart=always a failing start is retried forever, and a blocking restart would wait with it.
  systemctl restart --no-block "$unit"
  deadline=$(($(date +%s) + start_s))
  while :; do
    state="$(prop ActiveState)/$(prop SubState)"
    if [ -z "$inv" ] && [ "$(prop InvocationID)" != "$before" ]; then
      inv="$(prop InvocationID)"; restarts="$(prop NRestarts)"; watched_invocation="$inv"
    fi
    if [ -n "$inv" ] && [ "$state" = active/running ]; then inv="$(prop InvocationID)"; break; fi
    if [ -n "$inv" ] && { [ "$(prop NRestarts)" != "$restarts" ] || [ "${state#*/}" = auto-restart ] || [ "${state%/*}" = failed ]; }; then
      log "it exited before READY=1 (state $state)"
      return 1
    fi
    [ "$(date +%s)" -ge "$deadline" ] && { log "no READY=1 within ${start_s}s (state $state)"; return 1; }
    sleep 0.5
  done
  log "READY=1; watching for ${settle_s}s"
  deadline=$(($(date +%s) + settle_s))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    sleep 0.5
    state="$(prop ActiveState)/$(prop SubState)"
    if [ "$(prop InvocationID)" != "$inv" ] || [ "$state" != active/running ]; then
      log "it did not stay up after READY=1 (state $state)"
      return 1
    fi
  done
}

# What the invocation $1 of the unit logged (its own output and what systemd said of it), for the operator who must
# see why a release failed; without an invocation, the unit's log since epoch second $2. Matched by invocation, not
# by time: a time bound cuts off or lets in lines of the same second, and the failing line is often among them.
invocation_log() {
  if [ -n "$1" ]; then
    journalctl "_SYSTEMD_INVOCATION_ID=$1" + "INVOCATION_ID=$1" -n 40 --no-pager -o cat
  else
    journalctl -u "$unit" --since "@$2" -n 40 --no-pager -o cat
  fi 2>&1 | sed 's/^/  | /' >&2 || true
}

# Switches to release $1, restarts and watches it; when it fails, switches back to $2 (if any), restarts that and
# returns 1 with $1's last log lines. The fallback is smoke-tested first: it must still read the store.
activate() {
  local new="$1" old="$2" t0 t1
  switch_to "$new"
  t0="$(date +%s)"
  if restart_and_watch; then log "labgate.service runs $new"; return 0; fi
  t1="$(date +%s)"
  echo "install.sh: $new failed to start; its last log lines:" >&2
  invocation_log "$watched_invocation" "$t0"
  if [ -z "$old" ]; then
    echo "install.sh: no previous release to return to; $new stays current (systemd keeps restarting it)" >&2
    return 1
  fi
  if ! smoke_test "$old"; then
    echo "install.sh: cannot return to $old: it fails its smoke test (above); $new stays current." >&2
    echo "  If the store was migrated, see 'Rolling back' in docs/install.md: restart $new once fixed, or install a newer release." >&2
    return 1
  fi
  switch_to "$old"
  if restart_and_watch; then
    echo "install.sh: rolled back: labgate.service runs $old again; $new is kept as previous" >&2
  else
    echo "install.sh: $old did not start either; its last log lines:" >&2
    invocation_log "$watched_invocation" "$t1"
  fi
  return 1
}

# Keeps the $keep most recently installed releases, and always current and previous.
prune_releases() {
  local cur prev n=0 name
  cur="$(release_of current)"; prev="$(release_of previous)"
  for name in $(ls -1t "$opt/releases"); do
    case "$name" in .*) continue ;; esac
    n=$((n + 1))
    if [ "$n" -gt "$keep" ] && [ "$name" != "$cur" ] && [ "$name" != "$prev" ]; then
      rm -rf "${opt:?}/releases/$name"
      log "removed the old release $name"
    fi
  done
}
