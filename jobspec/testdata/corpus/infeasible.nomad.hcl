# Asks for more memory than any node has: upstream's plan still counts both placements
# (and `job plan` exits 1), reporting them as failed beside.
job "huge" {
  group "g" {
    count = 2

    task "t" {
      driver = "raw_exec"

      config {
        command = "/bin/sleep"
        args    = ["3600"]
      }

      resources {
        memory = 1073741824
      }
    }
  }
}
