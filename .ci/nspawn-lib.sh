# Functions of .ci/real-systemd.sh (sourced): one container with systemd as PID 1, booted with systemd-nspawn from
# the cached Debian tree under an overlay (the tree itself is never written), powered off, rebooted or cut off.
# The caller runs in its own mount namespace (unshare --mount), so the overlay and nspawn's state tmpfs vanish with
# it, whatever happens; container_cleanup also unmounts them itself.
# Globals the caller sets: work (scratch directory), lower (the tree), binds (nspawn --bind options).
# Globals set here: nspawn_pid (systemd-nspawn), init_pid (the container's PID 1, as the host sees it).

nspawn_pid=""
init_pid=""
made_state_dir=0

# The overlay the container boots from: the tree below, this run's changes in $work/upper, which survive every
# reboot and power cut of the run (a power cut kills processes, not the disk).
container_prepare() {
  mkdir -p "$work/upper" "$work/ovl-work" "$work/root"
  if [ ! -d /run/systemd/nspawn ]; then made_state_dir=1; mkdir -p /run/systemd/nspawn; fi
  # nspawn keeps its state in /run/systemd/nspawn and refuses to clean it up off a tmpfs; this /run is a disk.
  mount -t tmpfs -o mode=0755 labgate-ci-nspawn /run/systemd/nspawn
  mount -t overlay labgate-ci-root -o "lowerdir=$lower,upperdir=$work/upper,workdir=$work/ovl-work" "$work/root"
}

# Boots the container and waits until systemd says the boot is done (running, or degraded: a unit failed).
container_boot() {
  local state="" pid
  # --keep-unit and --register=no: no systemd runs on this host to give the container a scope or a name.
  systemd-nspawn --quiet --boot --directory="$work/root" --private-network --keep-unit --register=no --machine=labgate-ci \
    "${binds[@]}" >>"$work/console.log" 2>&1 </dev/null &
  nspawn_pid=$!
  init_pid=""
  for _ in $(seq 1 300); do
    kill -0 "$nspawn_pid" 2>/dev/null || { tail -20 "$work/console.log" >&2; fail "systemd-nspawn exited during boot"; }
    if [ -z "$init_pid" ]; then
      # Nothing yet is no error: nspawn may not have forked the container's init so far.
      pid="$(ps -o pid= --ppid "$nspawn_pid" | head -n1 | tr -d ' ' || true)"
      [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = systemd ] && init_pid="$pid"
    fi
    if [ -n "$init_pid" ]; then
      state="$(inside systemctl is-system-running 2>/dev/null || true)"
      case "$state" in running | degraded) break ;; esac
    fi
    sleep 0.2
  done
  case "$state" in running | degraded) ;; *) tail -20 "$work/console.log" >&2; fail "the container did not finish booting (state '$state')" ;; esac
  if [ "$state" = degraded ]; then inside systemctl --failed --no-legend >&2; fi
}

# Runs a command inside the container: its namespaces, its root, a clean environment.
inside() {
  nsenter --target "$init_pid" --all -- /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 SYSTEMD_PAGER= SYSTEMD_COLORS=0 "$@"
}

# Waits up to $1 seconds for systemd-nspawn to exit; returns its status (0 when it exited in time: 133 = reboot).
container_exit() {
  local status=0
  for _ in $(seq 1 $(($1 * 5))); do
    if ! kill -0 "$nspawn_pid" 2>/dev/null; then
      wait "$nspawn_pid" || status=$?
      nspawn_pid=""
      init_pid=""
      return "$status"
    fi
    sleep 0.2
  done
  fail "the container did not stop within $1 s"
}

# `systemctl reboot` inside: a clean shutdown, then booted again (nspawn leaves the restart to its caller).
container_reboot() {
  inside systemctl reboot 2>/dev/null || true # no D-Bus here: systemctl says so, then asks PID 1 directly
  local status=0
  container_exit 60 || status=$?
  [ "$status" = 133 ] || fail "systemd-nspawn exited with $status on reboot, expected 133"
  container_boot
}

# A power cut: the container's PID 1 killed, and with it every process in the container at once.
container_power_cut() {
  kill -KILL "$init_pid"
  container_exit 30 || true
}

# A clean shutdown (nspawn turns SIGTERM into a poweroff request); killed when it does not finish in time.
container_stop() {
  [ -n "$nspawn_pid" ] || return 0
  kill -TERM "$nspawn_pid" 2>/dev/null || true
  for _ in $(seq 1 150); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 0.2; done
  if kill -0 "$nspawn_pid" 2>/dev/null; then
    [ -n "$init_pid" ] && kill -KILL "$init_pid" 2>/dev/null
    kill -KILL "$nspawn_pid" 2>/dev/null || true
  fi
  wait "$nspawn_pid" 2>/dev/null || true
  nspawn_pid=""
  init_pid=""
}

# For the EXIT trap: the container stopped, nothing left mounted.
container_cleanup() {
  container_stop
  if mountpoint -q "$work/root"; then umount "$work/root" || umount -l "$work/root"; fi
  if mountpoint -q /run/systemd/nspawn; then umount /run/systemd/nspawn || umount -l /run/systemd/nspawn; fi
  if [ "$made_state_dir" = 1 ]; then rmdir /run/systemd/nspawn 2>/dev/null || true; fi
}
