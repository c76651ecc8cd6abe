package agent

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

func (s *HTTPServer) variablesList(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.VariablesListRequest{QueryOptions: queryOptions(r)}
	return read(s, w, "Variables.List", &args, func(reply *structs.VariablesListResponse) (any, error) {
		return nonNil(reply.Data), nil
	})
}

func (s *HTTPServer) variableRead(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.VariablesReadRequest{Path: r.PathValue("path"), QueryOptions: queryOptions(r)}
	return read(s, w, "Variables.Read", &args, func(reply *structs.VariablesReadResponse) (any, error) {
		return found(reply.Data, structs.NotFound(structs.ErrVariableNotFound))
	})
}

// variableLockOps are the flag parameters of PUT /v1/var/:path; at most one may be given.
var variableLockOps = []string{"lock-acquire", "lock-renew", "lock-release"}

func (s *HTTPServer) variablePut(w http.ResponseWriter, r *http.Request) (any, error) {
	path := r.PathValue("path")
	var body api.Variable
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if p := strings.Trim(body.Path, " /"); p != "" && p != path {
		return nil, structs.BadRequest("invalid Path %q: does not match the request path %q", body.Path, path)
	}
	q := r.URL.Query()
	op := structs.VarOpSet
	for _, flag := range variableLockOps {
		if _, ok := q[flag]; !ok {
			continue
		}
		if op != structs.VarOpSet {
			return nil, structs.BadRequest("only one of %s may be given", strings.Join(variableLockOps, ", "))
		}
		op = structs.VarOp(flag)
	}
	check, hasCAS, err := casQuery(r)
	if err != nil {
		return nil, err
	}
	if hasCAS {
		if op != structs.VarOpSet {
			return nil, structs.BadRequest("cas cannot be combined with %s", op)
		}
		op = structs.VarOpCAS
	}
	lock, err := variableLockFromAPI(body.Lock)
	if err != nil {
		return nil, err
	}
	wr := writeRequest(r)
	if op == "lock-renew" {
		args := structs.VariablesRenewLockRequest{Path: path, LockID: body.LockID(), WriteRequest: wr}
		args.Namespace = nonEmpty(body.Namespace, wr.Namespace)
		var reply structs.VariablesRenewLockResponse
		if err := s.rpc.RPC("Variables.RenewLock", &args, &reply); err != nil {
			return nil, err
		}
		setIndex(w, reply.Index)
		return reply.VarMeta, nil
	}
	v := &structs.VariableDecrypted{
		VariableMetadata: structs.VariableMetadata{Namespace: body.Namespace, Path: path, ModifyIndex: check, Lock: lock},
		Items:            body.Items,
	}
	return s.variableApply(w, op, v, wr)
}

func (s *HTTPServer) variableDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	check, hasCAS, err := casQuery(r)
	if err != nil {
		return nil, err
	}
	op := structs.VarOpDelete
	if hasCAS {
		op = structs.VarOpDeleteCAS
	}
	v := &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Path: r.PathValue("path"), ModifyIndex: check}}
	if _, err := s.variableApply(w, op, v, writeRequest(r)); err != nil {
		return nil, err
	}
	if sw, ok := w.(*statusWriter); ok && sw.wroteHeader {
		return nil, nil // a conflict, answered
	}
	w.WriteHeader(http.StatusNoContent)
	return nil, nil
}

// variableApply sends one write and answers a failed check with 409 and the variable as it
// is, which the client decodes into api.ErrCASConflict.
func (s *HTTPServer) variableApply(w http.ResponseWriter, op structs.VarOp, v *structs.VariableDecrypted, wr structs.WriteRequest) (any, error) {
	args := structs.VariablesApplyRequest{Op: op, Var: v, WriteRequest: wr}
	return write(s, w, "Variables.Apply", &args, func(reply *structs.VariablesApplyResponse) (any, error) {
		if reply.Conflict != nil {
			buf, err := json.Marshal(reply.Conflict)
			if err != nil {
				return nil, err
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusConflict)
			_, _ = w.Write(buf)
			return nil, nil
		}
		return reply.Output, nil
	})
}

// casQuery reads ?cas=<index>.
func casQuery(r *http.Request) (uint64, bool, error) {
	raw, ok := r.URL.Query()["cas"]
	if !ok {
		return 0, false, nil
	}
	v := ""
	if len(raw) > 0 {
		v = raw[0]
	}
	check, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, false, structs.BadRequest("invalid cas %q: must be a non-negative integer", v)
	}
	return check, true, nil
}

func variableLockFromAPI(l *api.VariableLock) (*structs.VariableLock, error) {
	if l == nil {
		return nil, nil
	}
	out := &structs.VariableLock{ID: l.ID}
	for _, f := range []struct {
		name string
		raw  string
		dst  *time.Duration
	}{{"Lock.TTL", l.TTL, &out.TTL}, {"Lock.LockDelay", l.LockDelay, &out.LockDelay}} {
		if f.raw == "" {
			continue
		}
		d, err := time.ParseDuration(f.raw)
		if err != nil {
			return nil, structs.BadRequest("invalid %s %q: %v", f.name, f.raw, err)
		}
		*f.dst = d
	}
	return out, nil
}

func nonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
