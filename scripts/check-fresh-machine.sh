#!/usr/bin/env bash
# Runs the README's two commands as a new user would: as root on a minimal Debian 12 root built
# from Debian's archive (debootstrap), in the committed tree exported without .git, once with the
# host's CUDA bound in at /usr/local/cuda and once without. On success it records the hash of the
# install and build files in .ci/fresh-machine.sha256; .ci/run repeats the check when they change.
#
#   scripts/check-fresh-machine.sh [--cuda | --no-cuda] [--stamp-only]
#
# Needs root, debootstrap, unshare and the Debian archive. The first run builds the Debian root
# once into CAPSIM_FRESH_CACHE (default /var/cache/capsim-fresh-machine); every check starts from
# a new copy of it. Compiler outputs are shared through ccache (CAPSIM_FRESH_CCACHE=0 turns that
# off): a missing package still fails, because ccache never supplies a header or a library.
set -euo pipefail
cd "$(dirname "$0")/.."
source_dir=$(pwd -P)
cache=${CAPSIM_FRESH_CACHE:-/var/cache/capsim-fresh-machine}
modes=(cuda no-cuda)
stamp_only=false
for arg in "$@"; do
  case "$arg" in
    --cuda) modes=(cuda) ;;
    --no-cuda) modes=(no-cuda) ;;
    --stamp-only) stamp_only=true ;;
    *) echo "usage: $0 [--cuda | --no-cuda] [--stamp-only]" >&2; exit 2 ;;
  esac
done

# The files whose change can break an install or a build; their hash is the stamp.
install_build_files_hash() {
  { printf '%s\n' scripts/install-deps.sh scripts/build.sh scripts/test.sh .ci/run
    find . -path './build*' -prune -o -path './.git' -prune -o \
         \( -name CMakeLists.txt -o -name '*.cmake' -o -name '*.cmake.in' \) -type f -print \
      | sed 's#^\./##'; } | LC_ALL=C sort -u | xargs sha256sum | sha256sum | cut -d' ' -f1
}
if $stamp_only; then
  install_build_files_hash
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "check-fresh-machine: run as root (debootstrap, chroot and mounts need it)" >&2
  exit 1
fi
command -v debootstrap >/dev/null ||
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >&2

base=$cache/bookworm-minbase
if [ ! -x "$base/usr/bin/apt-get" ]; then
  echo "check-fresh-machine: building a Debian 12 root in $base" >&2
  rm -rf "$base.partial"
  mkdir -p "$cache"
  debootstrap --variant=minbase bookworm "$base.partial" http://deb.debian.org/debian >&2
  # The suites of a standard Debian 12 install.
  cat >"$base.partial/etc/apt/sources.list" <<'SOURCES'
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
SOURCES
  mv "$base.partial" "$base"
fi

cuda_dir=$(readlink -f /usr/local/cuda 2>/dev/null || true)
ccache_dir=""
if [ "${CAPSIM_FRESH_CCACHE:-1}" = 1 ] && command -v ccache >/dev/null; then
  ccache_dir=$(ccache -k cache_dir)
  mkdir -p "$ccache_dir"
fi

# Runs one mode in a private mount namespace, so that no mount outlives it.
run_mode() {
  local mode=$1 root=$cache/run-$1 log=$cache/$1.log
  rm -rf "$root"
  cp -a "$base" "$root"
  mkdir -p "$root/src"
  # What is committed, as `git archive` exports it; a tree without .git is copied as it is.
  if [ "$(git -C "$source_dir" rev-parse --show-toplevel 2>/dev/null)" = "$source_dir" ]; then
    git -C "$source_dir" archive HEAD | tar -C "$root/src" -xf -
  else
    tar -C "$source_dir" --exclude='./.git' --exclude='./build*' -cf - . | tar -C "$root/src" -xf -
  fi
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  local cuda_mount=""
  if [ "$mode" = cuda ]; then
    if [ -z "$cuda_dir" ] || [ ! -d "$cuda_dir" ]; then
      echo "check-fresh-machine: no CUDA at /usr/local/cuda to bind in" >&2
      return 1
    fi
    mkdir -p "$root$cuda_dir"
    ln -sfn "$cuda_dir" "$root/usr/local/cuda"
    cuda_mount="mount --bind -o ro '$cuda_dir' '$root$cuda_dir'"
  fi
  local ccache_mount="" ccache_env=""
  if [ -n "$ccache_dir" ]; then
    mkdir -p "$root/var/cache/ccache"
    ccache_mount="mount --bind '$ccache_dir' '$root/var/cache/ccache'"
    ccache_env="CCACHE_DIR=/var/cache/ccache CCACHE_BASEDIR=/src CCACHE_COMPILERCHECK=content"
  fi
  # The README's two commands, verbatim, one after the other on the same machine.
  local commands='cd /src && scripts/install-deps.sh && scripts/build.sh -DCAPSIM_BUILD_TESTS=OFF &&
    build/cli/capsim plan && scripts/test.sh'
  echo "check-fresh-machine: $mode: running the README's commands (log: $log)" >&2
  unshare --mount --propagation private bash -euo pipefail -c "
    mount -t proc proc '$root/proc'
    mount -t sysfs sysfs '$root/sys'
    mount --bind /dev '$root/dev'
    mount -t devpts devpts '$root/dev/pts' -o newinstance,ptmxmode=0666 || true
    mount -t tmpfs tmpfs '$root/dev/shm'
    $cuda_mount
    $ccache_mount
    chroot '$root' /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb CI='${CI:-}' $ccache_env \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin bash -euo pipefail -c '$commands'
  " >"$log" 2>&1
}

status=0
for mode in "${modes[@]}"; do
  start=$SECONDS
  if run_mode "$mode"; then
    echo "check-fresh-machine: $mode: passed in $((SECONDS - start)) s" >&2
    rm -rf "$cache/run-$mode"
  else
    echo "check-fresh-machine: $mode: FAILED after $((SECONDS - start)) s; last lines of $cache/$mode.log:" >&2
    tail -n 30 "$cache/$mode.log" >&2
    status=1
  fi
done
if [ $status -eq 0 ] && [ ${#modes[@]} -eq 2 ]; then
  install_build_files_hash >.ci/fresh-machine.sha256
  echo "check-fresh-machine: stamp written to .ci/fresh-machine.sha256" >&2
fi
exit $status
