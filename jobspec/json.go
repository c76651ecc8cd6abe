package jobspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hashicorp/nomad/api"
)

// ParseJSONJob decodes a job in the API's JSON form, either wrapped as the
// register request and "nomad job inspect" print it ({"Job": {...}}) or
// bare ({"ID": ...}). Unknown fields are ignored, as the API does. The job
// is not canonicalized.
func ParseJSONJob(src []byte) (*api.Job, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(src, &top); err != nil {
		return nil, fmt.Errorf("invalid JSON job: %w", err)
	}
	if top == nil {
		return nil, errors.New("invalid JSON job: expected an object")
	}

	body := src
	if wrapped, ok := top["Job"]; ok {
		if bytes.Equal(bytes.TrimSpace(wrapped), []byte("null")) {
			return nil, errors.New(`invalid JSON job: "Job" is null`)
		}
		body = wrapped
	}

	var job api.Job
	if err := json.Unmarshal(body, &job); err != nil {
		return nil, fmt.Errorf("invalid JSON job: %w", err)
	}
	if job.ID == nil && job.Name == nil {
		return nil, errors.New(`invalid JSON job: no job found; expected {"Job": {...}} or a job object with an ID`)
	}
	return &job, nil
}
