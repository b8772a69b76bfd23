#!/usr/bin/env bash
# CI: the minimal Debian 12 tree the real-systemd job boots (systemd as PID 1 under systemd-nspawn), built once with
# debootstrap and kept in $LABGATE_CI_CACHE (default /var/cache/labgate-ci) for every later run on this machine.
#   .ci/debian-tree.sh download   fetch and verify the packages only (network-bound: fine beside other CI work)
#   .ci/debian-tree.sh build      the tree, from the fetched packages; prints its path (the last line of stdout)
# A tree is found by a key made of this file's content, so a change of its package list or setup builds a new one.
# It is built beside its final place and renamed into it when whole: a run killed half-way leaves no tree that looks
# finished. Fails loudly when debootstrap is missing or a download fails; never skips.
set -euo pipefail

suite=bookworm
mirror="${LABGATE_CI_MIRROR:-http://deb.debian.org/debian}"
# systemd as init; nothing else beyond minbase: the installer needs only bash, coreutils, util-linux (flock,
# runuser), passwd (useradd), diffutils, tar and gzip, which minbase has. node is the host's, bound in at boot.
include=systemd,systemd-sysv
cache="${LABGATE_CI_CACHE:-/var/cache/labgate-ci}"
key="$(sha256sum "$0" | cut -c1-12)"
tree="$cache/debian12-$key"
debs="$cache/debs"

command -v debootstrap >/dev/null || { echo "debian-tree: debootstrap is missing (apt-get install debootstrap)" >&2; exit 1; }
mkdir -p "$debs"
exec 8>"$cache/.debian-tree.lock"
flock 8

case "${1:-}" in
  download)
    if [ -f "$tree/.complete" ]; then echo "debian-tree: $tree is there; nothing to fetch"; exit 0; fi
    scratch="$(mktemp -d "$cache/.download.XXXXXX")"
    trap 'rm -rf "$scratch"' EXIT
    debootstrap --variant=minbase --include="$include" --download-only --cache-dir="$debs" "$suite" "$scratch" "$mirror" >"$cache/download.log" 2>&1 ||
      { tail -20 "$cache/download.log" >&2; echo "debian-tree: debootstrap --download-only failed (log above)" >&2; exit 1; }
    echo "debian-tree: packages in $debs ($(find "$debs" -name '*.deb' | wc -l) files)"
    ;;
  build)
    if [ ! -f "$tree/.complete" ]; then
      building="$cache/.building-$key"
      rm -rf "$building"
      trap 'rm -rf "$building"' EXIT
      debootstrap --variant=minbase --include="$include" --cache-dir="$debs" "$suite" "$building" "$mirror" >"$cache/build.log" 2>&1 ||
        { tail -20 "$cache/build.log" >&2; echo "debian-tree: debootstrap failed (log above)" >&2; exit 1; }
      echo labgate-ci >"$building/etc/hostname"
      # One machine id for every boot of every run: the journal of one boot is found after the next.
      systemd-machine-id-setup --root="$building" >/dev/null
      mkdir -p "$building/var/log/journal"
      # What a lab's Pi does not need at boot either, and what would only slow the job's boots down.
      systemctl --root="$building" mask --quiet apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer \
        systemd-tmpfiles-clean.timer console-getty.service getty@.service
      rm -rf "$building/var/cache/apt/archives/"*.deb
      touch "$building/.complete"
      rm -rf "$tree"
      mv -T "$building" "$tree"
      trap - EXIT
      # Trees of earlier keys are never booted again.
      find "$cache" -maxdepth 1 -name 'debian12-*' ! -name "debian12-$key" -exec rm -rf {} +
      echo "debian-tree: built $tree"
    fi
    echo "$tree"
    ;;
  *)
    echo "usage: .ci/debian-tree.sh download|build" >&2
    exit 2
    ;;
esac
