package monitoring

import (
	"encoding/json"
	"testing"
)

// TestDashboardIsWellFormed checks what Grafana's sidecar import needs and a
// reader expects: a fixed uid, unique panel ids and refIds, every query
// panel on the dashboard's datasource variable, panels inside the 24-column
// grid and not overlapping.
func TestDashboardIsWellFormed(t *testing.T) {
	var dash grafanaDashboard
	if err := json.Unmarshal(dashboardJSON(t), &dash); err != nil {
		t.Fatal(err)
	}
	if dash.UID != "stackdome" || dash.Title == "" {
		t.Errorf("uid %q title %q: a fixed uid keeps links stable across imports", dash.UID, dash.Title)
	}
	vars := map[string]bool{}
	for _, v := range dash.Templating.List {
		vars[v.Name] = true
	}
	if !vars["datasource"] {
		t.Error("no datasource variable")
	}
	ids := map[int]bool{}
	cells := map[[2]int]string{}
	for _, p := range dash.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d twice", p.ID)
		}
		ids[p.ID] = true
		g := p.GridPos
		if g.W < 1 || g.H < 1 || g.X < 0 || g.X+g.W > 24 {
			t.Errorf("panel %q: gridPos %+v outside the 24-column grid", p.Title, g)
		}
		for x := g.X; x < g.X+g.W; x++ {
			for y := g.Y; y < g.Y+g.H; y++ {
				if other, ok := cells[[2]int{x, y}]; ok {
					t.Errorf("panels %q and %q overlap at %d,%d", other, p.Title, x, y)
				}
				cells[[2]int{x, y}] = p.Title
			}
		}
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.Type != "prometheus" || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q: datasource %+v, want the ${datasource} variable", p.Title, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		refs := map[string]bool{}
		for i, target := range p.Targets {
			if target.RefID == "" || refs[target.RefID] {
				t.Errorf("panel %q: target %d refId %q", p.Title, i, target.RefID)
			}
			refs[target.RefID] = true
			if target.Expr == "" {
				t.Errorf("panel %q: target %s has no expr", p.Title, target.RefID)
			}
		}
	}
}
