package structs

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// The purge history is a hash chain (ours): each record carries the hash of the one before
// it, so a record edited, removed or inserted anywhere but at the head (say, in a snapshot
// file or a data directory) no longer verifies. Retention removes the oldest records only,
// and leaves a checkpoint (the last removed record's hash) that the oldest kept record must
// name.

// PurgeChain is the chain's bookkeeping: its head and the checkpoint retention left.
type PurgeChain struct {
	// ID is always PurgeChainID: the table holds one row.
	ID       string
	HeadSeq  uint64
	HeadHash string
	// CheckpointSeq and CheckpointHash are those of the newest record retention removed (0
	// and "" while none was): the oldest kept record's PrevHash must be CheckpointHash.
	CheckpointSeq  uint64
	CheckpointHash string
}

// PurgeChainID is the key of the one PurgeChain row.
const PurgeChainID = "purge-chain"

// ComputeHash is the record's hash: SHA-256, in hex, over a canonical encoding of what the
// record says happened (who removed which job, when, why, with which spec) and PrevHash. The
// allocations' last states and ModifyIndex are left out: clients report them after the
// removal, and they say how the job's work ended, not who removed it.
func (r *PurgeRecord) ComputeHash() (string, error) {
	job, err := canonicalValue(r.Job)
	if err != nil {
		return "", fmt.Errorf("purge record %s: canonical job: %w", r.ID, err)
	}
	// A struct, not a map: encoding/json writes its fields in this fixed order.
	canon := struct {
		ChainSeq    uint64
		ID          string
		Namespace   string
		JobID       string
		JobVersion  uint64
		JobType     string
		Reason      string
		Actor       any
		ForcedBy    any
		PurgeTime   int64
		CreateIndex uint64
		Job         any
		PrevHash    string
	}{r.ChainSeq, r.ID, r.Namespace, r.JobID, r.JobVersion, r.JobType, r.Reason, nil, nil, r.PurgeTime, r.CreateIndex, job, r.PrevHash}
	if canon.Actor, err = canonicalValue(r.Actor); err != nil {
		return "", err
	}
	if canon.ForcedBy, err = canonicalValue(r.ForcedBy); err != nil {
		return "", err
	}
	raw, err := json.Marshal(canon)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:]), nil
}

// canonicalValue is v as JSON values with every empty value (null, "", false, 0, [] and {})
// dropped, numbers kept exact. Encodings that differ only in how they say "nothing" (a nil or
// an empty list, as a msgpack round trip through a snapshot may give) hash the same; object
// keys are written sorted.
func canonicalValue(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return pruneEmpty(out), nil
}

func pruneEmpty(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if p := pruneEmpty(e); p == nil {
				delete(t, k)
			} else {
				t[k] = p
			}
		}
		if len(t) == 0 {
			return nil
		}
		return t
	case []any:
		if len(t) == 0 {
			return nil
		}
		for i, e := range t {
			// Elements keep their position: an emptied one stays as null.
			t[i] = pruneEmpty(e)
		}
		return t
	case string:
		if t == "" {
			return nil
		}
	case bool:
		if !t {
			return nil
		}
	case json.Number:
		if t.String() == "0" {
			return nil
		}
	}
	return v
}

// PurgeChainVerifyRequest asks for a verification of the whole purge history.
type PurgeChainVerifyRequest struct {
	QueryOptions
}

// PurgeChainBreak is the first record that does not verify.
type PurgeChainBreak struct {
	ChainSeq uint64
	// ID, Namespace and JobID are given only to a caller who may read the record.
	ID        string `json:",omitempty"`
	Namespace string `json:",omitempty"`
	JobID     string `json:",omitempty"`
	// Reason says what does not hold: the record's hash, its link to the one before, or a
	// gap in the sequence.
	Reason string
}

// PurgeChainVerifyResponse answers a verification (GET /v1/jobs/purged/verify).
type PurgeChainVerifyResponse struct {
	Valid bool
	// Records is the number of chained records verified (up to the break, if any).
	Records int
	// Head is the hash of the newest record ("" for an empty history).
	Head string
	// Checkpoint is the hash retention left, which the oldest kept record names.
	Checkpoint string `json:",omitempty"`
	// Unchained counts records written before the history was chained; they are not verified.
	Unchained int              `json:",omitempty"`
	Broken    *PurgeChainBreak `json:",omitempty"`
	QueryMeta
}
