package acl

import "sort"

// Dispositions: the values of a block's `policy` field. Which ones a block
// accepts is derived from its capability table (namespace, node_pool,
// host_volume, operator) or listed in coarseDispositions.
const (
	PolicyDeny  = "deny"
	PolicyRead  = "read"
	PolicyWrite = "write"
	PolicyScale = "scale"
	PolicyList  = "list"
)

// Namespace capabilities. Every name upstream accepts is here so that
// upstream policies load unchanged; each must also have a row in
// namespaceCapabilities (a test enforces it).
const (
	NamespaceCapabilityDeny                 = "deny"
	NamespaceCapabilityListJobs             = "list-jobs"
	NamespaceCapabilityParseJob             = "parse-job"
	NamespaceCapabilityReadJob              = "read-job"
	NamespaceCapabilitySubmitJob            = "submit-job"
	NamespaceCapabilityDispatchJob          = "dispatch-job"
	NamespaceCapabilityReadLogs             = "read-logs"
	NamespaceCapabilityReadFS               = "read-fs"
	NamespaceCapabilityAllocExec            = "alloc-exec"
	NamespaceCapabilityAllocNodeExec        = "alloc-node-exec"
	NamespaceCapabilityAllocLifecycle       = "alloc-lifecycle"
	NamespaceCapabilityCSIRegisterPlugin    = "csi-register-plugin"
	NamespaceCapabilityCSIWriteVolume       = "csi-write-volume"
	NamespaceCapabilityCSIReadVolume        = "csi-read-volume"
	NamespaceCapabilityCSIListVolume        = "csi-list-volume"
	NamespaceCapabilityCSIMountVolume       = "csi-mount-volume"
	NamespaceCapabilityHostVolumeCreate     = "host-volume-create"
	NamespaceCapabilityHostVolumeRegister   = "host-volume-register"
	NamespaceCapabilityHostVolumeRead       = "host-volume-read"
	NamespaceCapabilityHostVolumeWrite      = "host-volume-write"
	NamespaceCapabilityHostVolumeDelete     = "host-volume-delete"
	NamespaceCapabilityListScalingPolicies  = "list-scaling-policies"
	NamespaceCapabilityReadScalingPolicy    = "read-scaling-policy"
	NamespaceCapabilityReadJobScaling       = "read-job-scaling"
	NamespaceCapabilityScaleJob             = "scale-job"
	NamespaceCapabilitySentinelOverride     = "sentinel-override"
	NamespaceCapabilitySubmitRecommendation = "submit-recommendation"
	NamespaceCapabilityRegisterJob          = "register-job"
	NamespaceCapabilityRevertJob            = "revert-job"
	NamespaceCapabilityDeregisterJob        = "deregister-job"
	NamespaceCapabilityPurgeJob             = "purge-job"
	// NamespaceCapabilityProtectJob sets and clears a job's deletion protection (ours).
	NamespaceCapabilityProtectJob                = "protect-job"
	NamespaceCapabilityEvaluateJob               = "evaluate-job"
	NamespaceCapabilityPlanJob                   = "plan-job"
	NamespaceCapabilityTagJobVersion             = "tag-job-version"
	NamespaceCapabilityStableJob                 = "stable-job"
	NamespaceCapabilityFailDeployment            = "fail-deployment"
	NamespaceCapabilityPauseDeployment           = "pause-deployment"
	NamespaceCapabilityPromoteDeployment         = "promote-deployment"
	NamespaceCapabilityUnblockDeployment         = "unblock-deployment"
	NamespaceCapabilityCancelDeployment          = "cancel-deployment"
	NamespaceCapabilitySetAllocHealthDeployment  = "set-alloc-health-deployment"
	NamespaceCapabilityGCAllocation              = "gc-allocation"
	NamespaceCapabilityPauseAllocation           = "pause-allocation"
	NamespaceCapabilityForcePeriodicJob          = "force-periodic-job"
	NamespaceCapabilityDeleteServiceRegistration = "delete-service-registration"
)

// Capabilities of the other labelled blocks and of variables paths.
const (
	NodePoolCapabilityDeny   = "deny"
	NodePoolCapabilityDelete = "delete"
	NodePoolCapabilityRead   = "read"
	NodePoolCapabilityWrite  = "write"

	HostVolumeCapabilityDeny           = "deny"
	HostVolumeCapabilityMountReadOnly  = "mount-readonly"
	HostVolumeCapabilityMountReadWrite = "mount-readwrite"

	OperatorCapabilityDeny         = "deny"
	OperatorCapabilitySnapshotSave = "snapshot-save"
	OperatorCapabilityLicenseRead  = "license-read"

	VariablesCapabilityDeny    = "deny"
	VariablesCapabilityList    = "list"
	VariablesCapabilityRead    = "read"
	VariablesCapabilityWrite   = "write"
	VariablesCapabilityDestroy = "destroy"
)

// capabilityDef is one row of a capability table. grantedBy names the
// dispositions whose shorthand includes the capability; implies names
// capabilities that holding this one also grants (applied transitively).
type capabilityDef struct {
	name      string
	grantedBy []string
	implies   []string
}

var (
	dispRead      = []string{PolicyRead, PolicyWrite}
	dispWrite     = []string{PolicyWrite}
	dispReadScale = []string{PolicyRead, PolicyWrite, PolicyScale}
	dispScale     = []string{PolicyWrite, PolicyScale}
	dispDeny      = []string{PolicyDeny}
)

// submitJobImplies keeps a hand-written `submit-job` list working for every
// RPC it unlocked before the fine-grained job capabilities existed. purge-job
// is deliberately absent: purging needs purge-job itself (purge-design §1).
var submitJobImplies = []string{
	NamespaceCapabilityRegisterJob, NamespaceCapabilityRevertJob,
	NamespaceCapabilityDeregisterJob, NamespaceCapabilityEvaluateJob,
	NamespaceCapabilityPlanJob, NamespaceCapabilityTagJobVersion,
	NamespaceCapabilityStableJob, NamespaceCapabilityFailDeployment,
	NamespaceCapabilityPauseDeployment, NamespaceCapabilityPromoteDeployment,
	NamespaceCapabilityUnblockDeployment, NamespaceCapabilityCancelDeployment,
	NamespaceCapabilitySetAllocHealthDeployment, NamespaceCapabilityGCAllocation,
	NamespaceCapabilityPauseAllocation, NamespaceCapabilityForcePeriodicJob,
	NamespaceCapabilityDeleteServiceRegistration,
}

// namespaceCapabilities is the one place a namespace capability is added.
// write = upstream's write list plus deregister-job and purge-job, so that
// existing `policy = "write"` documents keep every power they had upstream.
var namespaceCapabilities = newCapabilityTable("namespace", []capabilityDef{
	{name: NamespaceCapabilityDeny, grantedBy: dispDeny},
	{name: NamespaceCapabilityListJobs, grantedBy: dispRead},
	{name: NamespaceCapabilityParseJob, grantedBy: dispRead},
	{name: NamespaceCapabilityReadJob, grantedBy: dispReadScale},
	{name: NamespaceCapabilitySubmitJob, grantedBy: dispWrite, implies: submitJobImplies},
	{name: NamespaceCapabilityDispatchJob, grantedBy: dispWrite},
	{name: NamespaceCapabilityReadLogs, grantedBy: dispWrite},
	{name: NamespaceCapabilityReadFS, grantedBy: dispWrite},
	{name: NamespaceCapabilityAllocExec, grantedBy: dispWrite},
	{name: NamespaceCapabilityAllocNodeExec},
	{name: NamespaceCapabilityAllocLifecycle, grantedBy: dispWrite},
	{name: NamespaceCapabilityCSIRegisterPlugin},
	{name: NamespaceCapabilityCSIWriteVolume, grantedBy: dispWrite},
	{name: NamespaceCapabilityCSIReadVolume, grantedBy: dispRead},
	{name: NamespaceCapabilityCSIListVolume, grantedBy: dispRead},
	{name: NamespaceCapabilityCSIMountVolume, grantedBy: dispWrite},
	{name: NamespaceCapabilityHostVolumeCreate, grantedBy: dispWrite,
		implies: []string{NamespaceCapabilityHostVolumeRead}},
	{name: NamespaceCapabilityHostVolumeRegister,
		implies: []string{NamespaceCapabilityHostVolumeCreate, NamespaceCapabilityHostVolumeRead}},
	{name: NamespaceCapabilityHostVolumeRead, grantedBy: dispRead},
	{name: NamespaceCapabilityHostVolumeWrite,
		implies: []string{NamespaceCapabilityHostVolumeRegister, NamespaceCapabilityHostVolumeCreate,
			NamespaceCapabilityHostVolumeDelete, NamespaceCapabilityHostVolumeRead}},
	{name: NamespaceCapabilityHostVolumeDelete},
	{name: NamespaceCapabilityListScalingPolicies, grantedBy: dispReadScale},
	{name: NamespaceCapabilityReadScalingPolicy, grantedBy: dispReadScale},
	{name: NamespaceCapabilityReadJobScaling, grantedBy: dispReadScale},
	{name: NamespaceCapabilityScaleJob, grantedBy: dispScale},
	{name: NamespaceCapabilitySentinelOverride},
	{name: NamespaceCapabilitySubmitRecommendation, grantedBy: dispScale},
	{name: NamespaceCapabilityRegisterJob},
	{name: NamespaceCapabilityRevertJob},
	{name: NamespaceCapabilityDeregisterJob, grantedBy: dispWrite},
	// Purging includes stopping: a purge-only token may also stop jobs.
	{name: NamespaceCapabilityPurgeJob, grantedBy: dispWrite,
		implies: []string{NamespaceCapabilityDeregisterJob}},
	// In no shorthand: protection exists to hold against whoever may purge, so only an
	// explicit grant (or a management token) may lift it.
	{name: NamespaceCapabilityProtectJob},
	{name: NamespaceCapabilityEvaluateJob},
	{name: NamespaceCapabilityPlanJob},
	{name: NamespaceCapabilityTagJobVersion},
	{name: NamespaceCapabilityStableJob},
	{name: NamespaceCapabilityFailDeployment},
	{name: NamespaceCapabilityPauseDeployment},
	{name: NamespaceCapabilityPromoteDeployment},
	{name: NamespaceCapabilityUnblockDeployment},
	{name: NamespaceCapabilityCancelDeployment},
	{name: NamespaceCapabilitySetAllocHealthDeployment},
	{name: NamespaceCapabilityGCAllocation},
	{name: NamespaceCapabilityPauseAllocation},
	{name: NamespaceCapabilityForcePeriodicJob},
	{name: NamespaceCapabilityDeleteServiceRegistration},
})

var nodePoolCapabilities = newCapabilityTable("node pool", []capabilityDef{
	{name: NodePoolCapabilityDeny, grantedBy: dispDeny},
	{name: NodePoolCapabilityDelete, grantedBy: dispWrite},
	{name: NodePoolCapabilityRead, grantedBy: dispRead},
	{name: NodePoolCapabilityWrite, grantedBy: dispWrite},
})

var hostVolumeCapabilities = newCapabilityTable("host volume", []capabilityDef{
	{name: HostVolumeCapabilityDeny, grantedBy: dispDeny},
	{name: HostVolumeCapabilityMountReadOnly, grantedBy: dispRead},
	{name: HostVolumeCapabilityMountReadWrite, grantedBy: dispWrite},
})

var operatorCapabilities = newCapabilityTable("operator", []capabilityDef{
	{name: OperatorCapabilityDeny, grantedBy: dispDeny},
	{name: OperatorCapabilitySnapshotSave, grantedBy: dispWrite},
	{name: OperatorCapabilityLicenseRead, grantedBy: dispRead},
})

// Variables paths have no `policy` shorthand, so no row has grantedBy.
var variablesCapabilities = newCapabilityTable("variable", []capabilityDef{
	{name: VariablesCapabilityDeny},
	{name: VariablesCapabilityList},
	{name: VariablesCapabilityRead, implies: []string{VariablesCapabilityList}},
	{name: VariablesCapabilityWrite},
	{name: VariablesCapabilityDestroy},
})

// coarseDispositions lists what the unlabelled blocks without capabilities
// accept (operator has a table); "list" exists only for plugins.
var coarseDispositions = map[string][]string{
	"agent":  {PolicyDeny, PolicyRead, PolicyWrite},
	"node":   {PolicyDeny, PolicyRead, PolicyWrite},
	"quota":  {PolicyDeny, PolicyRead, PolicyWrite},
	"plugin": {PolicyDeny, PolicyList, PolicyRead, PolicyWrite},
}

// dispositionRank orders coarse dispositions by permissiveness. Deny is not
// ranked because it wins outright.
var dispositionRank = map[string]int{PolicyList: 1, PolicyRead: 2, PolicyWrite: 3}

// capabilityTable is a table plus the lookups derived from it at init.
type capabilityTable struct {
	kind         string // used in error messages
	defs         []capabilityDef
	byName       map[string]capabilityDef
	dispositions map[string][]string // disposition -> sorted expansion
}

func newCapabilityTable(kind string, defs []capabilityDef) *capabilityTable {
	t := &capabilityTable{
		kind:         kind,
		defs:         defs,
		byName:       make(map[string]capabilityDef, len(defs)),
		dispositions: map[string][]string{},
	}
	for _, d := range defs {
		if _, dup := t.byName[d.name]; dup {
			panic("acl: duplicate " + kind + " capability " + d.name)
		}
		t.byName[d.name] = d
	}
	granted := map[string][]string{}
	for _, d := range defs {
		for _, disp := range d.grantedBy {
			granted[disp] = append(granted[disp], d.name)
		}
	}
	for disp, caps := range granted {
		t.dispositions[disp] = t.closure(caps)
	}
	return t
}

func (t *capabilityTable) validCapability(name string) bool {
	_, ok := t.byName[name]
	return ok
}

func (t *capabilityTable) validDisposition(disp string) bool {
	_, ok := t.dispositions[disp]
	return ok
}

// expand returns the capabilities a disposition grants, implications
// included, sorted. Unknown dispositions grant nothing.
func (t *capabilityTable) expand(disp string) []string {
	return append([]string(nil), t.dispositions[disp]...)
}

// closure adds every transitively implied capability and collapses the set
// to {deny} when deny is present, so that callers never see a mixed set.
// Unknown names are kept: validation is not this function's job, and a name
// no check asks for is harmless.
func (t *capabilityTable) closure(caps []string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(c string) {
		if seen[c] {
			return
		}
		seen[c] = true
		for _, imp := range t.byName[c].implies {
			walk(imp)
		}
	}
	for _, c := range caps {
		walk(c)
	}
	if seen[PolicyDeny] {
		return []string{PolicyDeny}
	}
	out := make([]string, 0, len(seen))
	for c := range seen {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}
