job "nightly" {
  type = "batch"

  periodic {
    crons            = ["0 3 * * *"]
    prohibit_overlap = true
    time_zone        = "UTC"
  }

  group "g" {
    task "backup" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
    }
  }
}
