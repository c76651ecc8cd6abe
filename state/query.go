package state

import (
	"fmt"
	"sort"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

// The generic readers and writers every table family shares. A family states only what is
// particular to it (its key, what it keeps across an update, its checks); the lookup, error
// wording, watch registration and index bump are done once here.

// first reads the one row of table matching index and args, watching it in ws; the zero T
// when there is none. what names the lookup in errors.
func first[T any](txn *memdb.Txn, ws memdb.WatchSet, what, table, index string, args ...any) (T, error) {
	var zero T
	watchCh, raw, err := txn.FirstWatch(table, index, args...)
	if err != nil {
		return zero, fmt.Errorf("state: %s: %w", what, err)
	}
	ws.Add(watchCh)
	if raw == nil {
		return zero, nil
	}
	return raw.(T), nil
}

// list reads every row of table matching index and args, watching the result in ws. what names
// the lookup in errors.
func list[T any](txn *memdb.Txn, ws memdb.WatchSet, what, table, index string, args ...any) ([]T, error) {
	iter, err := txn.Get(table, index, args...)
	if err != nil {
		return nil, fmt.Errorf("state: %s: %w", what, err)
	}
	ws.Add(iter.WatchCh())
	return collect[T](iter), nil
}

// deleteRows deletes rows from table, bumping its index when there was one. what names the
// rows in errors.
func deleteRows[T any](txn *Txn, what, table string, rows []T) error {
	for _, row := range rows {
		if err := txn.Delete(table, row); err != nil {
			return fmt.Errorf("state: %s delete: %w", what, err)
		}
	}
	return txn.bumpIndexIf(len(rows) > 0, table)
}

// deleteAll deletes the rows of table matching index and args, bumping its index when one
// went. what names the rows in errors.
func deleteAll(txn *Txn, what, table, index string, args ...any) error {
	n, err := txn.DeleteAll(table, index, args...)
	if err != nil {
		return fmt.Errorf("state: %s delete: %w", what, err)
	}
	return txn.bumpIndexIf(n > 0, table)
}

// collect drains an iterator of T rows.
func collect[T any](iter memdb.ResultIterator) []T {
	var out []T
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		out = append(out, raw.(T))
	}
	return out
}

// listInNamespace lists the rows of a table keyed by (namespace, key) whose key starts with
// prefix: in one namespace through the prefix index, or in every namespace for "*".
func listInNamespace[T any](txn *memdb.Txn, ws memdb.WatchSet, what, table, namespace, prefix string, key func(T) string) ([]T, error) {
	if namespace != structs.AllNamespacesSentinel {
		return list[T](txn, ws, what, table, indexID+"_prefix", namespace, prefix)
	}
	all, err := list[T](txn, ws, what, table, indexID)
	if err != nil {
		return nil, err
	}
	var out []T
	for _, row := range all {
		if hasPrefix(key(row), prefix) {
			out = append(out, row)
		}
	}
	return out, nil
}

// inNamespace keeps, in place, the rows of namespace, or every row for "*".
func inNamespace[T any](rows []T, namespace string, ns func(T) string) []T {
	out := rows[:0]
	for _, row := range rows {
		if namespace == structs.AllNamespacesSentinel || ns(row) == namespace {
			out = append(out, row)
		}
	}
	return out
}

// newestFirst orders rows by CreateIndex, newest first; rows written by one transaction
// share it and are ordered by ID, so the order is the same on every server.
func newestFirst[T any](rows []T, createIndex func(T) uint64, id func(T) string) {
	sort.SliceStable(rows, func(i, j int) bool {
		if ci, cj := createIndex(rows[i]), createIndex(rows[j]); ci != cj {
			return ci > cj
		}
		return id(rows[i]) < id(rows[j])
	})
}

func hasPrefix(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }

// rowKind describes the rows of one table keyed by a string id, for the generic writers.
type rowKind[T any] struct {
	table string
	// what names the row in internal errors ("policy lookup"); noun in the 404 users see.
	what, noun string
	key        func(T) string
	// raft points at the row's CreateIndex and ModifyIndex.
	raft func(T) (create, modify *uint64)
}

// upsert inserts row stamped with the transaction's index. An update keeps the CreateIndex
// of the row it replaces, and whatever else keep copies from it (keep may be nil).
func (k rowKind[T]) upsert(txn *Txn, row T, keep func(row, prev T)) error {
	raw, err := txn.First(k.table, indexID, k.key(row))
	if err != nil {
		return fmt.Errorf("state: %s lookup: %w", k.what, err)
	}
	create, modify := k.raft(row)
	*create, *modify = txn.Index, txn.Index
	if raw != nil {
		prev := raw.(T)
		prevCreate, _ := k.raft(prev)
		*create = *prevCreate
		if keep != nil {
			keep(row, prev)
		}
	}
	if err := txn.Insert(k.table, row); err != nil {
		return fmt.Errorf("state: %s insert: %w", k.what, err)
	}
	return nil
}

// upsertAll upserts rows and bumps the table's index.
func (k rowKind[T]) upsertAll(txn *Txn, rows []T, keep func(row, prev T)) error {
	for _, row := range rows {
		if err := k.upsert(txn, row, keep); err != nil {
			return err
		}
	}
	return txn.bumpIndex(k.table)
}

// delete removes the row with id; an unknown id is a 404 so a typo is noticed.
func (k rowKind[T]) delete(txn *Txn, id string) error {
	existing, err := txn.First(k.table, indexID, id)
	if err != nil {
		return fmt.Errorf("state: %s lookup: %w", k.what, err)
	}
	if existing == nil {
		return structs.NewErrCode(404, "%s %q not found", k.noun, id)
	}
	if err := txn.Delete(k.table, existing); err != nil {
		return fmt.Errorf("state: %s delete: %w", k.what, err)
	}
	return nil
}

// deleteAll deletes the rows with ids and bumps the table's index.
func (k rowKind[T]) deleteAll(txn *Txn, ids []string) error {
	for _, id := range ids {
		if err := k.delete(txn, id); err != nil {
			return err
		}
	}
	return txn.bumpIndex(k.table)
}
