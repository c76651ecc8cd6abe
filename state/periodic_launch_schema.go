package state

import "github.com/nomadfork/nomad/structs"

const tablePeriodicLaunch = "periodic_launch"

func init() {
	// One row per periodic job that has launched (or been forced): its last launch time.
	registerTable(tablePeriodicLaunch, &structs.PeriodicLaunch{}, idIndex(namespaced(field("ID"))))
}
