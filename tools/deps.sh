#!/usr/bin/env bash
# deps.sh PACKAGE... - installs the Debian packages that are missing.
# Idempotent: does nothing when all are present. Uses sudo when not root.
set -euo pipefail
missing=()
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
    missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "aifsim needs these packages (Debian names): ${missing[*]}" >&2
  echo "This system has no apt-get: install their equivalents, then retry." >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || {
    echo "missing packages: ${missing[*]}; run as root or install sudo" >&2
    exit 1
  }
  sudo=sudo
fi
echo "Installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
