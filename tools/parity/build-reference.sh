#!/usr/bin/env bash
# Builds the reference `allium` CLI (juxt/allium-tools, crates/allium) offline, from a checkout of its source, with
# the Rust crates Debian packages (no other registry needed):
#
#   apt-get install -y librust-serde-dev librust-serde-derive-dev librust-serde-json-dev librust-regex-dev
#   tools/parity/build-reference.sh <allium-tools checkout> [/work/bin/allium-ref]
#
# Two changes to a copy of the source, both in the build's manifests only: the wasm crate is left out of the
# workspace (its wasm-bindgen is not packaged), and `regex-lite` is served by the `regex` crate under the same name
# (one suppression-comment pattern uses it; `\s` there is Unicode-aware in `regex`, ASCII in `regex-lite`).
# Check the result against the stored answers: `ALLIUM_REF=<binary> node … tools/parity/parity.ts <fixtures>`.
set -euo pipefail
src=${1:?usage: build-reference.sh <allium-tools checkout> [output binary]}
out=${2:-/work/bin/allium-ref}
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
cp -r "$src/Cargo.toml" "$src/crates" "$build/"
rm -rf "$build/crates/allium-wasm"
sed -i 's/, "crates\/allium-wasm"//' "$build/Cargo.toml"
sed -i 's/^regex-lite = .*/regex-lite = { package = "regex", version = "1", default-features = false, features = ["std", "unicode-perl"] }/' \
  "$build/crates/allium-parser/Cargo.toml"
mkdir -p "$build/.cargo"
cat > "$build/.cargo/config.toml" <<'TOML'
[source.crates-io]
replace-with = "debian"
[source.debian]
directory = "/usr/share/cargo/registry"
[net]
offline = true
TOML
(cd "$build" && cargo build --release -p allium-cli)
mkdir -p "$(dirname "$out")"
cp "$build/target/release/allium" "$out"
"$out" --version
