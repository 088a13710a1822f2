//go:build e2e

package framework

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// The syncs of the repository's golden fixtures and scenarios, as parents
// and hook answers to apply.

// SyncCase is one parent synced one or more times: a golden sync fixture is a
// case of one step, a scenario a case of many. Adding a source of cases is one
// loop in SyncCases; every proof over hook output ranges over all of them.
type SyncCase struct {
	Name  string
	Steps []SyncStep
}

// SyncStep is one sync: the parent Metacontroller sent (nil: the previous
// step's) and what the hook answered.
type SyncStep struct {
	Name     string
	Parent   Obj // request.parent
	Response Obj // {"status":…, "children":[…], "resyncAfterSeconds":…}
}

// SyncCases loads <testdata>/sync/<case>.{request,response}.json and every
// JSON file under <testdata>/scenarios/. <testdata> is the repository's
// testdata/ (root is the repository's), or STACKDOME_E2E_TESTDATA to try new fixtures before adding them.
//
// A scenario file holding no full response (object with a "children" array
// and a "status" object) is returned in skipped: there is nothing to apply.
func SyncCases(root string) (cases []SyncCase, skipped []string, err error) {
	testdata := os.Getenv("STACKDOME_E2E_TESTDATA")
	if testdata == "" {
		testdata = filepath.Join(root, "testdata")
	}
	dir := filepath.Join(testdata, "sync")
	responses, err := filepath.Glob(filepath.Join(dir, "*.response.json"))
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(responses)
	for _, respPath := range responses {
		name := strings.TrimSuffix(filepath.Base(respPath), ".response.json")
		var req, resp Obj
		if err := ReadJSON(filepath.Join(dir, name+".request.json"), &req); err != nil {
			return nil, nil, err
		}
		if err := ReadJSON(respPath, &resp); err != nil {
			return nil, nil, err
		}
		parent, _ := req["parent"].(map[string]any)
		cases = append(cases, SyncCase{Name: "sync/" + name, Steps: []SyncStep{{Name: name, Parent: parent, Response: resp}}})
	}

	scenarios, err := filepath.Glob(filepath.Join(testdata, "scenarios", "*.json"))
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(scenarios)
	for _, p := range scenarios {
		var doc any
		if err := ReadJSON(p, &doc); err != nil {
			return nil, nil, err
		}
		c := SyncCase{Name: "scenarios/" + strings.TrimSuffix(filepath.Base(p), ".json")}
		collectSteps(doc, nil, &c.Steps)
		if len(c.Steps) == 0 {
			// Scenario inputs summarize each step's expected status rather
			// than carry the hook's answer; only answers can be applied.
			skipped = append(skipped, filepath.Base(p))
			continue
		}
		cases = append(cases, c)
	}
	return cases, skipped, nil
}

// collectSteps walks a scenario document in order and takes every object
// holding a "children" array and a "status" object as a sync response; the
// parent is the nearest "parent" (or "request"."parent") on the way down or
// seen before, so the step list does not depend on the exact scenario layout.
func collectSteps(v any, parent Obj, steps *[]SyncStep) Obj {
	switch v := v.(type) {
	case map[string]any:
		if p, ok := v["parent"].(map[string]any); ok {
			parent = p
		}
		if p, ok := Dig(v, "request", "parent").(map[string]any); ok {
			parent = p
		}
		_, hasChildren := v["children"].([]any)
		_, hasStatus := v["status"].(map[string]any)
		if hasChildren && hasStatus {
			*steps = append(*steps, SyncStep{Name: fmt.Sprintf("step%02d", len(*steps)+1), Parent: parent, Response: v})
			return parent
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		// "request" before "response" and "steps" in key order is what a
		// scenario needs; arrays keep their own order.
		for _, k := range keys {
			parent = collectSteps(v[k], parent, steps)
		}
	case []any:
		for _, it := range v {
			parent = collectSteps(it, parent, steps)
		}
	}
	return parent
}
