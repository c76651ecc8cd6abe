#!/usr/bin/env bash
# Runs one `go test -fuzz` target. Go 1.26's fuzz coordinator can report a bare "context
# deadline exceeded" when -fuzztime ends while a worker is mid-call (golang/go#75804, fixed in
# Go 1.27): no input failed, nothing was written. Such a run is retried once. Any other
# failure — a failing input written to testdata/fuzz, a panic, a test error — fails at once.
# Usage: scripts/fuzz.sh PACKAGE FUZZ_REGEXP FUZZTIME [extra go test flags...]
set -uo pipefail
pkg=$1 target=$2 fuzztime=$3
shift 3
for attempt in 1 2; do
	log=$(mktemp)
	go test -run '^$' -fuzz "$target" -fuzztime "$fuzztime" "$@" "$pkg" 2>&1 | tee "$log"
	status=${PIPESTATUS[0]}
	if [ "$status" -eq 0 ]; then
		rm -f "$log"
		exit 0
	fi
	if grep -q 'context deadline exceeded' "$log" &&
		! grep -qE 'Failing input written|panic:|_test\.go:[0-9]+:' "$log" &&
		[ "$attempt" -eq 1 ]; then
		echo "fuzz.sh: $target ended with the coordinator's deadline race and no failing input (golang/go#75804); running it once more" >&2
		rm -f "$log"
		continue
	fi
	rm -f "$log"
	exit "$status"
done
