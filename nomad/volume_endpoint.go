package nomad

import (
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/structs"
)

// Volume answers the volume and plugin reads of a server with no CSI plugins and no dynamic
// host volumes: empty lists and 404s, after the ACL check each read takes upstream, so a
// caller learns nothing it could not learn there.
type Volume struct {
	srv *Server
}

// List lists volumes of args.Type: none.
func (v *Volume) List(args *structs.VolumeListRequest, reply *structs.EmptyListResponse) error {
	aclObj, _, err := v.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	namespace := requestNamespace("", args.Namespace)
	var capability string
	switch args.Type {
	case structs.VolumeTypeCSI:
		capability = acl.NamespaceCapabilityCSIListVolume
	case structs.VolumeTypeHost:
		capability = acl.NamespaceCapabilityHostVolumeRead
	default:
		return structs.BadRequest("invalid type %q: must be %q or %q", args.Type, structs.VolumeTypeCSI, structs.VolumeTypeHost)
	}
	allowed := aclObj.AllowNamespaceOperation(namespace, capability)
	if namespace == structs.AllNamespacesSentinel {
		allowed = aclObj.AllowAnyNamespaceOperation(capability)
	}
	if !allowed {
		return structs.PermissionDenied("%s capability required in namespace %q", capability, namespace)
	}
	return v.emptyAnswer(&args.QueryOptions, &reply.QueryMeta)
}

// Read reads one volume: never found.
func (v *Volume) Read(args *structs.VolumeSpecificRequest, reply *structs.EmptyListResponse) error {
	aclObj, _, err := v.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	namespace := requestNamespace("", args.Namespace)
	capability := acl.NamespaceCapabilityCSIReadVolume
	if args.Type == structs.VolumeTypeHost {
		capability = acl.NamespaceCapabilityHostVolumeRead
	}
	if !aclObj.AllowNamespaceOperation(namespace, capability) {
		return structs.PermissionDenied("%s capability required in namespace %q", capability, namespace)
	}
	return structs.NotFound(structs.ErrVolumeNotFound)
}

// ListPlugins lists plugins of args.Type: none.
func (v *Volume) ListPlugins(args *structs.PluginListRequest, reply *structs.EmptyListResponse) error {
	aclObj, _, err := v.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	if !aclObj.AllowPluginList() {
		return structs.PermissionDenied("plugin list required")
	}
	if args.Type != structs.VolumeTypeCSI {
		return structs.BadRequest("invalid type %q: only %q plugins exist", args.Type, structs.VolumeTypeCSI)
	}
	return v.emptyAnswer(&args.QueryOptions, &reply.QueryMeta)
}

// ReadPlugin reads one plugin: never found.
func (v *Volume) ReadPlugin(args *structs.PluginSpecificRequest, reply *structs.EmptyListResponse) error {
	aclObj, _, err := v.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	if !aclObj.AllowPluginRead() {
		return structs.PermissionDenied("plugin read required")
	}
	return structs.NotFound(structs.ErrPluginNotFound)
}

// emptyAnswer answers at once: nothing can change an empty answer, so a blocking query
// has nothing to wait for.
func (v *Volume) emptyAnswer(_ *structs.QueryOptions, meta *structs.QueryMeta) error {
	meta.Index = 1
	v.srv.setQueryMeta(meta)
	return nil
}
