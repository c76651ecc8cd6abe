package command

import (
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/hashicorp/nomad/api"
)

// purgePlan is GET /v1/job/:id/purge-plan, this fork's own API.
type purgePlan struct {
	Namespace        string
	JobID            string
	Protected        bool
	ProtectionReason string
	Removes          struct {
		Versions []struct {
			Version uint64
			Tag     string
		}
		Allocations map[string]int
		Deployments []string
		Services    []struct {
			ID          string
			ServiceName string
			AllocID     string
		}
		ScalingPolicies []string
	}
	Keeps struct {
		Evaluations         int
		CanceledEvaluations int
		Variables           []string
		HiddenVariables     int
		Children            []string
	}
}

// readPurgePlan reads the plan of purging jobID; nil, without an error, from an agent that
// has no such route, so the confirmation still works against it.
func readPurgePlan(client *api.Client, jobID string) (*purgePlan, error) {
	var plan purgePlan
	if _, err := client.Raw().Query("/v1/job/"+url.PathEscape(jobID)+"/purge-plan", &plan, nil); err != nil {
		if isNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return &plan, nil
}

// formatPurgePlan is what a purge would remove and leave, for the confirmation.
func formatPurgePlan(p *purgePlan) string {
	var tagged []string
	for _, v := range p.Removes.Versions {
		if v.Tag != "" {
			tagged = append(tagged, fmt.Sprintf("%d %q", v.Version, v.Tag))
		}
	}
	versions := fmt.Sprint(len(p.Removes.Versions))
	if len(tagged) > 0 {
		versions += " (tagged: " + strings.Join(tagged, ", ") + ")"
	}
	total := 0
	var statuses []string
	for status, n := range p.Removes.Allocations {
		total += n
		statuses = append(statuses, fmt.Sprintf("%s %d", status, n))
	}
	sort.Strings(statuses)
	allocs := fmt.Sprint(total)
	if len(statuses) > 0 {
		allocs += " (" + strings.Join(statuses, ", ") + ")"
	}
	names := map[string]bool{}
	for _, s := range p.Removes.Services {
		names[s.ServiceName] = true
	}
	services := fmt.Sprint(len(p.Removes.Services))
	if len(names) > 0 {
		var list []string
		for n := range names {
			list = append(list, n)
		}
		sort.Strings(list)
		services += " (" + strings.Join(list, ", ") + ")"
	}
	removes := formatKV([]string{
		"Versions|" + versions,
		"Allocations|" + allocs,
		fmt.Sprintf("Deployments|%d", len(p.Removes.Deployments)),
		"Service registrations|" + services,
		fmt.Sprintf("Scaling policies|%d", len(p.Removes.ScalingPolicies)),
	})
	variables := fmt.Sprint(len(p.Keeps.Variables) + p.Keeps.HiddenVariables)
	if len(p.Keeps.Variables) > 0 {
		variables += " (" + strings.Join(p.Keeps.Variables, ", ") + ")"
	}
	children := fmt.Sprint(len(p.Keeps.Children))
	if len(p.Keeps.Children) > 0 {
		children += " (" + strings.Join(p.Keeps.Children, ", ") + ")"
	}
	keeps := formatKV([]string{
		fmt.Sprintf("Evaluations|%d (%d pending canceled)", p.Keeps.Evaluations, p.Keeps.CanceledEvaluations),
		"Variables under nomad/jobs|" + variables,
		"Periodic or dispatched children|" + children,
	})
	return fmt.Sprintf("Purging job %q in namespace %q removes:\n%s\nand leaves in place:\n%s\n"+
		"A purge record keeps the last version (\"nomad job purged\", \"nomad job restore\").",
		p.JobID, p.Namespace, indent(removes, "  "), indent(keeps, "  "))
}
