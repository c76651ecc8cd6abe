// Command golden-datadir writes a golden data dir with a release binary (see package golden
// and README "Upgrades"):
//
//	go run ./e2e/golden/cmd/golden-datadir -binary bin/nomad -out testdata/golden/v0.2.0
package main

import (
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/nomadfork/nomad/e2e/golden"
)

func main() {
	binary := flag.String("binary", "bin/nomad", "the release's nomad binary")
	out := flag.String("out", "", "the golden dir to write, testdata/golden/<version>")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "golden-datadir: -out is required, e.g. -out testdata/golden/v0.2.0")
		os.Exit(2)
	}
	if _, err := os.Stat(*out); err == nil {
		fmt.Fprintf(os.Stderr, "golden-datadir: %s exists; a golden dir is written once, by its release\n", *out)
		os.Exit(2)
	}
	if err := golden.Generate(*binary, *out, log.Printf); err != nil {
		log.Fatalf("golden-datadir: %v", err)
	}
	log.Printf("wrote %s", *out)
}
