job "render" {
  type = "batch"

  parameterized {
    payload       = "required"
    meta_required = ["release"]
    meta_optional = ["note"]
  }

  group "g" {
    task "render" {
      driver = "raw_exec"
      dispatch_payload {
        file = "input.json"
      }
      config {
        command = "/bin/cat"
        args    = ["local/input.json"]
      }
    }
  }
}
