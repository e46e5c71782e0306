#!/usr/bin/env bash
# Prepares the Debian known-item retrieval evaluation (./maxsim4j bench retrieval) reproducibly:
#   1. fetches Debian bookworm main's English descriptions (apt-get -o Acquire::Languages=en update, as root)
#   2. copies the lists into CACHE (a later plain `apt-get update` may delete the Translation-en list)
#   3. checks that the lists give the pinned set of packages (or, with --repin, rewrites the pinned list)
#   4. encodes the first N packages with the bundled MiniLM token encoder into CACHE (resumable; nice 19)
# usage: scripts/retrieval-data.sh [--cache DIR] [--encode N] [--no-fetch] [--repin]
# CACHE defaults to the bench's own --cache (maxsim4j/eval in the user's cache folder), so run it as the user who
# runs the bench: with --no-fetch after `apt-get -o Acquire::Languages=en update` as root, step 2 copies apt's lists.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache= encode=all fetch=1 repin=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --cache) cache=$2; shift 2 ;;
    --encode) encode=$2; shift 2 ;;
    --no-fetch) fetch=0; shift ;;
    --repin) repin=1; shift ;;
    *) echo "retrieval-data.sh: unknown option '$1'; expected --cache DIR, --encode N, --no-fetch or --repin" >&2
       exit 2 ;;
  esac
done
if [[ -z $cache ]]; then
  # the bench's own default --cache: maxsim4j/eval in the user's cache folder (XDG_CACHE_HOME where absolute)
  xdg=${XDG_CACHE_HOME:-}
  [[ $xdg == /* ]] || xdg=${HOME:?retrieval-data.sh: no HOME to keep the cache in; pass --cache DIR}/.cache
  cache=$xdg/maxsim4j/eval
fi
lists=/var/lib/apt/lists
translations=deb.debian.org_debian_dists_bookworm_main_i18n_Translation-en.lz4
packages=deb.debian.org_debian_dists_bookworm_main_binary-amd64_Packages.lz4
mkdir -p "$cache"
if [[ $fetch == 1 ]]; then
  if [[ $(id -u) != 0 ]]; then
    echo "retrieval-data.sh: apt-get update needs root; run it as root, then this script with --no-fetch" >&2
    exit 2
  fi
  apt-get -o Acquire::Languages=en update >/dev/null
fi
# copied (apt's lists are readable by any user, and a later apt-get update may delete the Translation-en list)
for f in "$translations" "$packages" deb.debian.org_debian_dists_bookworm_InRelease; do
  if [[ $fetch == 1 || ! -f $cache/$f ]] && [[ -f $lists/$f ]]; then
    cp -p "$lists/$f" "$cache/"
  fi
done
for f in "$translations" "$packages"; do
  [[ -f $cache/$f ]] || { echo "retrieval-data.sh: $cache/$f is missing, and not in $lists; run" \
    "'apt-get -o Acquire::Languages=en update' as root, or this script as root without --no-fetch" >&2; exit 2; }
done
(cd "$cache" && sha256sum "$translations" "$packages")

pinned_gz=$root/maxsim4j-bench/src/main/resources/dev/maxsim4j/bench/retrieval/debian-known-items.txt.gz
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pinned=$tmp/pinned.txt
gzip -dc "$pinned_gz" > "$pinned"
"$root/maxsim4j" bench retrieval --prepare "$tmp/built.txt" --translations "$cache/$translations" \
  --packages "$cache/$packages"
if [[ $repin == 1 ]]; then
  gzip -9 -n -c "$tmp/built.txt" > "$pinned_gz"
  echo "pinned list rewritten: $pinned_gz (rebuild the bench before encoding)"
  exit 0
elif ! cmp -s "$tmp/built.txt" "$pinned"; then
  echo "note: these lists give a different set than the pinned one ($(wc -l <"$tmp/built.txt") packages against" \
       "$(wc -l <"$pinned")); the evaluation uses the pinned packages, found by their description md5" >&2
fi

[[ $encode == all ]] && encode=$(wc -l <"$pinned")
nice -n 19 "$root/maxsim4j" bench retrieval --encode "$encode" --translations "$cache/$translations" --cache "$cache"
