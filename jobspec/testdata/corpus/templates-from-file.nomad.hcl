job "conf" {
  group "app" {
    task "app" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "cat local/app.conf; sleep 600"]
      }

      template {
        data        = file("app.conf.tpl")
        destination = "local/app.conf"
      }

      template {
        data        = <<-EOT
          {{ with nomadVar "nomad/jobs/conf" }}PASSWORD={{ .password }}{{ end }}
        EOT
        destination = "secrets/env"
        env         = true
        change_mode = "signal"
        change_signal = "SIGHUP"
      }
    }
  }
}
