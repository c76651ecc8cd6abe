#!/usr/bin/env bash
# Enforces the import direction of STYLE.md: structs <- state <- nomad <- command/agent;
# acl imports nothing of ours; the CLI (command/) never imports state or the server; the
# scheduler is pure (structs only); the client reaches the servers through an interface and
# imports structs and its drivers only.
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
if [ -n "$bad" ]; then
  echo "imports against the house direction:"; echo "$bad"; exit 1
fi
echo "import direction ok"
