package agent

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nomadfork/nomad/internal/connlimit"
	"github.com/nomadfork/nomad/nomad"
	"github.com/nomadfork/nomad/structs"
)

// maxRequestBodySize bounds every request body; a larger one is refused with 413 before
// anything is decoded, so one request cannot make the agent buffer an arbitrary amount.
const maxRequestBodySize = 10 << 20

// errInvalidMethod is what every route answers to a verb it does not serve (upstream's text).
var errInvalidMethod = structs.NewErrCode(http.StatusMethodNotAllowed, "Invalid method")

// HTTPServer serves the /v1 API of one agent. Handlers only parse the request, call one
// server RPC through rpc and return its answer; authorisation, validation and defaults live
// behind the RPC boundary, so a client-only agent answers as a server agent does.
type HTTPServer struct {
	agent *Agent
	// srv is the agent's own server, nil on a client-only agent: only what acts on that
	// server itself (gossip, scheduling workers, its state for relays) reads it.
	srv *nomad.Server
	// rpc reaches the servers' RPCs: every handler calls the cluster through it.
	rpc      clusterRPC
	logger   hclog.Logger
	listener net.Listener
	httpSrv  *http.Server
	mux      *http.ServeMux
	// conns counts the connections each client address holds
	// (limits.http_max_conns_per_client).
	conns *connlimit.Limiter
}

// handlerFunc is one endpoint. It returns the value to encode as JSON, or an error whose HTTP
// status comes from structs.ErrorCode. A handler that wrote the response itself (a stream)
// returns nil, nil.
type handlerFunc func(w http.ResponseWriter, r *http.Request) (any, error)

// methods maps HTTP verbs to the handlers of one path.
type methods map[string]handlerFunc

func newHTTPServer(a *Agent, ln net.Listener) *HTTPServer {
	s := &HTTPServer{
		agent:    a,
		srv:      a.server,
		logger:   a.logger.Named("http"),
		listener: ln,
		mux:      http.NewServeMux(),
	}
	if a.server != nil {
		s.rpc = serverRPC{srv: a.server}
	} else {
		s.rpc = a.rpcServers
	}
	s.registerHandlers(s.mux)
	bodyIdle := httpBodyIdleTimeout
	if a.config.httpBodyIdleTimeout > 0 {
		bodyIdle = a.config.httpBodyIdleTimeout
	}
	headerWait := headerTimeout(a.httpTLS != nil, a.config.Limits)
	if a.config.httpHeaderTimeout > 0 && a.httpTLS == nil {
		headerWait = a.config.httpHeaderTimeout
	}
	s.httpSrv = &http.Server{
		Handler:           withBodyDeadline(s.mux, bodyIdle),
		ReadHeaderTimeout: headerWait,
		IdleTimeout:       2 * time.Minute,
		// Requests inherit the agent's lifetime, so waits the agent runs itself end at
		// shutdown instead of holding it up.
		BaseContext: func(net.Listener) context.Context { return a.ctx },
		ErrorLog:    s.logger.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true}),
	}
	return s
}

// registerHandlers installs every route: the whole HTTP API in one table, grouped by the file
// holding the handlers. The ACL matrix test reads these s.handle calls as literals, so each
// spells its pattern and methods out.
func (s *HTTPServer) registerHandlers(mux *http.ServeMux) {
	// job
	s.handle(mux, "/v1/jobs", methods{"GET": s.jobList, "PUT": s.jobsRegister, "POST": s.jobsRegister})
	s.handle(mux, "/v1/jobs/statuses", methods{"GET": s.jobStatuses, "POST": s.jobStatuses, "PUT": s.jobStatuses})
	s.handle(mux, "/v1/jobs/parse", methods{"PUT": s.jobsParse, "POST": s.jobsParse})
	s.handle(mux, "/v1/job/{id}", methods{"GET": s.jobRead, "PUT": s.jobUpdate, "POST": s.jobUpdate, "DELETE": s.jobDeregister})
	s.handle(mux, "/v1/job/{id}/versions", methods{"GET": s.jobVersions})
	s.handle(mux, "/v1/job/{id}/versions/{tag}/tag", methods{"PUT": s.jobTag, "POST": s.jobTag, "DELETE": s.jobTag})
	s.handle(mux, "/v1/job/{id}/summary", methods{"GET": s.jobSummary})
	s.handle(mux, "/v1/job/{id}/stable", methods{"PUT": s.jobStable, "POST": s.jobStable})
	s.handle(mux, "/v1/job/{id}/revert", methods{"PUT": s.jobRevert, "POST": s.jobRevert})
	s.handle(mux, "/v1/job/{id}/scale", methods{"GET": s.jobScaleStatus, "PUT": s.jobScale, "POST": s.jobScale})
	s.handle(mux, "/v1/job/{id}/evaluations", methods{"GET": s.jobEvaluations})
	s.handle(mux, "/v1/job/{id}/allocations", methods{"GET": s.jobAllocations})
	s.handle(mux, "/v1/job/{id}/deployment", methods{"GET": s.jobDeployment})
	s.handle(mux, "/v1/job/{id}/deployments", methods{"GET": s.jobDeployments})
	s.handle(mux, "/v1/job/{id}/promote", methods{"PUT": s.jobPromote, "POST": s.jobPromote})

	// eval
	s.handle(mux, "/v1/evaluations", methods{"GET": s.evalList, "DELETE": s.evalDelete})
	s.handle(mux, "/v1/evaluations/count", methods{"GET": s.evalCount})
	s.handle(mux, "/v1/evaluation/{id}", methods{"GET": s.evalRead})
	s.handle(mux, "/v1/evaluation/{id}/allocations", methods{"GET": s.evalAllocations})

	// namespace
	s.handle(mux, "/v1/namespaces", methods{"GET": s.namespaceList})
	// The client library creates with PUT /v1/namespace, the name only in the body.
	s.handle(mux, "/v1/namespace", methods{"PUT": s.namespaceUpsert, "POST": s.namespaceUpsert})
	s.handle(mux, "/v1/namespace/{name}", methods{
		"GET": s.namespaceRead, "PUT": s.namespaceUpsert, "POST": s.namespaceUpsert, "DELETE": s.namespaceDelete,
	})

	// status
	s.handle(mux, "/v1/status/leader", methods{"GET": s.statusLeader})
	s.handle(mux, "/v1/status/peers", methods{"GET": s.statusPeers})
	s.handle(mux, "/v1/agent/self", methods{"GET": s.agentSelf})
	s.handle(mux, "/v1/regions", methods{"GET": s.regions})
	s.handle(mux, "/v1/system/gc", methods{"PUT": s.systemGC, "POST": s.systemGC})
	s.handle(mux, "/v1/system/reconcile/summaries", methods{"PUT": s.systemReconcileSummaries, "POST": s.systemReconcileSummaries})

	// agent
	s.handle(mux, "/v1/agent/members", methods{"GET": s.agentMembers})
	s.handle(mux, "/v1/agent/join", methods{"PUT": s.agentJoin, "POST": s.agentJoin})
	s.handle(mux, "/v1/agent/force-leave", methods{"PUT": s.agentForceLeave, "POST": s.agentForceLeave})

	// agent host
	s.handle(mux, "/v1/agent/host", methods{"GET": s.agentHost})
	s.handle(mux, "/v1/agent/servers", methods{"GET": s.agentServersList, "PUT": s.agentServersSet, "POST": s.agentServersSet})

	// agent runtime
	s.handle(mux, "/v1/agent/health", methods{"GET": s.agentHealth})
	s.handle(mux, "/v1/agent/pprof/{profile}", methods{"GET": s.agentPprof})
	s.handle(mux, "/v1/agent/schedulers", methods{"GET": s.agentSchedulers})
	s.handle(mux, "/v1/agent/schedulers/config", methods{
		"GET": s.agentSchedulerConfig, "PUT": s.agentSchedulerConfigWrite, "POST": s.agentSchedulerConfigWrite,
	})

	// agent reload
	s.handle(mux, "/v1/agent/reload", methods{"PUT": s.agentReload, "POST": s.agentReload})

	// operator
	s.handle(mux, "/v1/operator/raft/configuration", methods{"GET": s.operatorRaftConfiguration})
	s.handle(mux, "/v1/operator/raft/peer", methods{"DELETE": s.operatorRaftRemovePeer})
	s.handle(mux, "/v1/operator/raft/transfer-leadership", methods{"PUT": s.operatorRaftTransferLeadership, "POST": s.operatorRaftTransferLeadership})
	s.handle(mux, "/v1/operator/autopilot/configuration", methods{
		"GET": s.operatorAutopilotGet, "PUT": s.operatorAutopilotSet, "POST": s.operatorAutopilotSet,
	})
	s.handle(mux, "/v1/operator/autopilot/health", methods{"GET": s.operatorAutopilotHealth})

	// operator snapshot
	s.handle(mux, "/v1/operator/snapshot", methods{"GET": s.operatorSnapshotSave, "PUT": s.operatorSnapshotRestore})

	// acl
	s.handle(mux, "/v1/acl/bootstrap", methods{"PUT": s.aclBootstrap, "POST": s.aclBootstrap})
	s.handle(mux, "/v1/acl/policies", methods{"GET": s.aclPolicyList})
	s.handle(mux, "/v1/acl/policy/self", methods{"GET": s.aclPolicySelf})
	s.handle(mux, "/v1/acl/policy/{name}", methods{
		"GET": s.aclPolicyRead, "PUT": s.aclPolicyWrite, "POST": s.aclPolicyWrite, "DELETE": s.aclPolicyDelete,
	})
	s.handle(mux, "/v1/acl/tokens", methods{"GET": s.aclTokenList})
	s.handle(mux, "/v1/acl/token", methods{"PUT": s.aclTokenWrite, "POST": s.aclTokenWrite})
	s.handle(mux, "/v1/acl/token/self", methods{"GET": s.aclTokenSelf})
	s.handle(mux, "/v1/acl/token/onetime", methods{"PUT": s.aclOneTimeTokenCreate, "POST": s.aclOneTimeTokenCreate})
	s.handle(mux, "/v1/acl/token/onetime/exchange", methods{"PUT": s.aclOneTimeTokenExchange, "POST": s.aclOneTimeTokenExchange})
	s.handle(mux, "/v1/acl/token/{accessor}", methods{
		"GET": s.aclTokenRead, "PUT": s.aclTokenWrite, "POST": s.aclTokenWrite, "DELETE": s.aclTokenDelete,
	})
	s.handle(mux, "/v1/acl/roles", methods{"GET": s.aclRoleList})
	s.handle(mux, "/v1/acl/role", methods{"PUT": s.aclRoleWrite, "POST": s.aclRoleWrite})
	s.handle(mux, "/v1/acl/role/name/{name}", methods{"GET": s.aclRoleReadByName})
	s.handle(mux, "/v1/acl/role/{id}", methods{
		"GET": s.aclRoleRead, "PUT": s.aclRoleWrite, "POST": s.aclRoleWrite, "DELETE": s.aclRoleDelete,
	})

	// acl auth
	s.handle(mux, "/v1/acl/auth-methods", methods{"GET": s.aclAuthMethodList})
	s.handle(mux, "/v1/acl/auth-method", methods{"PUT": s.aclAuthMethodWrite, "POST": s.aclAuthMethodWrite})
	s.handle(mux, "/v1/acl/auth-method/{name}", methods{
		"GET": s.aclAuthMethodRead, "PUT": s.aclAuthMethodWrite, "POST": s.aclAuthMethodWrite, "DELETE": s.aclAuthMethodDelete,
	})
	s.handle(mux, "/v1/acl/binding-rules", methods{"GET": s.aclBindingRuleList})
	s.handle(mux, "/v1/acl/binding-rule", methods{"PUT": s.aclBindingRuleWrite, "POST": s.aclBindingRuleWrite})
	s.handle(mux, "/v1/acl/binding-rule/{id}", methods{
		"GET": s.aclBindingRuleRead, "PUT": s.aclBindingRuleWrite, "POST": s.aclBindingRuleWrite, "DELETE": s.aclBindingRuleDelete,
	})
	s.handle(mux, "/v1/acl/login", methods{"PUT": s.aclLogin, "POST": s.aclLogin})

	// acl identity
	s.handle(mux, "/v1/acl/identity/client-introduction-token", methods{
		"PUT": s.aclClientIntroductionToken, "POST": s.aclClientIntroductionToken,
	})

	// event
	s.handle(mux, "/v1/event/stream", methods{"GET": s.eventStream})

	// event sink
	// Event sinks (ours): receivers the leader POSTs selected events to, signed, at least once.
	// Every route needs a management token.
	s.handle(mux, "/v1/event/sinks", methods{"GET": s.eventSinkList})
	s.handle(mux, "/v1/event/sink/{id}", methods{"GET": s.eventSinkRead, "PUT": s.eventSinkWrite, "POST": s.eventSinkWrite,
		"DELETE": s.eventSinkDelete})

	// purge history
	s.handle(mux, "/v1/jobs/purged", methods{"GET": s.purgeRecordList})
	s.handle(mux, "/v1/jobs/purged/{id}", methods{"GET": s.purgeRecordRead})
	s.handle(mux, "/v1/jobs/purged/verify", methods{"GET": s.purgeChainVerify})
	s.handle(mux, "/v1/jobs/purged/{id}/restore", methods{"PUT": s.purgeRecordRestore, "POST": s.purgeRecordRestore})

	// job protection
	s.handle(mux, "/v1/job/{id}/protection", methods{"GET": s.jobProtectionRead, "PUT": s.jobProtectionWrite, "POST": s.jobProtectionWrite})
	s.handle(mux, "/v1/job/{id}/purge-plan", methods{"GET": s.jobPurgePlan})

	// alloc
	s.handle(mux, "/v1/allocations", methods{"GET": s.allocList})
	s.handle(mux, "/v1/allocation/{id}", methods{"GET": s.allocRead})
	s.handle(mux, "/v1/allocation/{id}/stop", methods{"PUT": s.allocStop, "POST": s.allocStop})

	// node
	s.handle(mux, "/v1/nodes", methods{"GET": s.nodeList})
	s.handle(mux, "/v1/node/{id}", methods{"GET": s.nodeRead})
	// One wildcard for the node's sub-resources, not /v1/node/{id}/allocations: that pattern
	// and /v1/node/pool/{name} would both match /v1/node/pool/allocations with neither more
	// specific, which ServeMux refuses. /v1/node/pool/{name} is more specific than this one,
	// so pool paths reach the pool handlers (TestRoutes_ReachTheirHandlers).
	// One pattern for every /v1/node/:id/<sub>: Go's mux refuses /v1/node/{id}/drain beside
	// /v1/node/pool/{name} (neither is more specific), so the subresource picks the handler.
	s.handle(mux, "/v1/node/{id}/{sub}", methods{"GET": s.nodeSubresource, "PUT": s.nodeSubresource, "POST": s.nodeSubresource})

	// client alloc
	s.handle(mux, "/v1/client/allocation/{alloc_id}/exec", methods{"GET": s.allocExec})

	// client alloc control
	s.handle(mux, "/v1/client/allocation/{alloc_id}/signal", methods{"PUT": s.allocSignal, "POST": s.allocSignal})
	s.handle(mux, "/v1/client/allocation/{alloc_id}/restart", methods{"PUT": s.allocRestart, "POST": s.allocRestart})
	s.handle(mux, "/v1/client/allocation/{alloc_id}/stats", methods{"GET": s.allocStats})
	s.handle(mux, "/v1/client/allocation/{alloc_id}/checks", methods{"GET": s.allocChecks})
	s.handle(mux, "/v1/client/stats", methods{"GET": s.clientStats})

	// node meta
	s.handle(mux, "/v1/client/metadata", methods{"GET": s.nodeMetaRead, "POST": s.nodeMetaApply, "PUT": s.nodeMetaApply})

	// node identity
	s.handle(mux, "/v1/client/identity", methods{"GET": s.nodeIdentityGet})
	s.handle(mux, "/v1/client/identity/renew", methods{"POST": s.nodeIdentityRenew, "PUT": s.nodeIdentityRenew})

	// fs
	s.handle(mux, "/v1/client/fs/logs/{alloc_id}", methods{"GET": s.allocLogs})
	s.handle(mux, "/v1/client/fs/ls/{alloc_id}", methods{"GET": s.fsHandler(fsRouteList)})
	s.handle(mux, "/v1/client/fs/stat/{alloc_id}", methods{"GET": s.fsHandler(fsRouteStat)})
	s.handle(mux, "/v1/client/fs/cat/{alloc_id}", methods{"GET": s.fsHandler(fsRouteCat)})
	s.handle(mux, "/v1/client/fs/readat/{alloc_id}", methods{"GET": s.fsHandler(fsRouteReadAt)})
	s.handle(mux, "/v1/client/fs/stream/{alloc_id}", methods{"GET": s.fsHandler(fsRouteStream)})

	// job eval
	s.handle(mux, "/v1/job/{id}/evaluate", methods{"PUT": s.jobEvaluate, "POST": s.jobEvaluate})
	s.handle(mux, "/v1/job/{id}/periodic/force", methods{"PUT": s.jobPeriodicForce, "POST": s.jobPeriodicForce})

	// job dispatch
	s.handle(mux, "/v1/job/{id}/dispatch", methods{"PUT": s.jobDispatch, "POST": s.jobDispatch})

	// job plan
	s.handle(mux, "/v1/job/{id}/plan", methods{"PUT": s.jobPlan, "POST": s.jobPlan})
	s.handle(mux, "/v1/validate/job", methods{"PUT": s.jobValidate, "POST": s.jobValidate})

	// job submission
	s.handle(mux, "/v1/job/{id}/submission", methods{"GET": s.jobSubmission})

	// monitor
	s.handle(mux, "/v1/agent/monitor", methods{"GET": s.agentMonitor})

	// metrics
	// Upstream requires no ACL for metrics: they carry names and numbers, no secrets.
	s.handle(mux, "/v1/metrics", methods{"GET": s.metrics})

	// keyring
	// No ACL, as upstream: verifiers of workload identities fetch the public keys anonymously.
	s.handle(mux, "/.well-known/jwks.json", methods{"GET": s.jwks})
	// Management only, as upstream.
	s.handle(mux, "/v1/operator/keyring/keys", methods{"GET": s.keyringList})
	s.handle(mux, "/v1/operator/keyring/rotate", methods{"PUT": s.keyringRotate, "POST": s.keyringRotate})
	s.handle(mux, "/v1/operator/keyring/key/{id}", methods{"DELETE": s.keyringDelete})

	// deployment
	s.handle(mux, "/v1/deployments", methods{"GET": s.deploymentList})
	s.handle(mux, "/v1/deployment/{id}", methods{"GET": s.deploymentRead})
	s.handle(mux, "/v1/deployment/allocations/{id}", methods{"GET": s.deploymentAllocations})
	s.handle(mux, "/v1/deployment/fail/{id}", methods{"PUT": s.deploymentFail, "POST": s.deploymentFail})
	s.handle(mux, "/v1/deployment/pause/{id}", methods{"PUT": s.deploymentPause, "POST": s.deploymentPause})
	s.handle(mux, "/v1/deployment/promote/{id}", methods{"PUT": s.deploymentPromote, "POST": s.deploymentPromote})
	s.handle(mux, "/v1/deployment/allocation-health/{id}", methods{"PUT": s.deploymentAllocHealth, "POST": s.deploymentAllocHealth})
	s.handle(mux, "/v1/deployment/unblock/{id}", methods{"PUT": s.deploymentUnblock, "POST": s.deploymentUnblock})

	// variable
	s.handle(mux, "/v1/vars", methods{"GET": s.variablesList})
	s.handle(mux, "/v1/var/{path...}", methods{
		"GET": s.variableRead, "PUT": s.variablePut, "DELETE": s.variableDelete,
	})

	// operator scheduler
	s.handle(mux, "/v1/operator/scheduler/configuration", methods{
		"GET": s.schedulerConfigRead, "PUT": s.schedulerConfigWrite, "POST": s.schedulerConfigWrite,
	})

	// node pool
	s.handle(mux, "/v1/node/pools", methods{"GET": s.nodePoolList, "PUT": s.nodePoolUpsert, "POST": s.nodePoolUpsert})
	s.handle(mux, "/v1/node/pool/{name}", methods{
		"GET": s.nodePoolRead, "PUT": s.nodePoolUpsert, "POST": s.nodePoolUpsert, "DELETE": s.nodePoolDelete,
	})
	s.handle(mux, "/v1/node/pool/{name}/jobs", methods{"GET": s.nodePoolJobs})
	s.handle(mux, "/v1/node/pool/{name}/nodes", methods{"GET": s.nodePoolNodes})

	// search
	s.handle(mux, "/v1/search", methods{"PUT": s.searchPrefix, "POST": s.searchPrefix})
	s.handle(mux, "/v1/search/fuzzy", methods{"PUT": s.searchFuzzy, "POST": s.searchFuzzy})

	// scaling
	s.handle(mux, "/v1/scaling/policies", methods{"GET": s.scalingPoliciesList})
	s.handle(mux, "/v1/scaling/policy/{id}", methods{"GET": s.scalingPolicyRead})

	// volume
	s.handle(mux, "/v1/volumes", methods{"GET": s.volumeList})
	s.handle(mux, "/v1/volume/{type}/{id}", methods{
		"GET": s.volumeRead, "PUT": s.volumeWrite, "POST": s.volumeWrite, "DELETE": s.volumeWrite,
	})
	s.handle(mux, "/v1/volume/{type}/{id}/{action}", methods{"PUT": s.volumeWrite, "POST": s.volumeWrite, "DELETE": s.volumeWrite})
	s.handle(mux, "/v1/plugins", methods{"GET": s.pluginList})
	s.handle(mux, "/v1/plugin/{type}/{id}", methods{"GET": s.pluginRead})

	// service
	// Routes of `provider = "nomad"` service registrations. The job and allocation subresources
	// are registered here, next to the rest of the service API, as their own patterns: the mux
	// picks the most specific one, so they neither shadow nor are shadowed by /v1/job/{id} and
	// /v1/allocation/{id} (routes_test.go checks).
	s.handle(mux, "/v1/services", methods{"GET": s.serviceList})
	s.handle(mux, "/v1/service/{name}", methods{"GET": s.serviceRead})
	s.handle(mux, "/v1/service/{name}/{id}", methods{"DELETE": s.serviceDelete})
	s.handle(mux, "/v1/job/{id}/services", methods{"GET": s.jobServices})
	s.handle(mux, "/v1/allocation/{id}/services", methods{"GET": s.allocServices})

	// enterprise: Sentinel, quota, recommendation and licence routes answer as upstream's
	// community edition does, 501 for every verb, whoever asks.
	s.handle(mux, "/v1/sentinel/policies", methods{"GET": s.enterpriseOnly, "PUT": s.enterpriseOnly, "POST": s.enterpriseOnly, "DELETE": s.enterpriseOnly})
	s.handle(mux, "/v1/sentinel/policy/{name}", methods{"GET": s.enterpriseOnly, "PUT": s.enterpriseOnly, "POST": s.enterpriseOnly, "DELETE": s.enterpriseOnly})
	s.handle(mux, "/v1/quotas", methods{"GET": s.enterpriseOnly, "PUT": s.enterpriseOnly, "POST": s.enterpriseOnly, "DELETE": s.enterpriseOnly})
	s.handle(mux, "/v1/quota", methods{"GET": s.enterpriseOnly, "PUT": s.enterpriseOnly, "POST": s.enterpriseOnly, "DELETE": s.enterpriseOnly})
	s.handle(mux, "/v1/quota/{name}", methods{"GET": s.enterpriseOnly, "PUT": s.enterpriseOnly, "POST": s.enterpriseOnly, "DELETE": s.enterpriseOnly})
	s.handle(mux, "/v1/quota/usage/{name}", methods{"GET": s.enterpriseOnly, "PUT": s.enterpriseOnly, "POST": s.enterpriseOnly, "DELETE": s.enterpriseOnly})
	s.handle(mux, "/v1/quota-usages", methods{"GET": s.enterpriseOnly, "PUT": s.enterpriseOnly, "POST": s.enterpriseOnly, "DELETE": s.enterpriseOnly})
	s.handle(mux, "/v1/recommendations", methods{"GET": s.enterpriseOnly, "PUT": s.enterpriseOnly, "POST": s.enterpriseOnly, "DELETE": s.enterpriseOnly})
	s.handle(mux, "/v1/recommendations/apply", methods{"GET": s.enterpriseOnly, "PUT": s.enterpriseOnly, "POST": s.enterpriseOnly, "DELETE": s.enterpriseOnly})
	s.handle(mux, "/v1/recommendation", methods{"GET": s.enterpriseOnly, "PUT": s.enterpriseOnly, "POST": s.enterpriseOnly, "DELETE": s.enterpriseOnly})
	s.handle(mux, "/v1/recommendation/{id}", methods{"GET": s.enterpriseOnly, "PUT": s.enterpriseOnly, "POST": s.enterpriseOnly, "DELETE": s.enterpriseOnly})
	s.handle(mux, "/v1/operator/license", methods{"GET": s.enterpriseOnly, "PUT": s.enterpriseOnly, "POST": s.enterpriseOnly, "DELETE": s.enterpriseOnly})
	if s.agent.config.EnableDebug {
		s.registerDebugRoutes(mux)
	}
	s.registerUIRoutes(mux)

	// Anything else under any path is unknown.
	mux.Handle("/", s.wrap(func(_ http.ResponseWriter, r *http.Request) (any, error) {
		return nil, structs.NewErrCode(http.StatusNotFound, "Invalid URL path %q", r.URL.Path)
	}))
}

// handle registers the handlers of one path pattern; any other verb gets 405.
func (s *HTTPServer) handle(mux *http.ServeMux, pattern string, m methods) {
	mux.Handle(pattern, s.wrap(func(w http.ResponseWriter, r *http.Request) (any, error) {
		fn, ok := m[r.Method]
		if !ok {
			return nil, errInvalidMethod
		}
		return fn(w, r)
	}))
}

func (s *HTTPServer) serve() {
	if err := s.httpSrv.Serve(s.listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
		s.logger.Error("HTTP server stopped", "error", err)
	}
}

// shutdown stops accepting requests and waits for those in flight until ctx ends, then
// closes what is left.
func (s *HTTPServer) shutdown(ctx context.Context) {
	if err := s.httpSrv.Shutdown(ctx); err != nil {
		_ = s.httpSrv.Close()
	}
}

// requestOptions are the common query parameters, parsed once by wrap.
type requestOptions struct {
	query structs.QueryOptions
	write structs.WriteRequest
	// pretty asks for indented JSON.
	pretty bool
}

type requestOptionsKey struct{}

// queryOptions returns the request's common read parameters.
func queryOptions(r *http.Request) structs.QueryOptions {
	if o, ok := r.Context().Value(requestOptionsKey{}).(*requestOptions); ok {
		return o.query
	}
	return structs.QueryOptions{Namespace: structs.DefaultNamespace}
}

// writeRequest returns the request's common write parameters.
func writeRequest(r *http.Request) structs.WriteRequest {
	if o, ok := r.Context().Value(requestOptionsKey{}).(*requestOptions); ok {
		return o.write
	}
	return structs.WriteRequest{Namespace: structs.DefaultNamespace}
}

// parseRequestOptions reads region, namespace, index, wait, stale, prefix, pretty, the
// paging parameters (filter, per_page, next_token, reverse) and the token. The token comes only from headers, never from the URL, so it cannot end up in logs.
func (s *HTTPServer) parseRequestOptions(r *http.Request) (*requestOptions, error) {
	q := r.URL.Query()
	o := &requestOptions{}

	region := q.Get("region")
	if region == "" {
		region = s.agent.config.Region
	}
	if region != s.agent.config.Region {
		return nil, structs.NewErrCode(http.StatusInternalServerError, "No path to region")
	}
	namespace := q.Get("namespace")
	if namespace == "" {
		namespace = structs.DefaultNamespace
	}
	token := r.Header.Get("X-Nomad-Token")
	if token == "" {
		if auth := r.Header.Get("Authorization"); len(auth) > 7 && strings.EqualFold(auth[:7], "bearer ") {
			token = strings.TrimSpace(auth[7:])
		}
	}

	o.query = structs.QueryOptions{Region: region, Namespace: namespace, Prefix: q.Get("prefix"), AuthToken: token}
	o.write = structs.WriteRequest{Region: region, Namespace: namespace, AuthToken: token}

	if raw := q.Get("index"); raw != "" {
		index, err := strconv.ParseUint(raw, 10, 64)
		if err != nil {
			return nil, structs.BadRequest("Unable to parse index: %v", err)
		}
		o.query.MinQueryIndex = index
	}
	if raw := q.Get("wait"); raw != "" {
		wait, err := time.ParseDuration(raw)
		if err != nil {
			return nil, structs.BadRequest("Invalid wait time: %v", err)
		}
		if wait < 0 {
			return nil, structs.BadRequest("Invalid wait time: must not be negative")
		}
		o.query.MaxQueryTime = wait
	}
	o.query.Filter = q.Get("filter")
	o.query.NextToken = q.Get("next_token")
	if raw := q.Get("per_page"); raw != "" {
		perPage, err := strconv.ParseInt(raw, 10, 32)
		if err != nil || perPage < 0 {
			return nil, structs.BadRequest("Invalid per_page %q: it must be an integer from 0 to %d", raw, math.MaxInt32)
		}
		o.query.PerPage = int32(perPage)
	}
	var err error
	if o.query.Reverse, err = flagParam(q, "reverse"); err != nil {
		return nil, err
	}
	if o.query.AllowStale, err = flagParam(q, "stale"); err != nil {
		return nil, err
	}
	if o.pretty, err = flagParam(q, "pretty"); err != nil {
		return nil, err
	}
	return o, nil
}

// flagParam reads a parameter that is true when present without a value (?stale, ?pretty).
func flagParam(q map[string][]string, name string) (bool, error) {
	vals, ok := q[name]
	if !ok {
		return false, nil
	}
	if len(vals) == 0 || vals[0] == "" {
		return true, nil
	}
	return parseBool(name, vals[0])
}

// wrap turns a handlerFunc into an http.Handler: it bounds the body, parses the common
// parameters, recovers panics, encodes the result and maps errors to status codes with
// structs.ErrorCode (never by their text).
func (s *HTTPServer) wrap(fn handlerFunc) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		start := time.Now()
		w := &statusWriter{ResponseWriter: rw}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.logger.Error("panic in HTTP handler", "method", r.Method, "path", r.URL.Path,
					"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if !w.wroteHeader {
					s.writeError(w, r, structs.NewErrCode(http.StatusInternalServerError, "internal server error"))
				}
			}
			// The path only: query strings are the caller's business and headers hold tokens.
			s.logger.Debug("request complete", "method", r.Method, "path", r.URL.Path,
				"status", w.status, "duration", time.Since(start))
		}()

		if !boundsOwnBody[r.URL.Path] {
			if r.ContentLength > maxRequestBodySize {
				s.writeError(w, r, errBodyTooLarge)
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, maxRequestBodySize)
		}

		opts, err := s.parseRequestOptions(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), requestOptionsKey{}, opts))

		result, err := fn(w, r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if w.wroteHeader {
			return
		}
		s.writeJSON(w, r, opts.pretty, result)
	})
}

// boundsOwnBody names the paths whose handlers take bodies past maxRequestBodySize and bound
// them with a limit of their own (a snapshot upload).
var boundsOwnBody = map[string]bool{"/v1/operator/snapshot": true}

var errBodyTooLarge = structs.NewErrCode(http.StatusRequestEntityTooLarge,
	"Request body too large: the limit is %d bytes", maxRequestBodySize)

func (s *HTTPServer) writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := structs.ErrorCode(err)
	// A full disk is logged by the server that refused, at most once per interval; a line per
	// refused request would flood the log (and the disk) of a client retrying in a loop.
	if code >= http.StatusInternalServerError && code != http.StatusInsufficientStorage {
		s.logger.Error("request failed", "method", r.Method, "path", r.URL.Path, "error", err)
	}
	h := w.Header()
	h.Del("Content-Encoding")
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, err.Error())
}

func (s *HTTPServer) writeJSON(w http.ResponseWriter, r *http.Request, pretty bool, v any) {
	var buf []byte
	var err error
	if pretty {
		buf, err = json.MarshalIndent(v, "", "    ")
	} else {
		buf, err = json.Marshal(v)
	}
	if err != nil {
		s.writeError(w, r, fmt.Errorf("encoding response: %w", err))
		return
	}
	if pretty {
		buf = append(buf, '\n')
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if len(buf) < gzipMinSize || !acceptsGzip(r) {
		h.Set("Content-Length", strconv.Itoa(len(buf)))
		_, _ = w.Write(buf)
		return
	}
	h.Set("Content-Encoding", "gzip")
	h.Add("Vary", "Accept-Encoding")
	gz := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(gz)
	gz.Reset(w)
	_, _ = gz.Write(buf)
	_ = gz.Close()
}

// gzipMinSize is the smallest body worth compressing: below it the gzip framing costs more
// than it saves.
const gzipMinSize = 1024

// gzipWriters reuses compressors: a new gzip.Writer allocates close to a megabyte, which
// dominated the cost of every small write response before pooling.
var gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(io.Discard) }}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") && strings.ReplaceAll(params, " ", "") != "q=0" {
			return true
		}
	}
	return false
}

// setMeta writes the blocking-query headers of a read.
func setMeta(w http.ResponseWriter, m *structs.QueryMeta) {
	setIndex(w, m.Index)
	h := w.Header()
	h.Set("X-Nomad-KnownLeader", strconv.FormatBool(m.KnownLeader))
	h.Set("X-Nomad-LastContact", strconv.FormatInt(m.LastContact.Milliseconds(), 10))
	if m.NextToken != "" {
		h.Set("X-Nomad-NextToken", m.NextToken)
	}
}

// setIndex writes the index header of a write (or of a read, through setMeta). Reads floor
// their index at 1 in the server (nomad.blockingRPC) except the few where upstream answers
// 0 for tables never written, so the header carries the index unchanged.
func setIndex(w http.ResponseWriter, index uint64) {
	w.Header().Set("X-Nomad-Index", strconv.FormatUint(index, 10))
}

// writeForIndex makes a write whose answer is its index alone: no body, the index header.
func (s *HTTPServer) writeForIndex(w http.ResponseWriter, method string, args any) (any, error) {
	return write(s, w, method, args, func(reply *structs.GenericResponse) (any, error) {
		return nil, nil
	})
}

// maxBodyDepth bounds how deeply a JSON request body may nest. Whatever a write carries is
// written to the Raft log as msgpack, whose decoder refuses values past 1,024 levels, and an
// entry it cannot decode stops every server replaying the log. The typed part of a job is
// about twenty levels deep, so 128 leaves free-form values (task config) room for any real
// use while staying far below the log codec's limit; job validation applies the same number
// to free-form values however a job arrives (structs.MaxFreeformDepth).
const maxBodyDepth = structs.MaxFreeformDepth

var errBodyTooDeep = structs.BadRequest("request body nests deeper than %d levels", maxBodyDepth)

// decodeBody reads the JSON request body into out. An empty body is an error. The body is
// bounded in size by the handler wrapper (maxRequestBodySize) and in depth here.
func decodeBody(r *http.Request, out any) error {
	err := json.NewDecoder(limitBody(r)).Decode(out)
	if errors.Is(err, io.EOF) {
		return structs.BadRequest("Request body is empty")
	}
	return bodyError(err)
}

// decodeOptionalBody is decodeBody for endpoints whose body may be left out.
func decodeOptionalBody(r *http.Request, out any) error {
	err := json.NewDecoder(limitBody(r)).Decode(out)
	if errors.Is(err, io.EOF) {
		return nil
	}
	return bodyError(err)
}

// limitBody bounds the body in depth and, again, in size: the handler wrapper already caps
// the size, and repeating it here keeps the cap on every decode, wrapper or not.
func limitBody(r *http.Request) io.Reader {
	return &depthLimitReader{r: http.MaxBytesReader(nil, r.Body, maxRequestBodySize)}
}

// depthLimitReader fails a read that would hand the JSON decoder a value nested deeper than
// maxBodyDepth. It tracks brackets outside strings as the bytes stream past, so the limit
// costs one pass and no copy, and the decoder stops before it builds anything that deep.
type depthLimitReader struct {
	r        io.Reader
	depth    int
	inString bool
	escaped  bool
}

func (d *depthLimitReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	for i, c := range p[:n] {
		if d.inString {
			switch {
			case d.escaped:
				d.escaped = false
			case c == '\\':
				d.escaped = true
			case c == '"':
				d.inString = false
			}
			continue
		}
		switch c {
		case '"':
			d.inString = true
		case '[', '{':
			d.depth++
			if d.depth > maxBodyDepth {
				return i, errBodyTooDeep
			}
		case ']', '}':
			d.depth--
		}
	}
	return n, err
}

func bodyError(err error) error {
	if err == nil {
		return nil
	}
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return errBodyTooLarge
	}
	if errors.Is(err, errBodyTooDeep) {
		return errBodyTooDeep
	}
	return structs.BadRequest("%s", err.Error())
}

// boolQuery reads an optional boolean query parameter; a value that is not a bool is a 400.
func boolQuery(r *http.Request, name string) (bool, error) {
	raw := r.URL.Query().Get(name)
	if raw == "" {
		return false, nil
	}
	return parseBool(name, raw)
}

func parseBool(name, raw string) (bool, error) {
	v, err := strconv.ParseBool(raw)
	if err != nil {
		return false, structs.BadRequest("Failed to parse value of %q (%v) as a bool: %v", name, raw, err)
	}
	return v, nil
}

// queryParam names an optional query parameter and where parseQuery puts it: a *bool
// (boolQuery), *int (intQuery) or *int64 (int64Query).
type queryParam struct {
	name string
	into any
}

// parseQuery reads params in order; the first that does not parse is the error (a 400).
func parseQuery(r *http.Request, params ...queryParam) error {
	for _, p := range params {
		var err error
		switch v := p.into.(type) {
		case *bool:
			*v, err = boolQuery(r, p.name)
		case *int:
			*v, err = intQuery(r, p.name)
		case *int64:
			*v, err = int64Query(r, p.name)
		default:
			panic(fmt.Sprintf("parseQuery: %s into %T", p.name, p.into))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// intQuery reads an optional integer query parameter; a value that is not an int is a 400.
func intQuery(r *http.Request, name string) (int, error) {
	raw := r.URL.Query().Get(name)
	if raw == "" {
		return 0, nil
	}
	v, err := strconv.Atoi(raw)
	if err != nil {
		return 0, structs.BadRequest("Failed to parse value of %q (%v) as an int: %v", name, raw, err)
	}
	return v, nil
}

// statusWriter records the status for logging and whether a handler already answered.
// Unwrap lets http.ResponseController reach Flush and deadlines for streaming handlers.
type statusWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = http.StatusOK, true
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		if !w.wroteHeader {
			w.status, w.wroteHeader = http.StatusOK, true
		}
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
