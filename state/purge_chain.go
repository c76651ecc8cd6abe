package state

import (
	"fmt"
	"sort"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

// tablePurgeChain holds the purge history's hash chain bookkeeping (structs.PurgeChain).
const tablePurgeChain = "purge_chain"

func init() {
	registerTable(tablePurgeChain, &structs.PurgeChain{}, idIndex(field("ID")))
}

func purgeChainTxn(txn *memdb.Txn) (*structs.PurgeChain, error) {
	c, err := first[*structs.PurgeChain](txn, nil, "purge chain lookup", tablePurgeChain, indexID, structs.PurgeChainID)
	if err != nil || c != nil {
		return c, err
	}
	return &structs.PurgeChain{ID: structs.PurgeChainID}, nil
}

// chainPurgeRecordTxn links rec to the head of the chain, in the transaction that inserts it:
// every server applies the same entries in the same order, so every server computes the same
// chain.
func (s *StateStore) chainPurgeRecordTxn(txn *Txn, rec *structs.PurgeRecord) error {
	prev, err := purgeChainTxn(txn.Txn)
	if err != nil {
		return err
	}
	chain := *prev
	rec.ChainSeq = chain.HeadSeq + 1
	rec.PrevHash = chain.HeadHash
	if rec.Hash, err = rec.ComputeHash(); err != nil {
		return err
	}
	chain.HeadSeq, chain.HeadHash = rec.ChainSeq, rec.Hash
	if err := txn.Insert(tablePurgeChain, &chain); err != nil {
		return fmt.Errorf("state: purge chain update: %w", err)
	}
	return nil
}

// chainOrder sorts records oldest first along the chain.
func chainOrder(records []*structs.PurgeRecord) []*structs.PurgeRecord {
	out := append([]*structs.PurgeRecord(nil), records...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].ChainSeq < out[j].ChainSeq })
	return out
}

// prunableIDsTxn keeps, of ids, the records that form the oldest part of the chain (with the
// unchained records, which precede it): removing a record from the middle would leave a hole
// no checkpoint covers, so such a record stays until those before it go. It returns the
// records to remove, oldest first.
func prunablePurgeRecordsTxn(txn *Txn, ids []string) ([]*structs.PurgeRecord, error) {
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	iter, err := txn.Get(tablePurgeHistory, indexID)
	if err != nil {
		return nil, fmt.Errorf("state: purge record list: %w", err)
	}
	var out []*structs.PurgeRecord
	for _, r := range chainOrder(collect[*structs.PurgeRecord](iter)) {
		if r.ChainSeq == 0 {
			if want[r.ID] {
				out = append(out, r)
			}
			continue
		}
		if !want[r.ID] {
			break
		}
		out = append(out, r)
	}
	return out, nil
}

// checkpointPurgeChainTxn records that the chained records up to and including last were
// removed by retention.
func checkpointPurgeChainTxn(txn *Txn, last *structs.PurgeRecord) error {
	prev, err := purgeChainTxn(txn.Txn)
	if err != nil {
		return err
	}
	chain := *prev
	chain.CheckpointSeq, chain.CheckpointHash = last.ChainSeq, last.Hash
	if err := txn.Insert(tablePurgeChain, &chain); err != nil {
		return fmt.Errorf("state: purge chain checkpoint: %w", err)
	}
	return nil
}

// VerifyPurgeChain walks the purge history from the checkpoint to the head and reports the
// first record whose hash, link or position does not hold. Records written before the chain
// existed are counted apart and not verified.
func (s *StateStore) VerifyPurgeChain() (*structs.PurgeChainVerifyResponse, *structs.PurgeRecord, error) {
	txn := s.db.Txn(false)
	chain, err := purgeChainTxn(txn)
	if err != nil {
		return nil, nil, err
	}
	iter, err := txn.Get(tablePurgeHistory, indexID)
	if err != nil {
		return nil, nil, fmt.Errorf("state: purge record list: %w", err)
	}
	out := &structs.PurgeChainVerifyResponse{Valid: true, Head: chain.HeadHash, Checkpoint: chain.CheckpointHash}
	seq, prevHash := chain.CheckpointSeq, chain.CheckpointHash
	broken := func(r *structs.PurgeRecord, why string) (*structs.PurgeChainVerifyResponse, *structs.PurgeRecord, error) {
		out.Valid = false
		out.Broken = &structs.PurgeChainBreak{ChainSeq: r.ChainSeq, ID: r.ID, Namespace: r.Namespace, JobID: r.JobID, Reason: why}
		return out, r, nil
	}
	var last *structs.PurgeRecord
	for _, r := range chainOrder(collect[*structs.PurgeRecord](iter)) {
		if r.ChainSeq == 0 {
			out.Unchained++
			continue
		}
		if r.ChainSeq != seq+1 {
			return broken(r, fmt.Sprintf("record %d follows record %d: records are missing or inserted", r.ChainSeq, seq))
		}
		if r.PrevHash != prevHash {
			return broken(r, "PrevHash does not match the previous record's hash (or the checkpoint)")
		}
		h, err := r.ComputeHash()
		if err != nil {
			return nil, nil, err
		}
		if h != r.Hash {
			return broken(r, "Hash does not match the record's content: the record was changed")
		}
		seq, prevHash, last = r.ChainSeq, r.Hash, r
		out.Records++
	}
	if seq != chain.HeadSeq || prevHash != chain.HeadHash {
		why := fmt.Sprintf("the chain ends at record %d but its head is record %d: records after it are missing", seq, chain.HeadSeq)
		if last == nil {
			out.Valid = false
			out.Broken = &structs.PurgeChainBreak{ChainSeq: seq, Reason: why}
			return out, nil, nil
		}
		return broken(last, why)
	}
	return out, nil, nil
}
