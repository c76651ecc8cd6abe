package agent

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/hashicorp/cli"
)

// ConfigValidateHelp is the help of `nomad config validate`.
const ConfigValidateHelp = `Usage: nomad config validate [options] <config_path> [<config_path>...]

  Check agent configuration files (or directories of .hcl and .json files) the
  way "nomad agent -config" reads them: each is parsed, they are merged in the
  order given over the defaults, and the result is validated. Errors name the
  file, line and key. Nothing is started.`

// RunConfigValidate is `nomad config validate`: it loads the paths exactly as the agent's
// -config flags do (LoadConfig, Merge, NormalizeAddrs, Validate) and reports the first error.
func RunConfigValidate(args []string, ui cli.Ui) int {
	fs := flag.NewFlagSet("config validate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return cli.RunResultHelp
		}
		ui.Error(fmt.Sprintf("Error parsing flags: %v", err))
		return 1
	}
	paths := fs.Args()
	if len(paths) == 0 {
		ui.Error("Must specify at least one config file or directory")
		return 1
	}
	cfg := DefaultConfig()
	for _, path := range paths {
		fileCfg, err := LoadConfig(path)
		if err != nil {
			ui.Error(fmt.Sprintf("Error loading configuration from %s: %v", path, err))
			return 1
		}
		cfg = cfg.Merge(fileCfg)
	}
	cfg.NormalizeAddrs()
	if err := cfg.Validate(); err != nil {
		ui.Error("Invalid configuration:")
		for _, line := range strings.Split(err.Error(), "\n") {
			ui.Error("  " + line)
		}
		return 1
	}
	for _, w := range cfg.Warnings {
		ui.Warn(w)
	}
	ui.Output("Configuration is valid!")
	return 0
}
