// Package ui serves the web UI: static HTML, CSS and JavaScript modules embedded in the
// binary with go:embed, so every agent serves the same UI without a build step or npm.
//
// The assets talk to the agent's own /v1 API with the token the user pasted (kept in the
// browser's local storage and sent only to the page's own origin). They never render data
// as HTML: job names, meta and task output are attacker-controlled and are placed with
// textContent only (TestSecurity_UIAssetsNeverUseHTMLSinks enforces it), and the
// Content-Security-Policy set here forbids inline scripts as a second line.
//
// The one permission module (assets/perms.js) mirrors the server's ACL rules so that the UI
// shows a Stop or Purge button only to a token the server would let do it; the browser
// tests in this package compare its answers with the acl package's on every capability.
//
// It imports nothing of ours; command/agent registers Handler under /ui/.
package ui
