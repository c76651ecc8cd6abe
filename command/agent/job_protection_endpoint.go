package agent

import (
	"net/http"

	"github.com/nomadfork/nomad/structs"
)

// jobProtectionBody is the body of PUT /v1/job/:id/protection.
type jobProtectionBody struct {
	Protected bool
	Reason    string
}

// jobProtectionView is the answer of GET /v1/job/:id/protection, a fixed shape tools are
// written against.
type jobProtectionView struct {
	Protected   bool
	Reason      string
	Actor       *structs.Actor
	ModifyTime  int64
	ModifyIndex uint64
}

func (s *HTTPServer) jobProtectionWrite(w http.ResponseWriter, r *http.Request) (any, error) {
	var body jobProtectionBody
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	args := structs.JobProtectionRequest{JobID: jobID(r), Protected: body.Protected, Reason: body.Reason, WriteRequest: writeRequest(r)}
	return write(s, w, "Job.SetProtection", &args, func(reply *structs.JobProtectionResponse) (any, error) {
		return reply.GetWriteMeta(), nil
	})
}

func (s *HTTPServer) jobProtectionRead(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.JobSpecificRequest{JobID: jobID(r), QueryOptions: queryOptions(r)}
	return read(s, w, "Job.GetProtection", &args, func(reply *structs.JobProtectionGetResponse) (any, error) {
		p := reply.Protection
		return &jobProtectionView{Protected: p.Protected, Reason: p.Reason, Actor: p.Actor, ModifyTime: p.ModifyTime, ModifyIndex: p.ModifyIndex}, nil
	})
}

// jobPurgePlan answers what purging the job would remove and leave (structs.JobPurgePlan).
func (s *HTTPServer) jobPurgePlan(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.JobSpecificRequest{JobID: jobID(r), QueryOptions: queryOptions(r)}
	return read(s, w, "Job.PurgePlan", &args, func(reply *structs.JobPurgePlanResponse) (any, error) {
		return reply.Plan, nil
	})
}
