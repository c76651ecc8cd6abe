package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

// ApplyVariableTxn applies one variable write. Every check-and-set and lock check is made
// here, inside the transaction, so two writes racing through Raft cannot both pass. A failed
// check is not an error: the response carries the row that made it fail (Conflict) and
// nothing is written. The row's times and lock ID come in the request, fixed by the leader.
func (s *StateStore) ApplyVariableTxn(txn *Txn, op structs.VarOp, v *structs.VariableEncrypted) (*structs.VarApplyStateResponse, error) {
	if v == nil {
		return nil, structs.BadRequest("variable write without a variable")
	}
	raw, err := txn.First(tableVariables, indexID, v.Namespace, v.Path)
	if err != nil {
		return nil, fmt.Errorf("state: variable lookup: %w", err)
	}
	var existing *structs.VariableEncrypted
	if raw != nil {
		existing = raw.(*structs.VariableEncrypted)
	}
	conflict := func() (*structs.VarApplyStateResponse, error) {
		if existing == nil {
			// Upstream answers a check against a missing variable with an empty one.
			return &structs.VarApplyStateResponse{Conflict: &structs.VariableEncrypted{
				VariableMetadata: structs.VariableMetadata{Namespace: v.Namespace, Path: v.Path}}}, nil
		}
		c := *existing
		c.VariableMetadata = existing.VariableMetadata.Copy()
		return &structs.VarApplyStateResponse{Conflict: &c}, nil
	}
	// A locked variable is changed only by its lock holder.
	lockedByOther := existing != nil && existing.Lock != nil && existing.LockID() != v.LockID()

	switch op {
	case structs.VarOpCAS:
		if (existing == nil && v.ModifyIndex != 0) || (existing != nil && existing.ModifyIndex != v.ModifyIndex) {
			return conflict()
		}
		fallthrough
	case structs.VarOpSet:
		if lockedByOther {
			return conflict()
		}
		if len(v.Data) == 0 {
			return nil, structs.BadRequest("variable missing required Items object")
		}
		row := s.nextVariableRow(txn, existing, v)
		if existing != nil {
			row.Lock = existing.VariableMetadata.Copy().Lock
		}
		return s.writeVariable(txn, row)

	case structs.VarOpDeleteCAS:
		if (existing == nil && v.ModifyIndex != 0) || (existing != nil && existing.ModifyIndex != v.ModifyIndex) {
			return conflict()
		}
		fallthrough
	case structs.VarOpDelete:
		if existing == nil {
			return &structs.VarApplyStateResponse{}, nil
		}
		if lockedByOther {
			return conflict()
		}
		if err := txn.Delete(tableVariables, existing); err != nil {
			return nil, fmt.Errorf("state: variable delete: %w", err)
		}
		if err := txn.bumpIndex(tableVariables); err != nil {
			return nil, err
		}
		return &structs.VarApplyStateResponse{}, nil

	case structs.VarOpLockAcquire:
		if v.Lock == nil || v.Lock.ID == "" {
			return nil, structs.BadRequest("lock acquire without a lock ID")
		}
		if existing != nil && existing.Lock != nil {
			return conflict()
		}
		if existing == nil && len(v.Data) == 0 {
			return nil, structs.BadRequest("variable missing required Items object")
		}
		row := s.nextVariableRow(txn, existing, v)
		if len(v.Data) == 0 {
			row.VariableData = existing.VariableData
		}
		lock := *v.Lock
		row.Lock = &lock
		return s.writeVariable(txn, row)

	case structs.VarOpLockRelease:
		if existing == nil || existing.Lock == nil || v.LockID() != existing.LockID() {
			return conflict()
		}
		row := *existing
		row.VariableMetadata = existing.VariableMetadata.Copy()
		row.Lock = nil
		row.ModifyIndex = txn.Index
		row.ModifyTime = v.ModifyTime
		return s.writeVariable(txn, &row)
	}
	return nil, structs.BadRequest("unknown variable operation %q", op)
}

// nextVariableRow is v as the row that replaces existing (nil for a new variable).
func (s *StateStore) nextVariableRow(txn *Txn, existing, v *structs.VariableEncrypted) *structs.VariableEncrypted {
	row := &structs.VariableEncrypted{
		VariableMetadata: structs.VariableMetadata{
			Namespace: v.Namespace, Path: v.Path,
			CreateIndex: txn.Index, CreateTime: v.ModifyTime,
			ModifyIndex: txn.Index, ModifyTime: v.ModifyTime,
		},
		VariableData: structs.VariableData{Data: append([]byte(nil), v.Data...), KeyID: v.KeyID},
	}
	if existing != nil {
		row.CreateIndex, row.CreateTime = existing.CreateIndex, existing.CreateTime
	}
	return row
}

func (s *StateStore) writeVariable(txn *Txn, row *structs.VariableEncrypted) (*structs.VarApplyStateResponse, error) {
	if err := txn.Insert(tableVariables, row); err != nil {
		return nil, fmt.Errorf("state: variable insert: %w", err)
	}
	if err := txn.bumpIndex(tableVariables); err != nil {
		return nil, err
	}
	out := *row
	out.VariableMetadata = row.VariableMetadata.Copy()
	return &structs.VarApplyStateResponse{Written: &out}, nil
}

// VariableByPath reads one variable (encrypted); nil when there is none.
func (s *StateStore) VariableByPath(ws memdb.WatchSet, namespace, path string) (*structs.VariableEncrypted, error) {
	return first[*structs.VariableEncrypted](s.db.Txn(false), ws, "variable lookup", tableVariables, indexID, namespace, path)
}

// Variables lists the variables of a namespace (every namespace for "*") whose path starts
// with prefix, ordered by namespace and path.
func (s *StateStore) Variables(ws memdb.WatchSet, namespace, prefix string) ([]*structs.VariableEncrypted, error) {
	return listInNamespace(s.db.Txn(false), ws, "variable list", tableVariables, namespace, prefix, func(v *structs.VariableEncrypted) string { return v.Path })
}

// ApplyVariable is the variable write of the Raft log, one transaction, committed only when
// no check failed. It stores what the leader encrypted; the store never sees items in clear.
func (s *StateStore) ApplyVariable(index uint64, req *structs.VarApplyStateRequest) (*structs.VarApplyStateResponse, error) {
	txn := s.WriteTxn(structs.VarApplyStateRequestType, index, &TxnMeta{Actor: req.Actor})
	defer txn.Abort()
	resp, err := s.ApplyVariableTxn(txn, req.Op, req.Var)
	if err != nil {
		return nil, err
	}
	if resp.Conflict == nil {
		txn.Commit()
	}
	return resp, nil
}
