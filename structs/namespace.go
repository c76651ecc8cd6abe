package structs

// Namespace partitions jobs and ACL rules.
type Namespace struct {
	Name                  string
	Description           string
	Quota                 string
	Capabilities          *NamespaceCapabilities
	NodePoolConfiguration *NamespaceNodePoolConfiguration
	Meta                  map[string]string
	CreateIndex           uint64
	ModifyIndex           uint64
}

// NamespaceCapabilities restricts the drivers and network modes a namespace's jobs may use.
type NamespaceCapabilities struct {
	EnabledTaskDrivers   []string
	DisabledTaskDrivers  []string
	EnabledNetworkModes  []string
	DisabledNetworkModes []string
}

// NamespaceNodePoolConfiguration restricts the node pools a namespace's jobs may use.
type NamespaceNodePoolConfiguration struct {
	Default string
	Allowed []string
}

// Validate checks a namespace before it is written.
func (n *Namespace) Validate() error {
	if !ValidNamespaceName(n.Name) {
		return BadRequest("invalid name %q. Must match regex ^[a-zA-Z0-9-]{1,128}$", n.Name)
	}
	if len(n.Description) > 256 {
		return BadRequest("namespace %q: description longer than 256 characters", n.Name)
	}
	return nil
}

// NamespaceUpsertRequest creates or updates namespaces.
type NamespaceUpsertRequest struct {
	Namespaces []*Namespace
	Actor      *Actor
	WriteRequest
}

// NamespaceDeleteRequest deletes namespaces by name.
type NamespaceDeleteRequest struct {
	Namespaces []string
	Actor      *Actor
	WriteRequest
}

// NamespaceSpecificRequest reads one namespace.
type NamespaceSpecificRequest struct {
	Name string
	QueryOptions
}

// SingleNamespaceResponse answers NamespaceSpecificRequest.
type SingleNamespaceResponse struct {
	Namespace *Namespace
	QueryMeta
}

// NamespaceListRequest lists namespaces.
type NamespaceListRequest struct {
	QueryOptions
}

// NamespaceListResponse answers NamespaceListRequest.
type NamespaceListResponse struct {
	Namespaces []*Namespace
	QueryMeta
}
