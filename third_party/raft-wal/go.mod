module github.com/hashicorp/raft-wal

go 1.18

require (
	github.com/benbjohnson/immutable v0.4.0
	github.com/coreos/etcd v3.3.27+incompatible
	github.com/hashicorp/go-hclog v1.6.3
	github.com/hashicorp/go-metrics v0.7.0
	github.com/hashicorp/raft v1.8.0
	go.etcd.io/bbolt v1.3.6
)
