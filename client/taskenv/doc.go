// Package taskenv builds a task's environment (the NOMAD_* variables, its env block) and
// interpolates ${...} references in its driver configuration, env and args, as upstream's
// client does: ${NOMAD_ALLOC_ID} and any variable of the task's environment, ${env["X"]},
// ${node.unique.id}, ${node.unique.name}, ${node.datacenter}, ${node.region}, ${node.class},
// ${node.pool}, ${attr.<key>} and ${meta.<key>} of the node. A reference to anything else
// stays as written.
//
// It is the one place the client builds a task's environment: the task runner gives it the
// allocation, the task and the node, and drivers receive what it built. It imports structs
// only, and reads no clock and no host state: the same inputs give the same environment.
package taskenv
