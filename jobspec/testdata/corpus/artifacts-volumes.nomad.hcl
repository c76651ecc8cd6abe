job "files" {
  group "g" {
    volume "data" {
      type      = "host"
      source    = "shared-data"
      read_only = false
    }

    ephemeral_disk {
      size   = 500
      sticky = true
    }

    task "fetch" {
      driver = "exec"

      artifact {
        source      = "https://example.com/tool.tar.gz"
        destination = "local/tool"
        options {
          checksum = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
        }
      }

      volume_mount {
        volume      = "data"
        destination = "/srv/data"
      }

      config {
        command = "local/tool/run"
      }
    }
  }
}
