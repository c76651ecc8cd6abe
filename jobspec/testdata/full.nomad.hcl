variable "region" {
  type    = string
  default = "global"
}

variable "count" {
  type        = number
  description = "instances of the web group"
  default     = 2
}

locals {
  image = "redis:${local.tag}"
  tag   = "7"
}

job "full" {
  name        = "full-name"
  region      = var.region
  namespace   = "apps"
  type        = "service"
  priority    = 70
  datacenters = ["dc1", "dc2"]
  node_pool   = "prod"
  all_at_once = true

  meta {
    owner = "ops"
  }

  constraint {
    attribute = "${attr.kernel.name}"
    value     = "linux"
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
    attribute = "${node.datacenter}"
    weight    = 80

    target "dc1" {
      percent = 60
    }
    target "dc2" {
      percent = 40
    }
  }

  update {
    stagger           = "30s"
    max_parallel      = 2
    health_check      = "checks"
    min_healthy_time  = "10s"
    healthy_deadline  = "5m"
    progress_deadline = "10m"
    canary            = 1
    auto_revert       = true
    auto_promote      = false
  }

  periodic {
    crons            = ["*/15 * * * *"]
    prohibit_overlap = true
    time_zone        = "Europe/Paris"
    enabled          = true
  }

  parameterized {
    payload       = "optional"
    meta_required = ["release"]
    meta_optional = ["note"]
  }

  reschedule {
    attempts       = 3
    interval       = "1h"
    delay          = "30s"
    delay_function = "exponential"
    max_delay      = "10m"
    unlimited      = false
  }

  migrate {
    max_parallel     = 1
    health_check     = "task_states"
    min_healthy_time = "15s"
    healthy_deadline = "4m"
  }

  multiregion {
    strategy {
      max_parallel = 1
      on_failure   = "fail_all"
    }

    region "west" {
      count       = 1
      datacenters = ["west-1"]
      node_pool   = "default"
      meta = {
        tier = "a"
      }
    }
  }

  ui {
    description = "A job with everything"

    link {
      label = "Docs"
      url   = "https://example.com"
    }
  }

  group "web" {
    count                        = var.count
    shutdown_delay               = "6s"
    stop_after_client_disconnect = "1m"
    max_client_disconnect        = "2h"
    prevent_reschedule_on_lost   = true

    constraint {
      attribute = "${meta.rack}"
      operator  = "!="
      value     = "r1"
    }

    affinity {
      attribute = "${node.class}"
      version   = ">= 1.0"
      weight    = -20
    }

    spread {
      attribute = "${meta.rack}"
    }

    update {
      canary = 2
    }

    migrate {
      max_parallel = 3
    }

    restart {
      attempts         = 2
      interval         = "30m"
      delay            = "15s"
      mode             = "fail"
      render_templates = true
    }

    reschedule {
      attempts = 0
    }

    disconnect {
      lost_after = "1h"
      replace    = false
      reconcile  = "best_score"
    }

    ephemeral_disk {
      sticky  = true
      migrate = true
      size    = 300
    }

    network {
      mode = "bridge"

      port "http" {
        to = 8080
      }

      port "admin" {
        static = 9090
        to     = 9091
      }

      dns {
        servers = ["1.1.1.1"]
      }
    }

    service {
      name     = "web"
      port     = "http"
      tags     = ["urlprefix-/", "v${local.tag}"]
      provider = "nomad"

      check {
        type     = "http"
        path     = "/health"
        interval = "10s"
        timeout  = "2s"

        header {
          Authorization = ["Basic x"]
        }

        check_restart {
          limit = 3
          grace = "90s"
        }
      }
    }

    volume "data" {
      type      = "host"
      source    = "data-vol"
      read_only = true
    }

    meta = {
      group_meta = "yes"
    }

    scaling {
      min     = 1
      max     = 10
      enabled = true

      policy {
        cooldown = "1m"

        check "cpu" {
          source = "prometheus"
          query  = "avg(cpu)"

          strategy "target-value" {
            target = 70.5
          }
        }
      }
    }

    task "server" {
      driver = "docker"
      user   = "nobody"
      leader = true

      config {
        image   = local.image
        command = "redis-server"
        args    = ["--port", "${NOMAD_PORT_http}"]
        ports   = ["http"]

        port_map {
          http = 80
        }

        labels = {
          ratio = 0.5
        }
      }

      env {
        DATA_DIR = "${NOMAD_ALLOC_DIR}/data"
        NODE     = "${node.unique.id}"
        UPPER    = upper("x")
      }

      meta {
        task_meta = "1"
      }

      resources {
        cpu        = 500
        cores      = 0
        memory     = 256
        memory_max = 512

        device "nvidia/gpu" {
          count = 2
        }
      }

      template {
        data          = "KEY={{ key \"k\" }}"
        destination   = "local/env"
        change_mode   = "signal"
        change_signal = "SIGHUP"
        env           = true
        splay         = "5s"

        wait {
          min = "2s"
          max = "10s"
        }
      }

      artifact {
        source      = "https://example.com/file.tgz"
        destination = "local/file"

        options {
          checksum = "sha256:abc"
        }
      }

      service {
        name = "server-admin"
        port = "admin"
      }

      restart {
        attempts = 5
      }

      logs {
        max_files     = 3
        max_file_size = 10
        disabled      = false
      }

      kill_timeout   = "20s"
      kill_signal    = "SIGTERM"
      shutdown_delay = "3s"

      lifecycle {
        hook    = "poststart"
        sidecar = true
      }

      volume_mount {
        volume      = "data"
        destination = "/srv"
        read_only   = true
      }

      dispatch_payload {
        file = "input.json"
      }

      identity {
        env  = true
        file = true
      }

      identity {
        name = "vault"
        aud  = ["vault.io"]
        ttl  = "1h"
      }

      vault {
        policies    = ["read"]
        change_mode = "restart"
      }

      consul {
        namespace = "team"
      }

      action "echo" {
        command = "/bin/echo"
        args    = ["hi"]
      }
    }
  }
}
