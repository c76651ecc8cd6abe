job "sweep" {
  type = "sysbatch"

  group "g" {
    task "sweep" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
    }
  }
}
