# Upstream 2.0 runs canary deployments for system jobs; this cluster does not yet and
# refuses the job at plan and register with a 400 saying so.
job "node-agent" {
  type = "system"

  update {
    max_parallel = 1
    canary       = 1
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
