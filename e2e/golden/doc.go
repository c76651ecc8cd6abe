// Package golden writes and checks golden data dirs: a data_dir left by a release binary
// killed with -9, the snapshot archive it saved, and a manifest of every object they hold.
// Each release adds one under testdata/golden/<version>; the e2e suite opens every one of
// them with the current binary (TestGolden_DataDirs). It talks to agents through the official
// client only and imports nothing of ours (only the official client), so a manifest means the same to every release.
package golden
