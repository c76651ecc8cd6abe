# Parsed and carried (with upstream's parse-time defaults); refused at register and plan
# with a 400 naming Vault, since this cluster has no Vault integration.
job "secrets" {
  group "g" {
    task "app" {
      driver = "raw_exec"

      vault {
        role = "app"
      }

      config {
        command = "/bin/sleep"
        args    = ["3600"]
      }
    }
  }
}
