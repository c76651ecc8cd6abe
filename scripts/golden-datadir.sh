#!/usr/bin/env bash
# Writes the golden data dir of a release (README "Upgrades"): run it with the release's own
# binary, once per release, and commit the result.
#
#   scripts/golden-datadir.sh bin/nomad v0.2.0    # writes testdata/golden/v0.2.0/
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 <release nomad binary> <version, e.g. v0.2.0>" >&2
  exit 2
fi
binary=$(realpath "$1")
out="testdata/golden/$2"
cd "$(dirname "$0")/.."
go run ./e2e/golden/cmd/golden-datadir -binary "$binary" -out "$out"
du -sh "$out"/*
