#!/usr/bin/env bash
# Runs the official Go client's own test suite (github.com/hashicorp/nomad/api, at the version our
# go.mod names) unmodified against bin/nomad, and compares the outcome with
# conformance/known-failures.txt. The harness in that suite starts `nomad` from PATH, so putting
# bin/ first on PATH is all it takes to point it at us.
#
# Fails when a test fails that is not listed, and when a listed test now passes: the list may
# only shrink. A test that fails and is not listed is run once more on its own (some of the
# suite's tests time themselves against mocks and fail on a loaded machine); one that passes the
# second time counts as passed and is reported as flaky, one that fails again is a failure.
# Flaky tests are never listed. Writes one line per top-level test ("PASS name", "FAIL name",
# "SKIP name", "FLAKY name" for a pass on the retry) to $CONFORMANCE_RESULTS (default
# conformance/results.txt, not checked in), and go test's JSON output beside it (results.json,
# and results-retry.json for the retry).
#
# Knobs: CONFORMANCE_TIMEOUT (go test -timeout, default 20m), CONFORMANCE_PARALLEL (-parallel,
# default 4), CONFORMANCE_RUN (a -run pattern, for working on a few tests; the list check is then
# limited to the tests that ran), CONFORMANCE_RETRY_MAX (default 10: more unlisted failures than
# this are not retried, since that many is a broken build or agent, not a flaky test).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
known="$root/conformance/known-failures.txt"
results=${CONFORMANCE_RESULTS:-$root/conformance/results.txt}
timeout=${CONFORMANCE_TIMEOUT:-20m}
parallel=${CONFORMANCE_PARALLEL:-4}
run=${CONFORMANCE_RUN:-}
retry_max=${CONFORMANCE_RETRY_MAX:-10}

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

# run_suite PATTERN OUT: one go test run over the suite (PATTERN empty: every test); go test's
# JSON to OUT.json, its stderr to OUT.stderr, one "PASS|FAIL|SKIP name" line per top-level test
# to OUT.results. A test that started but never reported (the binary panicked or timed out)
# counts as a failure.
run_suite() {
  local pattern=$1 out=$2
  local args=(-json -count=1 -timeout "$timeout" -parallel "$parallel")
  [ -n "$pattern" ] && args+=(-run "$pattern")
  # go test exits non-zero on any failure; the verdict is ours to make from the list.
  GOFLAGS=-mod=mod go test "${args[@]}" ./... >"$out.json" 2>"$out.stderr" || true
  # Top-level tests only: a subtest's name carries a slash.
  jq -r 'select(.Test != null and (.Test | contains("/") | not) and
                (.Action == "pass" or .Action == "fail" or .Action == "skip"))
         | "\(.Action | ascii_upcase) \(.Test)"' "$out.json" | sort -k2 -u >"$out.results"
  jq -r 'select(.Test != null and (.Test | contains("/") | not) and .Action == "run") | .Test' \
    "$out.json" | sort -u >"$out.started"
  awk '{print $2}' "$out.results" | sort -u >"$out.finished"
  comm -23 "$out.started" "$out.finished" | sed 's/^/FAIL /' >>"$out.results"
  sort -k2 -o "$out.results" "$out.results"
}

# known-failures.txt: "TestName  reason", '#' comments and blank lines ignored.
{ grep -v '^\s*\(#\|$\)' "$known" || true; } | awk '{print $1}' | sort -u >"$work/known"

start=$(date +%s)
run_suite "$run" "$work/first"
# Kept next to the results (not checked in) so a failure can be read without a rerun.
cp "$work/first.json" "${results%.txt}.json"
rm -f "${results%.txt}-retry.json"
cp "$work/first.results" "$results"

# The retry: unlisted failures only (a listed one is expected to fail), each once, together in
# one run anchored on their exact names.
{ grep '^FAIL ' "$work/first.results" || true; } | awk '{print $2}' | sort -u | comm -23 - "$work/known" >"$work/retry"
retried=$(wc -l <"$work/retry")
flaky=""
if [ "$retried" -gt 0 ] && [ "$retried" -le "$retry_max" ]; then
  echo "conformance: retrying $retried failed test(s) once: $(paste -sd' ' "$work/retry")"
  run_suite "^($(paste -sd'|' "$work/retry"))\$" "$work/retry-run"
  cp "$work/retry-run.json" "${results%.txt}-retry.json"
  flaky=$({ grep '^PASS ' "$work/retry-run.results" || true; } | awk '{print $2}' | sort -u | comm -12 - "$work/retry")
  for t in $flaky; do
    sed -i "s/^FAIL $t\$/FLAKY $t/" "$results"
  done
elif [ "$retried" -gt "$retry_max" ]; then
  echo "conformance: $retried unlisted failures, more than CONFORMANCE_RETRY_MAX=$retry_max: not retried"
fi
end=$(date +%s)

pass=$(grep -c '^PASS ' "$results" || true)
nflaky=$(grep -c '^FLAKY ' "$results" || true)
fail=$(grep -c '^FAIL ' "$results" || true)
skip=$(grep -c '^SKIP ' "$results" || true)
total=$((pass + nflaky + fail + skip))
echo "conformance: $((pass + nflaky)) of $total top-level tests pass ($fail fail, $skip skip, $nflaky flaky) in $((end - start))s; results in $results"
if [ -n "$flaky" ]; then
  echo "conformance: flaky (failed, then passed on the retry):"
  echo "$flaky" | sed 's/^/  /'
  for t in $flaky; do
    echo "--- output of $t's first, failed run (last 15 lines):"
    jq -r --arg t "$t" 'select(.Test == $t and .Action == "output") | .Output' "$work/first.json" | tail -15
  done
fi
# Build errors and panics outside a test land on stderr.
for out in first retry-run; do
  if [ -s "$work/$out.stderr" ]; then
    echo "conformance: go test stderr of the $out run (first 20 lines):" >&2
    sed -n '1,20p' "$work/$out.stderr" >&2
  fi
done

{ grep '^FAIL ' "$results" || true; } | awk '{print $2}' | sort -u >"$work/failed"
{ grep '^\(PASS\|FLAKY\) ' "$results" || true; } | awk '{print $2}' | sort -u >"$work/passed"

status=0
unexpected=$(comm -23 "$work/failed" "$work/known")
if [ -n "$unexpected" ]; then
  echo "conformance: failures not in conformance/known-failures.txt:"
  echo "$unexpected" | sed 's/^/  /'
  for t in $unexpected; do
    # The retry's output when there was one: it is the run that decided.
    json="$work/first.json"
    grep -qx "$t" "$work/retry" && [ -s "$work/retry-run.json" ] && json="$work/retry-run.json"
    echo "--- output of $t (last 15 lines):"
    jq -r --arg t "$t" 'select(.Test == $t and .Action == "output") | .Output' "$json" | tail -15
  done
  status=1
fi
fixed=$(comm -12 "$work/passed" "$work/known")
if [ -n "$fixed" ]; then
  echo "conformance: listed in conformance/known-failures.txt but now pass (remove them):"
  echo "$fixed" | sed 's/^/  /'
  status=1
fi
[ $status -eq 0 ] && echo "conformance: ok"
exit $status
