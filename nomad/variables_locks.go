package nomad

import (
	"sync"
	"time"

	"github.com/nomadfork/nomad/structs"
)

// variableLocks is the leader's record of when each held variable lock expires. Expiry is
// deliberately not in the state store: renewals would otherwise each be a Raft write, and
// the FSM may not read a clock. A new leader re-arms every held lock with its full TTL
// (establishLeadership), so a lock outlives a leader change by at most one TTL; the reap
// tick of the leader loop releases expired locks through Raft, at its own interval.
type variableLocks struct {
	mu        sync.Mutex
	deadlines map[variableLockKey]variableLockDeadline
	// delays holds, for a lock that expired, when the variable may be locked again (its
	// LockDelay after the expiry): a holder that lost its lease without noticing gets that
	// long to stop before someone else takes over. A release by the holder sets none.
	delays map[variableLockKey]time.Time
}

type variableLockKey struct{ namespace, path string }

type variableLockDeadline struct {
	id    string
	at    time.Time
	delay time.Duration
}

func newVariableLocks() *variableLocks {
	return &variableLocks{deadlines: map[variableLockKey]variableLockDeadline{}, delays: map[variableLockKey]time.Time{}}
}

// arm sets (or pushes back) the expiry of the lock id on a variable.
func (l *variableLocks) arm(namespace, path string, lock *structs.VariableLock, now time.Time) {
	if lock == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.deadlines[variableLockKey{namespace, path}] = variableLockDeadline{id: lock.ID, at: now.Add(lock.TTL), delay: lock.LockDelay}
}

// forget drops the deadline of the lock id ("" = whichever lock) on a variable.
func (l *variableLocks) forget(namespace, path, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := variableLockKey{namespace, path}
	if d, ok := l.deadlines[k]; ok && (id == "" || d.id == id) {
		delete(l.deadlines, k)
	}
}

// reset drops every deadline: called when this server starts leading.
func (l *variableLocks) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	clear(l.deadlines)
	clear(l.delays)
}

// delayedUntil is when a variable whose lock expired may be locked again; zero when it may
// be now.
func (l *variableLocks) delayedUntil(namespace, path string, now time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := variableLockKey{namespace, path}
	until, ok := l.delays[k]
	if !ok {
		return time.Time{}
	}
	if !now.Before(until) {
		delete(l.delays, k)
		return time.Time{}
	}
	return until
}

func (l *variableLocks) startDelay(namespace, path string, until time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.delays[variableLockKey{namespace, path}] = until
}

// expired returns the locks whose deadline is past, as variables carrying only the lock
// ID, ready to be released.
func (l *variableLocks) expired(now time.Time) []*structs.VariableEncrypted {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*structs.VariableEncrypted
	for k, d := range l.deadlines {
		if now.After(d.at) {
			out = append(out, &structs.VariableEncrypted{VariableMetadata: structs.VariableMetadata{
				Namespace: k.namespace, Path: k.path, Lock: &structs.VariableLock{ID: d.id, LockDelay: d.delay}}})
		}
	}
	return out
}

// armVariableLocks re-arms every lock held in the state, on a server that has just become
// leader.
func (s *Server) armVariableLocks() error {
	s.varLocks.reset()
	vars, err := s.State().Variables(nil, structs.AllNamespacesSentinel, "")
	if err != nil {
		return err
	}
	t := now()
	for _, v := range vars {
		s.varLocks.arm(v.Namespace, v.Path, v.Lock, t)
	}
	return nil
}

// reapExpiredVariableLocks releases, through Raft, every lock not renewed within its TTL.
// A lock released or re-acquired meanwhile fails the FSM's lock ID check and is left alone.
func (s *Server) reapExpiredVariableLocks() error {
	for _, v := range s.varLocks.expired(now()) {
		t := now()
		v.ModifyTime = t.UnixNano()
		_, raw, err := s.raftApplyResponse(structs.VarApplyStateRequestType, &structs.VarApplyStateRequest{
			Op: structs.VarOpLockRelease, Var: v, Actor: actorVariableLocks})
		if err != nil {
			return err
		}
		if resp, ok := raw.(*structs.VarApplyStateResponse); ok && resp.Conflict == nil && v.Lock.LockDelay > 0 {
			s.varLocks.startDelay(v.Namespace, v.Path, t.Add(v.Lock.LockDelay))
		}
		// Released, or already released or re-acquired (a failed lock check): either way this
		// deadline is done with; a re-acquired lock has its own.
		s.varLocks.forget(v.Namespace, v.Path, v.Lock.ID)
		s.logger.Info("released an expired variable lock", "namespace", v.Namespace, "path", v.Path)
	}
	return nil
}

// actorVariableLocks is who releases expired locks.
var actorVariableLocks = &structs.Actor{Type: structs.ActorTypeSystem, Name: "variable-locks"}
