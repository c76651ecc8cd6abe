# A group whose only "task" is a Consul Connect ingress gateway: refused naming Consul
# Connect, not as a group with missing tasks.
job "ingress" {
  group "gateway" {
    network {
      mode = "bridge"
      port "inbound" {
        static = 8080
      }
    }

    service {
      name = "ingress"
      port = "8080"

      connect {
        gateway {
          ingress {
            listener {
              port     = 8080
              protocol = "tcp"
              service {
                name = "api"
              }
            }
          }
        }
      }
    }
  }
}
