# A system job whose driver no node has: the nodes are filtered out, nothing would be
# placed, and `job plan` exits 0 as upstream's does.
job "vm-agent" {
  type = "system"

  group "g" {
    task "vm" {
      driver = "qemu"

      config {
        image_path = "local/agent.img"
      }
    }
  }
}
