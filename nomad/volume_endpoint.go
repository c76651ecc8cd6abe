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

// volumeListCapability is the capability listing volumes of a type needs; ok is false for a
// type that does not exist.
func volumeListCapability(volumeType string) (capability string, ok bool) {
	switch volumeType {
	case structs.VolumeTypeCSI:
		return acl.NamespaceCapabilityCSIListVolume, true
	case structs.VolumeTypeHost:
		return acl.NamespaceCapabilityHostVolumeRead, true
	}
	return acl.NamespaceCapabilityCSIListVolume, false
}

// volumeList lists volumes of Type: none. The capability depends on Type, so a request of no
// known type cannot be authorised and is refused before.
var volumeList = read("Volume.List", spec[structs.VolumeListRequest, structs.EmptyListResponse]{
	Prepare: func(req *structs.VolumeListRequest) error {
		if _, ok := volumeListCapability(req.Type); !ok {
			return structs.BadRequest("invalid type %q: must be %q or %q", req.Type, structs.VolumeTypeCSI, structs.VolumeTypeHost)
		}
		return nil
	},
	Authorize: func(c *rpcCall, req *structs.VolumeListRequest) error {
		capability, _ := volumeListCapability(req.Type)
		return restCapHereOrAnywhere(capability, func(req *structs.VolumeListRequest) string { return req.Namespace })(c, req)
	},
	Serve: func(c *rpcCall, req *structs.VolumeListRequest, reply *structs.EmptyListResponse) error {
		return volumeEmptyAnswer(c.srv, &reply.QueryMeta)
	},
})

// volumeRead reads one volume: never found.
var volumeRead = read("Volume.Read", spec[structs.VolumeSpecificRequest, structs.EmptyListResponse]{
	Authorize: func(c *rpcCall, req *structs.VolumeSpecificRequest) error {
		capability := acl.NamespaceCapabilityCSIReadVolume
		if req.Type == structs.VolumeTypeHost {
			capability = acl.NamespaceCapabilityHostVolumeRead
		}
		return namespaceCap(capability, func(req *structs.VolumeSpecificRequest) string { return req.Namespace })(c, req)
	},
	Serve: func(*rpcCall, *structs.VolumeSpecificRequest, *structs.EmptyListResponse) error {
		return structs.NotFound(structs.ErrVolumeNotFound)
	},
})

// volumeListPlugins lists plugins of Type: none.
var volumeListPlugins = read("Volume.ListPlugins", spec[structs.PluginListRequest, structs.EmptyListResponse]{
	Authorize: func(c *rpcCall, _ *structs.PluginListRequest) error {
		if !c.acl.AllowPluginList() {
			return structs.PermissionDenied("plugin list required")
		}
		return nil
	},
	Validate: func(req *structs.PluginListRequest) error {
		if req.Type != structs.VolumeTypeCSI {
			return structs.BadRequest("invalid type %q: only %q plugins exist", req.Type, structs.VolumeTypeCSI)
		}
		return nil
	},
	Serve: func(c *rpcCall, _ *structs.PluginListRequest, reply *structs.EmptyListResponse) error {
		return volumeEmptyAnswer(c.srv, &reply.QueryMeta)
	},
})

// volumeReadPlugin reads one plugin: never found.
var volumeReadPlugin = read("Volume.ReadPlugin", spec[structs.PluginSpecificRequest, structs.EmptyListResponse]{
	Authorize: func(c *rpcCall, _ *structs.PluginSpecificRequest) error {
		if !c.acl.AllowPluginRead() {
			return structs.PermissionDenied("plugin read required")
		}
		return nil
	},
	Serve: func(*rpcCall, *structs.PluginSpecificRequest, *structs.EmptyListResponse) error {
		return structs.NotFound(structs.ErrPluginNotFound)
	},
})

// List lists volumes of args.Type: none.
func (v *Volume) List(args *structs.VolumeListRequest, reply *structs.EmptyListResponse) error {
	return volumeList.Call(v.srv, args, reply)
}

// Read reads one volume: never found.
func (v *Volume) Read(args *structs.VolumeSpecificRequest, reply *structs.EmptyListResponse) error {
	return volumeRead.Call(v.srv, args, reply)
}

// ListPlugins lists plugins of args.Type: none.
func (v *Volume) ListPlugins(args *structs.PluginListRequest, reply *structs.EmptyListResponse) error {
	return volumeListPlugins.Call(v.srv, args, reply)
}

// ReadPlugin reads one plugin: never found.
func (v *Volume) ReadPlugin(args *structs.PluginSpecificRequest, reply *structs.EmptyListResponse) error {
	return volumeReadPlugin.Call(v.srv, args, reply)
}

// volumeEmptyAnswer answers at once: nothing can change an empty answer, so a blocking query
// has nothing to wait for.
func volumeEmptyAnswer(srv *Server, meta *structs.QueryMeta) error {
	meta.Index = 1
	srv.setQueryMeta(meta)
	return nil
}
