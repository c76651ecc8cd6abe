#!/usr/bin/env bash
# Enforces the import direction of STYLE.md: structs <- state <- nomad <- command/agent;
# acl imports nothing of ours; the CLI (command/) never imports state or the server; the
# scheduler is pure (structs only); the client reaches the servers through an interface and
# imports structs and its drivers only. Then checks that the nomad binary links no test code.
set -euo pipefail
mod=$(go list -m)
bad=$(go list -f '{{.ImportPath}} {{join .Imports " "}}' ./... | awk -v m="$mod" '
  { pkg=$1; rel=pkg; sub("^" m "/?", "", rel)
    for (i = 2; i <= NF; i++) {
      imp=$i; if (index(imp, m "/") != 1) continue
      t=imp; sub("^" m "/", "", t)
      if (rel ~ /^structs/ && t !~ /^structs/) print rel " imports " t
      if (rel ~ /^acl/ && t !~ /^acl/) print rel " imports " t
      if (rel ~ /^state/ && t ~ /^(nomad|command|client|scheduler)/) print rel " imports " t
      # raftutil holds the offline log tools that both the server (verifying its log at start)
      # and `nomad operator raft logs|skip|truncate` (on the data dir of a stopped server, with no
      # server to talk HTTP to) use; it lives outside nomad/ and may import only structs, so
      # the CLI still imports no server code and the rule below has no exception.
      if (rel ~ /^command/ && rel !~ /^command\/agent/ && t ~ /^(state|nomad)(\/|$)/) print rel " imports " t
      if (rel ~ /^raftutil/ && t !~ /^(structs|raftutil)(\/|$)/) print rel " imports " t
      if (rel ~ /^jobspec/ && t !~ /^jobspec/) print rel " imports " t
      if (rel ~ /^scheduler/ && t !~ /^(scheduler|structs)(\/|$)/) print rel " imports " t
      if (rel ~ /^client/ && t !~ /^(client|structs)(\/|$)/) print rel " imports " t
    } }')
failed=0
if [ -n "$bad" ]; then
  echo "imports against the house direction:"; echo "$bad"; failed=1
else
  echo "import direction ok"
fi

# The nomad binary must not link test code: test helpers live in test-only packages
# (nomad/nomadtest, command/agent/agenttest, ...) and reach package internals through
# harness files that take a small interface instead of testing.TB. The one exception is
# github.com/hashicorp/raft, whose testing.go (in-memory cluster helpers) carries no build tag,
# so importing raft links the testing package; nothing else may.
allowed_testing_importers=" github.com/hashicorp/raft "
graph=$(go list -deps -f '{{.ImportPath}} {{join .Imports " "}}' .)
linked=$(awk -v allowed="$allowed_testing_importers" '
  { for (i = 2; i <= NF; i++) {
      imp=$i
      if (imp == "testing" && index(allowed, " " $1 " ") == 0) print $1 " " imp
      if (imp == "net/http/httptest" || imp ~ /^github\.com\/shoenig\/test(\/|$)/) print $1 " " imp
    } }' <<<"$graph" | grep -v '^github\.com/shoenig/test' || true)
if [ -n "$linked" ]; then
  echo "the nomad binary links test code (importer, test package, and the import path from main):"
  while read -r importer testpkg; do
    # A shortest import path from the main package to the importer, to show where to cut.
    path=$(awk -v goal="$importer" '
      NR == 1 { root=$1 }
      { deps[$1]=""; for (i = 2; i <= NF; i++) deps[$1]=deps[$1] " " $i }
      END {
        queue[0]=root; seen[root]=1; head=0; tail=1
        while (head < tail) {
          cur=queue[head++]
          if (cur == goal) break
          n=split(deps[cur], next_, " ")
          for (i = 1; i <= n; i++) if (!(next_[i] in seen) && (next_[i] in deps)) {
            seen[next_[i]]=1; parent[next_[i]]=cur; queue[tail++]=next_[i] }
        }
        out=goal; for (p=goal; p in parent; p=parent[p]) out=parent[p] " -> " out
        print out
      }' <<<"$(tac <<<"$graph")")
    echo "  $importer imports $testpkg: $path"
  done <<<"$linked"
  failed=1
else
  echo "the nomad binary links no test code"
fi
exit "$failed"
