package structs

import (
	"errors"
	"slices"
	"strings"
)

// ServiceRegistration is one instance of a `provider = "nomad"` service: an allocation
// advertising a named service at an address and port. The client running the allocation
// registers it when the task (or group) starts and removes it when it stops; the servers
// remove it with the allocation. Field names and order are upstream's wire shape
// (api.ServiceRegistration), so the HTTP API and the event payload serve it unchanged.
type ServiceRegistration struct {
	// ID is `_nomad-task-<alloc>-<task or group>-<service>-<port label>`, as upstream.
	ID          string
	ServiceName string
	Namespace   string
	NodeID      string
	Datacenter  string
	JobID       string
	AllocID     string
	Tags        []string
	Address     string
	Port        int
	CreateIndex uint64
	ModifyIndex uint64
}

// Limits of a registration, so one client cannot make the servers store without bound.
const (
	ServiceNameMaxLength          = 128
	ServiceRegistrationMaxTags    = 64
	ServiceTagMaxLength           = 256
	ServiceRegistrationsPerUpsert = 512
)

// ErrServiceRegistrationNotFound is the answer for an unknown registration ID.
var ErrServiceRegistrationNotFound = errors.New("service registration not found")

// Copy returns a deep copy.
func (s *ServiceRegistration) Copy() *ServiceRegistration {
	return copyWith(s, func(c *ServiceRegistration) {
		c.Tags = slices.Clone(s.Tags)
	})
}

// Validate checks what a client sends; the servers fill Namespace, JobID and Datacenter
// from the allocation and node afterwards.
func (s *ServiceRegistration) Validate() error {
	switch {
	case s.ID == "":
		return BadRequest("missing service registration ID")
	case len(s.ID) > 512:
		return BadRequest("invalid ID: longer than 512 characters")
	case s.ServiceName == "":
		return BadRequest("service registration %q: missing ServiceName", s.ID)
	case len(s.ServiceName) > ServiceNameMaxLength:
		return BadRequest("service registration %q: invalid ServiceName: longer than %d characters", s.ID, ServiceNameMaxLength)
	case strings.ContainsAny(s.ServiceName, "/ \t\n"):
		return BadRequest("service registration %q: invalid ServiceName %q: must not contain '/' or whitespace", s.ID, s.ServiceName)
	case s.AllocID == "":
		return BadRequest("service registration %q: missing AllocID", s.ID)
	case s.Port < 0 || s.Port > 65535:
		return BadRequest("service registration %q: invalid Port %d: must be 0-65535", s.ID, s.Port)
	case len(s.Tags) > ServiceRegistrationMaxTags:
		return BadRequest("service registration %q: invalid Tags: more than %d", s.ID, ServiceRegistrationMaxTags)
	case len(s.Address) > 256:
		return BadRequest("service registration %q: invalid Address: longer than 256 characters", s.ID)
	}
	for _, tag := range s.Tags {
		if len(tag) > ServiceTagMaxLength {
			return BadRequest("service registration %q: invalid Tags: a tag is longer than %d characters", s.ID, ServiceTagMaxLength)
		}
	}
	return nil
}

// ServiceRegistrationUpsertRequest registers services of allocations running on node
// NodeID. The AuthToken is that node's secret: only a client registers services.
type ServiceRegistrationUpsertRequest struct {
	NodeID   string
	Services []*ServiceRegistration
	WriteRequest
}

// ServiceRegistrationDeleteByIDRequest removes one registration. Namespace is the
// registration's; ServiceName, when set, must be the registration's name (the HTTP route
// carries both).
// NodeID is set by a client removing one of its own node's registrations, with the node's
// secret as AuthToken; otherwise the caller's token needs submit-job (or
// delete-service-registration) in the namespace.
type ServiceRegistrationDeleteByIDRequest struct {
	ID          string
	ServiceName string
	NodeID      string
	WriteRequest
}

// ServiceRegistrationListRequest lists the service names of a namespace ("*": of every
// namespace the caller may read).
type ServiceRegistrationListRequest struct {
	QueryOptions
}

// ServiceRegistrationListStub is one namespace's services, as upstream lists them.
type ServiceRegistrationListStub struct {
	Namespace string
	Services  []*ServiceRegistrationStub
}

// ServiceRegistrationStub is one service name and the union of its instances' tags.
type ServiceRegistrationStub struct {
	ServiceName string
	Tags        []string
}

// ServiceRegistrationListResponse answers ServiceRegistrationListRequest.
type ServiceRegistrationListResponse struct {
	Services []*ServiceRegistrationListStub
	QueryMeta
}

// ServiceRegistrationByNameRequest reads the registrations of one service name. Choose is
// upstream's `choose=N|key`: N instances picked by rendezvous hashing on key.
type ServiceRegistrationByNameRequest struct {
	ServiceName string
	Choose      string
	QueryOptions
}

// ServiceRegistrationsResponse answers the reads that return registrations.
type ServiceRegistrationsResponse struct {
	Services []*ServiceRegistration
	QueryMeta
}

// ServiceRegistrationStreamEvent is the payload of events on TopicService.
type ServiceRegistrationStreamEvent struct {
	Service *ServiceRegistration
}

// Event types of TopicService, whatever write removed the registration (a client's
// deregistration, an allocation's end, a purge, a node removal).
const (
	TypeServiceRegistration   = "ServiceRegistration"
	TypeServiceDeregistration = "ServiceDeregistration"
)
