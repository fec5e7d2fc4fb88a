#!/usr/bin/env bash
# Puts torchvision's reference training scripts (references/classification: train.py,
# presets.py, transforms.py, sampler.py, utils.py), from the Debian source package of the
# installed torchvision, in /var/cache/stoker/torchvision-references/<version>/classification,
# and prints that folder. The user guide's worked example is a diff against them, and
# tests/python/test_reference_script.py applies it and runs the script (1 process and 2 ranks).
# Idempotent; the source package comes from Debian's archive (deb-src of the system's suite,
# through a private apt list: the system's sources are left as they are).
#   scripts/torchvision-references.sh          fetch if missing, print the folder
#   scripts/torchvision-references.sh --path   print the folder only (no fetch)
set -euo pipefail

version=$(dpkg-query -W -f='${Version}' python3-torchvision 2>/dev/null || true)
[ -n "$version" ] || { echo "torchvision-references: python3-torchvision is not installed (scripts/install-deps.sh)" >&2; exit 1; }
cache=${STOKER_REFERENCES_CACHE:-/var/cache/stoker/torchvision-references}
dir=$cache/$version/classification
if [ "${1:-}" = --path ] || [ -f "$dir/train.py" ]; then echo "$dir"; exit 0; fi

. "$(dirname "$0")/as-root.sh"
as_root torchvision-references "it writes /var/cache/stoker"
suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/src"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" \
  >"$work/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::State::Lists=$work/lists" -o APT::Sandbox::User=root)
log=$work/log
if ! { apt-get "${apt_opts[@]}" update &&
       (cd "$work/src" && apt-get "${apt_opts[@]}" source --tar-only --download-only \
          "pytorch-vision=$version"); } >"$log" 2>&1; then
  tail -n 20 "$log" >&2
  echo "torchvision-references: could not fetch the source of pytorch-vision $version from Debian's archive" >&2
  exit 1
fi
# references/ is in the upstream tarball; the Debian tarball (its packaging) is not needed.
tar -xzf "$work"/src/pytorch-vision_*.orig.tar.gz -C "$work/src" --wildcards '*/references/classification'
mkdir -p "$cache/$version"
rm -rf "$dir.new"
cp -r "$work"/src/*/references/classification "$dir.new"
mv "$dir.new" "$dir"
echo "$dir"
