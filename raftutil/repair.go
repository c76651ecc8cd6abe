package raftutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/nomadfork/nomad/structs"
)

// raftStableKeys are the keys hashicorp/raft keeps in its stable store: the term and vote must
// survive a rewrite, or the server could vote twice in one term.
var raftStableKeys = []string{"CurrentTerm", "LastVoteTerm", "LastVoteCand"}

// Repair is what a rewrite did.
type Repair struct {
	// Backup is where the old WAL directory now is.
	Backup string
	// First and Last are the new log's range (0, 0 when empty).
	First, Last uint64
	// AppliedLowered says the record of the applied index was lowered to the new log's end
	// (its old copy is in the backup directory).
	AppliedLowered bool
}

func copyFile(from, to string) error {
	raw, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, raw, 0o600)
}

// Skip rewrites the log with the entry at index replaced by a Raft no-op, which the FSM never
// sees, and every other entry kept: the one write is lost, everything after it applies. Only a
// damaged command entry can be skipped: an intact one would silently lose a write, and a
// configuration entry holds the cluster's membership. In a cluster it is for an entry every
// server holds damaged (a poison pill), skipped on every server; damage on one server's disk
// is repaired by truncating that server, whose leader then sends the entries again.
func (o *Offline) Skip(index uint64, now time.Time) (*Repair, error) {
	first, last := o.Range()
	if index < first || index > last || first == 0 {
		return nil, fmt.Errorf("index %d is not in the log (it holds %d to %d)", index, first, last)
	}
	st := o.CheckEntry(index)
	if st.Err == nil {
		return nil, fmt.Errorf("entry %d is intact; skipping it would lose a write", index)
	}
	if errors.Is(st.Err, structs.ErrEntryNewerSchema) {
		return nil, fmt.Errorf("entry %d is not damaged but written by a newer release; skipping it would lose a write: %w", index, st.Err)
	}
	if st.LogType == raft.LogConfiguration {
		return nil, fmt.Errorf("entry %d is a configuration entry: it cannot be skipped; truncate the log from it instead", index)
	}
	// The no-op keeps the entry's own term when the entry could be read and the term fits
	// between its neighbours' (a poison-pill entry: then every server that skips it ends up
	// with the same log). Otherwise it takes the previous entry's term (terms never decrease
	// along the log), or for the first entry the next one's.
	var prevTerm, nextTerm uint64
	var l raft.Log
	if index > first && o.GetLog(index-1, &l) == nil {
		prevTerm = l.Term
	}
	if index < last && o.GetLog(index+1, &l) == nil {
		nextTerm = l.Term
	}
	term := prevTerm
	switch {
	case st.Term > 0 && st.Term >= prevTerm && (nextTerm == 0 || st.Term <= nextTerm):
		term = st.Term
	case term == 0:
		term = nextTerm
	}
	if term == 0 {
		return nil, fmt.Errorf("no readable entry next to %d gives its term", index)
	}
	noop := &raft.Log{Index: index, Term: term, Type: raft.LogNoop}
	return o.rewrite(first, last, map[uint64]*raft.Log{index: noop}, now)
}

// Truncate rewrites the log without the entries from index on, so the server starts from its
// newest snapshot plus the intact entries before index. When index is at or below the newest
// snapshot's, the whole log goes (the snapshot holds what those entries did, and the log must
// continue from it). It refuses when nothing would be left to hold the cluster configuration.
func (o *Offline) Truncate(index uint64, now time.Time) (*Repair, error) {
	first, last := o.Range()
	if index == 0 {
		return nil, fmt.Errorf("index must be at least 1")
	}
	keepLast := index - 1
	if last < keepLast {
		keepLast = last
	}
	var snapIndex uint64
	if len(o.Snapshots) > 0 {
		snapIndex = o.Snapshots[0].Index
	}
	if index <= snapIndex {
		keepLast = 0
	}
	if keepLast < first {
		keepLast = 0
	}
	if keepLast == 0 && snapIndex == 0 {
		return nil, fmt.Errorf("truncating from index %d would leave neither entries nor a snapshot: the server would have no cluster configuration; "+
			"nothing of this server's state is left to recover, so wipe %s and let it rejoin its cluster, or restore it from a backup", index, filepath.Join(o.DataDir, "server"))
	}
	hasConfig := snapIndex > 0
	for i := first; keepLast > 0 && i <= keepLast; i++ {
		var l raft.Log
		if o.GetLog(i, &l) == nil && l.Type == raft.LogConfiguration {
			hasConfig = true
		}
	}
	if !hasConfig {
		return nil, fmt.Errorf("truncating from index %d would drop every configuration entry and there is no snapshot", index)
	}
	if keepLast == 0 {
		return o.rewrite(1, 0, nil, now)
	}
	return o.rewrite(first, keepLast, nil, now)
}

// rewrite writes entries first..last (with replace applied) into a new WAL beside the old one,
// then moves the old directory aside as a backup and the new one into its place. Every kept
// entry must pass the same check the server runs at start, or the rewrite is refused.
func (o *Offline) rewrite(first, last uint64, replace map[uint64]*raft.Log, now time.Time) (*Repair, error) {
	var batch []*raft.Log
	var prevTerm uint64
	for i := first; last > 0 && i <= last; i++ {
		if l, ok := replace[i]; ok {
			batch = append(batch, l)
			prevTerm = l.Term
			continue
		}
		if st := checkEntry(o, i, prevTerm); st.Err != nil {
			return nil, &Damage{File: o.File(i), Index: i, Reason: st.Err.Error() + " (repair this entry too)"}
		}
		l := new(raft.Log)
		if err := o.GetLog(i, l); err != nil {
			return nil, err
		}
		batch = append(batch, l)
		prevTerm = l.Term
	}
	stable := map[string][]byte{}
	for _, k := range raftStableKeys {
		v, err := o.meta.GetStable([]byte(k))
		if err != nil {
			return nil, fmt.Errorf("reading %s from the old log: %w", k, err)
		}
		if v != nil {
			stable[k] = v
		}
	}

	newDir := o.WALDir + ".new"
	if err := os.RemoveAll(newDir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(newDir, 0o700); err != nil {
		return nil, err
	}
	if err := writeWAL(newDir, batch, stable); err != nil {
		_ = os.RemoveAll(newDir)
		return nil, fmt.Errorf("writing the new log in %s: %w", newDir, err)
	}

	o.Close()
	backup := o.WALDir + ".backup-" + now.UTC().Format("20060102T150405Z")
	for n := 2; ; n++ {
		// A second repair in the same second must not fail on, or replace, the first backup.
		if _, err := os.Stat(backup); os.IsNotExist(err) {
			break
		}
		backup = fmt.Sprintf("%s.backup-%s-%d", o.WALDir, now.UTC().Format("20060102T150405Z"), n)
	}
	if err := os.Rename(o.WALDir, backup); err != nil {
		return nil, fmt.Errorf("moving the old log aside: %w", err)
	}
	if err := os.Rename(newDir, o.WALDir); err != nil {
		return nil, fmt.Errorf("moving the new log into place (the old one is in %s): %w", backup, err)
	}
	rep := &Repair{Backup: backup}
	if len(batch) > 0 {
		rep.First, rep.Last = batch[0].Index, batch[len(batch)-1].Index
	}
	// A repair that drops applied entries does so on the operator's word: the record of the
	// applied index comes down to what is left, or the server would refuse the repaired log.
	// The old record stays with the backup, so moving the backup back restores both.
	var snapIndex uint64
	if len(o.Snapshots) > 0 {
		snapIndex = o.Snapshots[0].Index
	}
	if covered := max(rep.Last, snapIndex); o.Applied > covered {
		path := AppliedFile(o.DataDir)
		if err := copyFile(path, filepath.Join(backup, AppliedFileName)); err != nil {
			return nil, fmt.Errorf("keeping the applied-index record with the backup: %w", err)
		}
		if err := WriteApplied(path, covered); err != nil {
			return nil, fmt.Errorf("lowering the applied-index record %s to %d: %w", path, covered, err)
		}
		rep.AppliedLowered = true
	}
	return rep, nil
}

func writeWAL(dir string, logs []*raft.Log, stable map[string][]byte) error {
	meta := &metadb.BoltMetaDB{}
	w, err := wal.Open(dir, wal.WithMetaStore(meta), wal.WithLogger(hclog.NewNullLogger()))
	if err != nil {
		_ = meta.Close()
		return err
	}
	for k, v := range stable {
		if err := w.Set([]byte(k), v); err != nil {
			_ = w.Close()
			_ = meta.Close()
			return err
		}
	}
	const batchSize = 256
	for start := 0; start < len(logs); start += batchSize {
		end := min(start+batchSize, len(logs))
		if err := w.StoreLogs(logs[start:end]); err != nil {
			_ = w.Close()
			_ = meta.Close()
			return err
		}
	}
	if err := w.Close(); err != nil {
		_ = meta.Close()
		return err
	}
	return meta.Close()
}
