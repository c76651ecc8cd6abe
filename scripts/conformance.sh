#!/usr/bin/env bash
# Runs the official Go client's own test suite (github.com/hashicorp/nomad/api, at the version our
# go.mod names) unmodified against bin/nomad, and compares the outcome with
# conformance/known-failures.txt. The harness in that suite starts `nomad` from PATH, so putting
# bin/ first on PATH is all it takes to point it at us.
#
# Fails when a test fails that is not listed, and when a listed test now passes: the list may
# only shrink. Writes one line per top-level test ("PASS name", "FAIL name", "SKIP name") to
# $CONFORMANCE_RESULTS (default conformance/results.txt, not checked in), and go test's JSON
# output beside it (results.json).
#
# Knobs: CONFORMANCE_TIMEOUT (go test -timeout, default 20m), CONFORMANCE_PARALLEL (-parallel,
# default 4), CONFORMANCE_RUN (a -run pattern, for working on a few tests; the list check is then
# limited to the tests that ran).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
known="$root/conformance/known-failures.txt"
results=${CONFORMANCE_RESULTS:-$root/conformance/results.txt}
timeout=${CONFORMANCE_TIMEOUT:-20m}
parallel=${CONFORMANCE_PARALLEL:-4}
run=${CONFORMANCE_RUN:-}

src=$(go list -m -f '{{.Dir}}' github.com/hashicorp/nomad/api)
version=$(go list -m -f '{{.Version}}' github.com/hashicorp/nomad/api)
[ -d "$src" ] || { go mod download github.com/hashicorp/nomad/api; src=$(go list -m -f '{{.Dir}}' github.com/hashicorp/nomad/api); }

work=$(mktemp -d "${TMPDIR:-/tmp}/nomad-conformance.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
# The module cache is read-only; the suite writes nothing into its own tree, but go needs to
# create go.sum entries and test caches, so work on a writable copy.
cp -r "$src" "$work/api"
chmod -R u+w "$work/api"

make -s build
export PATH="$root/bin:$PATH"
echo "conformance: api $version against $(command -v nomad) ($(nomad -version | head -1))"

cd "$work/api"
GOFLAGS=-mod=mod go mod download
args=(-json -count=1 -timeout "$timeout" -parallel "$parallel")
[ -n "$run" ] && args+=(-run "$run")
start=$(date +%s)
# go test exits non-zero on any failure; the verdict is ours to make from the list.
GOFLAGS=-mod=mod go test "${args[@]}" ./... >"$work/test.json" 2>"$work/test.stderr" || true
end=$(date +%s)
# Kept next to the results (not checked in) so a failure can be read without a rerun.
cp "$work/test.json" "${results%.txt}.json"

# Top-level tests only: a subtest's name carries a slash.
jq -r 'select(.Test != null and (.Test | contains("/") | not) and
              (.Action == "pass" or .Action == "fail" or .Action == "skip"))
       | "\(.Action | ascii_upcase) \(.Test)"' "$work/test.json" | sort -k2 -u >"$results"

# A test that started but never reported (the binary panicked or timed out) counts as a failure.
jq -r 'select(.Test != null and (.Test | contains("/") | not) and .Action == "run") | .Test' \
  "$work/test.json" | sort -u >"$work/started"
awk '{print $2}' "$results" | sort -u >"$work/finished"
comm -23 "$work/started" "$work/finished" | sed 's/^/FAIL /' >>"$results"
sort -k2 -o "$results" "$results"

pass=$(grep -c '^PASS ' "$results" || true)
fail=$(grep -c '^FAIL ' "$results" || true)
skip=$(grep -c '^SKIP ' "$results" || true)
total=$((pass + fail + skip))
echo "conformance: $pass of $total top-level tests pass ($fail fail, $skip skip) in $((end - start))s; results in $results"
# Build errors and panics outside a test land on stderr.
if [ -s "$work/test.stderr" ]; then
  echo "conformance: go test stderr (first 20 lines):" >&2
  sed -n '1,20p' "$work/test.stderr" >&2
fi

# known-failures.txt: "TestName  reason", '#' comments and blank lines ignored.
# A reason that starts with "flaky:" marks a test that passes only sometimes (timing of the
# upstream test itself): either outcome is accepted for it.
{ grep -v '^\s*\(#\|$\)' "$known" || true; } | awk '{print $1}' | sort -u >"$work/known"
{ grep -v '^\s*\(#\|$\)' "$known" || true; } | awk '$2 ~ /^flaky:/ {print $1}' | sort -u >"$work/flaky"
{ grep '^FAIL ' "$results" || true; } | awk '{print $2}' | sort -u >"$work/failed"
{ grep '^PASS ' "$results" || true; } | awk '{print $2}' | sort -u >"$work/passed"

status=0
unexpected=$(comm -23 "$work/failed" "$work/known")
if [ -n "$unexpected" ]; then
  echo "conformance: failures not in conformance/known-failures.txt:"
  echo "$unexpected" | sed 's/^/  /'
  for t in $unexpected; do
    echo "--- output of $t (last 15 lines):"
    jq -r --arg t "$t" 'select(.Test == $t and .Action == "output") | .Output' "$work/test.json" | tail -15
  done
  status=1
fi
fixed=$(comm -12 "$work/passed" "$work/known" | comm -23 - "$work/flaky")
if [ -n "$fixed" ]; then
  echo "conformance: listed in conformance/known-failures.txt but now pass (remove them):"
  echo "$fixed" | sed 's/^/  /'
  status=1
fi
[ $status -eq 0 ] && echo "conformance: ok"
exit $status
