package structs

import "errors"

// Volume types of /v1/volumes?type=.
const (
	VolumeTypeCSI  = "csi"
	VolumeTypeHost = "host"
)

// This server has no CSI plugins and no dynamic host volumes: the read endpoints answer
// empty lists and 404s after the same ACL checks as upstream's, and writes answer 501.

// ErrVolumeNotFound and ErrPluginNotFound are upstream's texts.
var (
	ErrVolumeNotFound = errors.New("volume not found")
	ErrPluginNotFound = errors.New("plugin not found")
)

// VolumeListRequest lists volumes of one type.
type VolumeListRequest struct {
	Type string
	QueryOptions
}

// VolumeSpecificRequest reads one volume.
type VolumeSpecificRequest struct {
	Type string
	ID   string
	QueryOptions
}

// PluginListRequest lists plugins of one type.
type PluginListRequest struct {
	Type string
	QueryOptions
}

// PluginSpecificRequest reads one plugin.
type PluginSpecificRequest struct {
	Type string
	ID   string
	QueryOptions
}

// EmptyListResponse answers a list that has nothing to list.
type EmptyListResponse struct {
	QueryMeta
}
