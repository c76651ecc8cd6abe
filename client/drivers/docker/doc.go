// Package docker is the `docker` task driver: each task is a container of the local Docker
// Engine, created from an image already on the node or loaded from a tarball in the task's
// directory (images are never pulled). It talks to the engine through its API client only,
// and imports client/drivers and client/allocdir of ours.
package docker
