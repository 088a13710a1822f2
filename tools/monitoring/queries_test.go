package monitoring

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

var promql = parser.NewParser(parser.Options{})

func parseExpr(expr string) (parser.Expr, error) { return promql.ParseExpr(expr) }

// numberRHS returns the literal right of a top-level comparison.
func numberRHS(e parser.Expr) string {
	if b, ok := unparen(e).(*parser.BinaryExpr); ok {
		if n, ok := unparen(b.RHS).(*parser.NumberLiteral); ok {
			return fmt.Sprint(n.Val)
		}
	}
	return ""
}

func unparen(e parser.Expr) parser.Expr {
	for {
		p, ok := e.(*parser.ParenExpr)
		if !ok {
			return e
		}
		e = p.Expr
	}
}

// checkQuery reports every way expr reads something c does not have: an
// unknown metric, a matcher on a label the metric lacks or on a value outside
// a closed set, a by/on label missing from a selector beneath it. It returns
// the labels of the query's result (nil when they cannot be told).
func checkQuery(c catalog, expr string) (map[string]bool, []string) {
	e, err := parseExpr(expr)
	if err != nil {
		return nil, []string{err.Error()}
	}
	var problems []string
	parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
		switch n := node.(type) {
		case *parser.VectorSelector:
			labelsOf := c[n.Name]
			if labelsOf == nil {
				problems = append(problems, fmt.Sprintf("%s: no such metric", n.Name))
				return nil
			}
			for _, m := range n.LabelMatchers {
				if m.Name == model.MetricNameLabel {
					continue
				}
				values, ok := labelsOf[m.Name]
				if !ok {
					problems = append(problems, fmt.Sprintf("%s has no label %s", n.Name, m.Name))
				} else if values != nil && m.Type == labels.MatchEqual && !values[m.Value] {
					problems = append(problems, fmt.Sprintf("%s{%s}: %q is none of %q", n.Name, m.Name, m.Value, slices.Sorted(maps.Keys(values))))
				}
			}
		case *parser.AggregateExpr:
			if !n.Without {
				problems = append(problems, missingBeneath(c, n.Expr, n.Grouping, "by")...)
			}
		case *parser.BinaryExpr:
			if n.VectorMatching != nil && n.VectorMatching.On {
				problems = append(problems, missingBeneath(c, n.LHS, n.VectorMatching.MatchingLabels, "on")...)
				problems = append(problems, missingBeneath(c, n.RHS, n.VectorMatching.MatchingLabels, "on")...)
			}
		}
		return nil
	})
	return resultLabels(c, e), problems
}

// missingBeneath reports each label that some selector under e does not have.
func missingBeneath(c catalog, e parser.Expr, want []string, clause string) []string {
	var problems []string
	parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
		if vs, ok := node.(*parser.VectorSelector); ok && c[vs.Name] != nil {
			for _, l := range want {
				if _, ok := c[vs.Name][l]; !ok {
					problems = append(problems, fmt.Sprintf("%s (%s): %s has no label %s", clause, strings.Join(want, ", "), vs.Name, l))
				}
			}
		}
		return nil
	})
	return problems
}

// resultLabels returns the label names a query's result series carry, for
// the shapes the chart uses; nil when it cannot tell.
func resultLabels(c catalog, e parser.Expr) map[string]bool {
	switch n := unparen(e).(type) {
	case *parser.VectorSelector:
		if c[n.Name] == nil {
			return nil
		}
		out := map[string]bool{}
		for l := range c[n.Name] {
			out[l] = true
		}
		return out
	case *parser.MatrixSelector:
		return resultLabels(c, n.VectorSelector)
	case *parser.AggregateExpr:
		if n.Without {
			return nil
		}
		out := map[string]bool{}
		for _, l := range n.Grouping {
			out[l] = true
		}
		return out
	case *parser.Call:
		switch n.Func.Name {
		case "histogram_quantile":
			out := resultLabels(c, n.Args[1])
			delete(out, "le")
			return out
		case "rate", "increase", "irate", "delta", "deriv", "abs", "clamp_min", "clamp_max":
			return resultLabels(c, n.Args[0])
		}
	case *parser.BinaryExpr:
		// A filter (x > 1) or a ratio of like series keeps the left side's
		// labels; group_left adds the included ones.
		out := resultLabels(c, n.LHS)
		if out != nil && n.VectorMatching != nil {
			for _, l := range n.VectorMatching.Include {
				out[l] = true
			}
		}
		return out
	}
	return nil
}

// annotationLabels returns the labels an alert template reads ($labels.x).
func annotationLabels(s string) []string { return submatches(`\$labels\.(\w+)`, s) }

// legendLabels returns the labels a Grafana legend shows ({{x}}).
func legendLabels(s string) []string { return submatches(`\{\{\s*(\w+)\s*\}\}`, s) }

func submatches(re, s string) []string {
	var out []string
	for _, m := range regexp.MustCompile(re).FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestQueriesReadWhatIsExported parses every alert expression and every
// dashboard query with Prometheus' own PromQL parser and checks each metric,
// matcher, grouping label, annotation and legend against what the real
// stackdome binary serves on /metrics, what the chart's kube-state-metrics
// config makes of StackResources, and the one standard kube-state-metrics
// series the rules use.
func TestQueriesReadWhatIsExported(t *testing.T) {
	c := stackdomeCatalog(stackdomeExports(t))
	for name, labelsOf := range ksmCatalog(t) {
		if c[name] != nil {
			t.Fatalf("%s is both stackdome's and kube-state-metrics'", name)
		}
		c[name] = labelsOf
	}

	t.Run("alerts", func(t *testing.T) {
		for combo, set := range valueCombinations {
			groups, _ := renderRules(t, set...)
			for _, g := range groups.Groups {
				for _, r := range g.Rules {
					out, problems := checkQuery(c, r.Expr)
					for _, p := range problems {
						t.Errorf("%s (%s): %s", r.Alert, combo, p)
					}
					if out == nil {
						t.Errorf("%s (%s): cannot tell the labels of %s", r.Alert, combo, r.Expr)
						continue
					}
					for _, text := range r.Annotations {
						for _, l := range annotationLabels(text) {
							if !out[l] {
								t.Errorf("%s (%s): an annotation uses $labels.%s, the expression gives %v", r.Alert, combo, l, slices.Sorted(maps.Keys(out)))
							}
						}
					}
				}
			}
		}
	})

	t.Run("dashboard", func(t *testing.T) {
		var dash grafanaDashboard
		if err := json.Unmarshal(dashboardJSON(t), &dash); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, p := range dash.Panels {
			for _, target := range p.Targets {
				n++
				out, problems := checkQuery(c, grafanaVariables.Replace(target.Expr))
				for _, pr := range problems {
					t.Errorf("panel %q: %s", p.Title, pr)
				}
				for _, l := range legendLabels(target.LegendFormat) {
					if out == nil || !out[l] {
						t.Errorf("panel %q: legend {{%s}}, the query gives %v", p.Title, l, slices.Sorted(maps.Keys(out)))
					}
				}
			}
		}
		for _, v := range dash.Templating.List {
			if v.Type != "query" {
				continue
			}
			m := regexp.MustCompile(`^label_values\((.+), (\w+)\)$`).FindStringSubmatch(v.Definition)
			if m == nil {
				t.Errorf("variable %s: %q is not label_values(selector, label)", v.Name, v.Definition)
				continue
			}
			n++
			out, problems := checkQuery(c, grafanaVariables.Replace(m[1]))
			problems = append(problems, missingLabel(out, m[2])...)
			for _, pr := range problems {
				t.Errorf("variable %s: %s", v.Name, pr)
			}
		}
		if n < 10 {
			t.Fatalf("only %d queries found in the dashboard", n)
		}
	})
}

func missingLabel(out map[string]bool, l string) []string {
	if out[l] {
		return nil
	}
	return []string{"no label " + l}
}

// grafanaVariables stands in for the dashboard's variables, so that the
// queries parse as Grafana sends them.
var grafanaVariables = strings.NewReplacer("$__rate_interval", "5m", "$namespace", "stackdome", "$job", "stackdome")

// grafanaDashboard is the part of the dashboard model the checks read.
type grafanaDashboard struct {
	UID        string `json:"uid"`
	Title      string `json:"title"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Type       string `json:"type"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID         int    `json:"id"`
		Type       string `json:"type"`
		Title      string `json:"title"`
		Datasource *struct {
			Type string `json:"type"`
			UID  string `json:"uid"`
		} `json:"datasource"`
		GridPos struct {
			H, W, X, Y int
		} `json:"gridPos"`
		Targets []struct {
			RefID        string `json:"refId"`
			Expr         string `json:"expr"`
			LegendFormat string `json:"legendFormat"`
		} `json:"targets"`
	} `json:"panels"`
}

// TestQueryCheckerCatchesMistakes keeps checkQuery honest: each broken query
// must be reported.
func TestQueryCheckerCatchesMistakes(t *testing.T) {
	c := catalog{}
	c.add("stackdome_hook_requests_total", "hook", "code")
	c.closed("stackdome_portcheck_dials_total", "outcome", "open", "closed", "inconclusive")
	tests := map[string]struct {
		expr string
		want string
	}{
		"fine":            {expr: `sum by (hook) (rate(stackdome_hook_requests_total{code="500"}[5m]))`},
		"unknown metric":  {expr: `rate(stackdome_hook_request_total[5m])`, want: "stackdome_hook_request_total: no such metric"},
		"unknown label":   {expr: `stackdome_hook_requests_total{status="500"}`, want: "has no label status"},
		"by unknown":      {expr: `sum by (outcome) (stackdome_hook_requests_total)`, want: "by (outcome): stackdome_hook_requests_total has no label outcome"},
		"value not there": {expr: `stackdome_portcheck_dials_total{outcome="refused"}`, want: `"refused" is none of`},
		"syntax":          {expr: `sum by (hook (x)`, want: "unexpected"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, problems := checkQuery(c, tc.expr)
			got := strings.Join(problems, "\n")
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Fatalf("want a problem containing %q, got %q", tc.want, got)
			}
		})
	}
}
