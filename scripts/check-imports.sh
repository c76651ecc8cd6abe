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
      # The one exception for the CLI: nomad/raftutil, the offline log tools that
      # `nomad operator raft logs|skip|truncate` run on the data dir of a stopped server (there is
      # no server to talk HTTP to). raftutil itself may import only structs, so the CLI still
      # links no server code.
      if (rel ~ /^command/ && rel !~ /^command\/agent/ && t ~ /^(state|nomad)(\/|$)/ && t != "nomad/raftutil") print rel " imports " t
      if (rel ~ /^nomad\/raftutil/ && t !~ /^(structs|nomad\/raftutil)(\/|$)/) print rel " imports " t
      if (rel ~ /^jobspec/ && t !~ /^jobspec/) print rel " imports " t
      if (rel ~ /^scheduler/ && t !~ /^(scheduler|structs)(\/|$)/) print rel " imports " t
      if (rel ~ /^client/ && t !~ /^(client|structs)(\/|$)/) print rel " imports " t
    } }')
if [ -n "$bad" ]; then
  echo "imports against the house direction:"; echo "$bad"; exit 1
fi
echo "import direction ok"
