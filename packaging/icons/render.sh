#!/bin/sh
# Renders every raster icon from kiln.svg; rerun after changing it, and commit what it writes.
# Needs rsvg-convert (Debian: librsvg2-bin) and ImageMagick's convert.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

png() { rsvg-convert -w "$1" -h "$1" "$here/kiln.svg" -o "$2"; }

# The window's own icon (include_bytes! in app/src/gui/mod.rs).
png 256 "$root/assets/icon.png"
# The hicolor theme sizes the Linux package installs.
for size in 48 64 128 256 512; do png "$size" "$root/packaging/linux/icons/kiln-$size.png"; done
# macOS builds its .icns from this one (cargo-packager scales it down for the smaller slots).
png 1024 "$here/kiln-1024.png"
# Windows: one .ico with the sizes Explorer, the Start menu and the taskbar ask for.
for size in 16 24 32 48 64 128 256; do png "$size" "$tmp/$size.png"; done
convert "$tmp/16.png" "$tmp/24.png" "$tmp/32.png" "$tmp/48.png" "$tmp/64.png" "$tmp/128.png" \
    "$tmp/256.png" "$here/kiln.ico"
