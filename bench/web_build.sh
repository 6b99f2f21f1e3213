#!/usr/bin/env bash
# Builds Kiln's browser pages (web/) for wasm32 into web/pkg, as bench/web_check.sh serves them:
# the module with Debian's Rust for the web (its own rustc and std), optimized by binaryen's
# wasm-opt where it is installed (KILN_WEB_OPTIMIZE=0 skips it: the page is then about twice the
# size and works the same), then wasm-bindgen's JavaScript glue. Installs wasm-bindgen-cli (the
# lockfile's version, resolved afresh: its own lockfile wants crates some registries lack) under
# target/web/tools on first use.
#
# KILN_WEB_PROFILE picks the cargo profile: `release` (the default, what visitors get) or
# `web-check` (what CI builds: the workspace Cargo.toml says how it differs and why).
#
# Needs Debian's rustc-web cargo-web rust-web-src lld-19 (docs/development.md says why).
# usage: bench/web_build.sh
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
target=$root/target/web
profile=${KILN_WEB_PROFILE:-release}
bindgen_version=$(grep -A1 '^name = "wasm-bindgen"$' Cargo.lock | sed -n 's/^version = "\(.*\)"/\1/p')

# Beside the module's build rather than after it: both download their crates at the start, and
# the install's compile fills what the module's build leaves idle.
bindgen=$target/tools/bin/wasm-bindgen
installing=
if ! "$bindgen" --version 2>/dev/null | grep -q "$bindgen_version"; then
  # At opt-level 1 its compile takes 226 s of CPU instead of 260, and it still handles the
  # 197 MB module in 21 s rather than 25 (measured).
  CARGO_PROFILE_RELEASE_OPT_LEVEL=1 \
    cargo install --quiet wasm-bindgen-cli --version "$bindgen_version" --root "$target/tools" &
  installing=$!
fi

started=$(date +%s)
RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR=$target \
  CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER=wasm-ld-19 \
  /usr/bin/cargo build --locked --profile "$profile" -p kiln-web --target wasm32-unknown-unknown \
  -Zbuild-std=std,panic_abort
echo "wasm build ($profile): $(( $(date +%s) - started )) s"
if [ -n "$installing" ]; then
  wait "$installing"
fi

module=$target/wasm32-unknown-unknown/$profile/kiln_web.wasm
# Binaryen's optimizer where it is installed (Debian's binaryen): the module shrinks to about
# 45 % in about 2 minutes. Before wasm-bindgen, whose externref table binaryen 108 would break
# after it. The features are those Rust's wasm32 target turns on.
if [ "${KILN_WEB_OPTIMIZE:-1}" != 0 ] && command -v wasm-opt >/dev/null 2>&1; then
  started=$(date +%s)
  wasm-opt -Os --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals --enable-reference-types --enable-multivalue \
    "$module" -o "$target/kiln_web.opt.wasm"
  echo "wasm-opt: $(du -b "$module" | cut -f1) bytes in, $(( $(date +%s) - started )) s"
  module=$target/kiln_web.opt.wasm
fi
rm -rf web/pkg
"$bindgen" --target web --no-typescript --out-dir web/pkg --out-name kiln_web "$module"
echo "page: $(du -b web/pkg/kiln_web_bg.wasm | cut -f1) bytes of wasm ($(gzip -c web/pkg/kiln_web_bg.wasm | wc -c) gzipped), $(du -b web/pkg/kiln_web.js | cut -f1) bytes of JavaScript"

