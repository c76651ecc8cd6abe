job "api" {
  datacenters = ["dc1"]

  group "api" {
    count = 1

    restart {
      attempts = 0
      mode     = "fail"
    }

    task "server" {
      driver = "raw_exec"

      config {
        command = "/bin/sleep"
        args    = ["3600"]
      }

      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
