// Package docker is the `docker` task driver: each task is a container of the local Docker
// Engine, created from an image on the node, pulled from its registry (with the task's or the
// plugin's credentials), or loaded from a tarball in the task's directory. It owns the pulls
// (one per image at a time) and the GC of the images it pulled. It talks to the engine through
// its API client only, and imports client/drivers and client/allocdir of ours.
package docker
