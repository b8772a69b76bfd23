# Functions of systemd/install.sh (sourced): where a release comes from and how it is placed.
# Globals set by install.sh: opt, destdir, node_bin, system, source_arg, work, cross_arch.

# The files that make up an installed labgate, staged from a checkout into $2 with production dependencies only,
# and its manifest written by the staged tree's own code with node $3 (the binaries decide the platform, CPU and ABI).
stage_from_checkout() {
  local src="$1" out="$2" node="$3" commit bs real stale
  [ -f "$src/dist/src/release/main.js" ] && [ -f "$src/dist/bundle/cli.js" ] || die "$src/dist is missing or stale: run 'npm ci' (it builds) or 'npm run build' first"
  [ -d "$src/node_modules" ] || die "$src/node_modules is missing: run 'npm ci' first"
  # A pack says which commit it is: a dist/ built before the sources last changed would belie it (the bundle is
  # written last, after tsc).
  stale="$(cd "$src" && find src drivers -name '*.ts' -newer dist/bundle/cli.js -print -quit 2>/dev/null || true)"
  [ -z "$stale" ] || die "$src/dist is older than $stale: run 'npm run build' first"
  mkdir -p "$out"
  cp -a "$src/package.json" "$src/package-lock.json" "$src/bin" "$src/dist" "$src/config" "$src/systemd" "$out/"
  if [ -f "$src/README.md" ]; then cp -a "$src/README.md" "$out/"; fi
  # The manual the installer's and the store's messages point at (docs/install.md, "Rolling back"), without pictures.
  if [ -d "$src/docs" ]; then mkdir -p "$out/docs" && find "$src/docs" -maxdepth 1 -name '*.md' -exec cp -a -t "$out/docs" {} +; fi
  rm -rf "$out/dist/test" "$out/dist/bench"
  # Production packages only (a Pi's SD card need not copy the dev tools), as built: the native builds stay.
  real="$(cd "$src" && pwd -P)"
  (cd "$real" && npm ls --omit=dev --all --parseable --offline 2>/dev/null || true) | sed -n "s|^$real/\(node_modules/.*\)|\1|p" |
    grep -v '^node_modules/.*/node_modules/' >"$work/production" || true  # a nested package comes with its parent
  [ -s "$work/production" ] || die "npm ls found no production packages in $src: run 'npm ci' first"
  (cd "$real" && xargs -a "$work/production" cp -a --parents -t "$out")
  # Offline: removes what the copy brought along that production does not need (nested dev-only packages, .bin).
  (cd "$out" && npm prune --omit=dev --ignore-scripts --offline --no-audit --no-fund --loglevel=error >/dev/null)
  if [ -n "${cross_arch:-}" ]; then cross_native "$src" "$out" >&2; fi
  # better-sqlite3 loads build/Release/better_sqlite3.node and nothing else: its sources and objects are 26 MB.
  bs="$out/node_modules/better-sqlite3"
  if [ -f "$bs/build/Release/better_sqlite3.node" ]; then
    mv "$bs/build/Release/better_sqlite3.node" "$work/better_sqlite3.node"
    rm -rf "$bs/build" "$bs/deps" "$bs/src"
    mkdir -p "$bs/build/Release"
    mv "$work/better_sqlite3.node" "$bs/build/Release/"
  fi
  commit="$(git -C "$src" rev-parse --short=12 HEAD 2>/dev/null || echo nogit)"
  if [ "$commit" != nogit ] && [ -n "$(git -C "$src" status --porcelain --untracked-files=no 2>/dev/null)" ]; then commit="$commit-dirty"; fi
  "$node" "$out/dist/src/release/main.js" manifest --commit "$commit" || die "cannot pack $src (above)"
}

# --pack: the checkout $1 into DIR $2, named after its manifest.
pack() {
  local file
  mkdir -p "$2"
  file="$(stage_from_checkout "$1" "$work/labgate" "$(command -v node)")"
  if [ -n "$cross_arch" ] && [ "$(node "$work/labgate/dist/src/release/main.js" field arch)" != "$cross_arch" ]; then
    die "asked for $cross_arch, but the native files are for $(node "$work/labgate/dist/src/release/main.js" field arch); nothing was packed"
  fi
  tar -C "$work" -czf "$2/$file" labgate
  log "packed $(du -h "$2/$file" | cut -f1) into $2/$file"
}

# The tree to install from --source: a packed tarball, a packed tree (has labgate-release.json), or a checkout.
source_tree() {
  local arg="$1" found
  if [ -f "$arg" ]; then
    mkdir -p "$work/unpacked"
    tar -C "$work/unpacked" -xf "$arg" || die "cannot unpack $arg"
    found="$(find "$work/unpacked" -maxdepth 2 -name labgate-release.json -print -quit)"
    if [ -z "$found" ]; then
      if [ -n "$(find "$work/unpacked" -maxdepth 3 -path '*/bin/labgate.js' -print -quit)" ]; then
        die "$arg has no labgate-release.json: it was packed by an older installer; pack it again with this one's --pack"
      fi
      die "$arg is not a labgate tarball (made with install.sh --pack)"
    fi
    dirname "$found"
  elif [ -f "$arg/labgate-release.json" ]; then
    (cd "$arg" && pwd -P)
  elif [ -d "$arg" ]; then
    stage_from_checkout "$(cd "$arg" && pwd)" "$work/labgate" "$node_bin" >/dev/null
    echo "$work/labgate"
  else
    die "no such source: $arg"
  fi
}

# Copies the tree into releases/$2 (read-only, root-owned); sets placed=1 when it was not there already. A release
# never changes in place: the same name with other content replaces an old one that is neither current nor
# previous, and is refused otherwise.
place_release() {
  local src="$1" name="$2" dest="$opt/releases/$2" incoming="$opt/releases/.incoming-$2"
  mkdir -p "$opt/releases"
  if [ -d "$dest" ]; then
    if diff -rq --no-dereference "$src" "$dest" >/dev/null 2>&1; then log "releases/$name is already in place"; placed=0; return; fi
    case "$name" in "$(release_of current)" | "$(release_of previous)")
      die "releases/$name is in use and differs from $source_arg: a release never changes in place; pack a new commit" ;;
    esac
  fi
  rm -rf "$incoming"
  cp -a "$src" "$incoming"
  chmod -R u=rwX,go=rX "$incoming"
  if [ "$system" = 1 ]; then chown -R root:root "$incoming"; fi
  rm -rf "$dest"
  mv -T "$incoming" "$dest"
  touch "$dest"
  placed=1
  log "placed releases/$name"
}

# An install from before releases existed has the app itself in /opt/labgate. Its files move into
# releases/<version>-flat (kept, as previous, for a person to recover from; it has no smoke test, so install.sh
# never switches back to it by itself).
adopt_flat_layout() {
  local v entry
  [ -f "$opt/bin/labgate.js" ] || return 0
  v="$("$node_bin" -p "require('$opt/package.json').version" 2>/dev/null || echo unknown)"
  mkdir -p "$opt/releases/$v-flat"
  for entry in bin dist node_modules config systemd package.json package-lock.json README.md docs; do
    if [ -e "$opt/$entry" ]; then mv "$opt/$entry" "$opt/releases/$v-flat/"; fi
  done
  relink current "$v-flat"
  log "moved the single-tree install ($v) to releases/$v-flat"
}

# --list: the releases, newest first.
list_releases() {
  local cur prev name mark
  [ -d "$opt/releases" ] || { log "no releases in $opt"; return 0; }
  cur="$(release_of current)"; prev="$(release_of previous)"
  for name in $(ls -1t "$opt/releases"); do
    mark=""
    [ "$name" = "$cur" ] && mark=" (current)"
    [ "$name" = "$prev" ] && mark=" (previous)"
    echo "$name$mark"
  done
}
