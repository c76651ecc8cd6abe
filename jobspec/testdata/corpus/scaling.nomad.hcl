# Scaling policies: the group's is horizontal by default, as upstream's parser fills it in;
# a task's "cpu" and "mem" policies are vertical.
job "scaled" {
  group "g" {
    count = 2

    scaling {
      min     = 1
      max     = 5
      enabled = true

      policy {
        cooldown = "1m"
      }
    }

    task "t" {
      driver = "raw_exec"

      config {
        command = "/bin/sleep"
        args    = ["3600"]
      }

      scaling "cpu" {
        min = 50
        max = 500
      }
    }
  }
}
