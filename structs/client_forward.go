package structs

// ClientForwardMethod is the call a client agent makes on its connection to a server to relay
// one HTTP request for another node's allocation or node (nomad/client_forward.go); the
// request's bytes follow the call on the same stream, and the server answers in HTTP.
const ClientForwardMethod = "ClientSession.Forward"

// ClientForwardRequest is the preamble of a relayed request: the connection's node proves
// itself with its secret, and AuthToken is the caller's token, which the server decides on.
type ClientForwardRequest struct {
	NodeID    string
	SecretID  string
	AuthToken string
}
