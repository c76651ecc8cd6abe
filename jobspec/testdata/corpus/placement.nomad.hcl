variable "racks" {
  type    = list(string)
  default = ["r1", "r2"]
}

locals {
  id = uuidv5("dns", "placement.example.com")
}

job "placed" {
  meta {
    build = local.id
    token = base64encode("v1")
  }

  constraint {
    distinct_hosts = true
  }

  affinity {
    attribute = "${node.datacenter}"
    value     = "dc1"
    weight    = 50
  }

  spread {
    attribute = "${meta.rack}"
    weight    = 100
    dynamic "target" {
      for_each = var.racks
      labels   = [target.value]
      content {
        percent = 50
      }
    }
  }

  task "solo" {
    driver = "raw_exec"
    config {
      command = "/bin/true"
    }
  }
}
