# A system job with canaries, as upstream 2.0 runs them: canary is a percentage of the
# feasible nodes (at most max_parallel); an update replaces that many nodes' allocations
# with canaries, and the rest once the deployment is promoted.
job "node-agent" {
  type = "system"

  update {
    max_parallel     = 1
    canary           = 50
    min_healthy_time = "1s"
  }

  group "g" {
    task "agent" {
      driver = "raw_exec"

      config {
        command = "/bin/sleep"
        args    = ["3600"]
      }
    }
  }
}
