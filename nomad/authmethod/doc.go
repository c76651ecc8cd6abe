// Package authmethod turns a login through an ACL auth method into what the new token gets:
// it verifies a JWT against the method's static keys and bounds, maps its claims to the
// selector variables value.<name> and list.<name>, and evaluates the method's binding rules.
// It is pure (the caller passes the time) and imports only structs; the ACL.Login RPC in
// package nomad owns the state reads and the Raft write.
package authmethod
