//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackdome/stackdome/e2e/framework"
)

// tableAccept asks the API server for the server-side Table kubectl prints:
// the CRD's additionalPrinterColumns evaluated by the API server itself.
const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io"

// TestPrinterColumns proves what `kubectl get sr` (and `-o wide`) prints on
// a real API server: the columns in order, Image only in the wide view
// (priority 1), and each cell from the JSONPath of its column — the URL of a
// StackResource whose status has one, nothing where the status is not
// written yet.
func TestPrinterColumns(t *testing.T) {
	f := framework.NewFixture(t)
	f.RequireStackResourceCRD()
	ctx := t.Context()
	k := f.Kube
	ns := f.Namespace
	base := "/apis/stackdome.io/v1alpha1/namespaces/" + ns + "/stackresources"

	for _, sr := range []obj{
		{"metadata": obj{"name": "shop"}, "spec": obj{
			"type": "Service", "image": "registry.example/shop:4.1", "host": "shop.example.com",
			"ports": []any{obj{"name": "http", "port": 8080, "public": true}},
		}},
		{"metadata": obj{"name": "db"}, "spec": obj{
			"type": "StatefulService", "image": "registry.example/db:16",
			"ports":   []any{obj{"name": "sql", "port": 5432}},
			"storage": obj{"size": "1Gi", "mountPath": "/data"},
		}},
		{"metadata": obj{"name": "nightly"}, "spec": obj{
			"type": "CronJob", "image": "registry.example/report:2", "cronJob": obj{"schedule": "0 3 * * *"},
		}},
	} {
		sr["apiVersion"], sr["kind"] = "stackdome.io/v1alpha1", "StackResource"
		if _, err := k.Create(ctx, base, sr); err != nil {
			t.Fatalf("creating %s: %v", framework.Dig(sr, "metadata", "name"), err)
		}
	}
	// The status stackdome writes for a serving public app (through the
	// status subresource, as Metacontroller does); db's stays unwritten.
	status := obj{"status": obj{
		"url": "https://shop.example.com",
		"conditions": []any{obj{
			"type": "Available", "status": "True", "reason": "Serving", "message": "1/1 replicas serving",
			"lastTransitionTime": "2026-01-01T00:00:00Z",
		}},
	}}
	if _, err := k.MergePatch(ctx, base+"/shop/status", status); err != nil {
		t.Fatalf("writing shop's status: %v", err)
	}
	// A CronJob's: its last run, the Job and when it was scheduled.
	run := obj{"status": obj{"run": obj{
		"lastScheduleTime": "2026-01-01T03:00:00Z",
		"last":             obj{"job": "nightly-29455380", "result": "Failed", "startTime": "2026-01-01T03:00:00Z", "finishedAt": "2026-01-01T03:02:00Z"},
	}}}
	if _, err := k.MergePatch(ctx, base+"/nightly/status", run); err != nil {
		t.Fatalf("writing nightly's status: %v", err)
	}

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.Base+base+"?includeObject=None", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+k.Token)
	req.Header.Set("Accept", tableAccept)
	resp, err := k.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s as Table: %s %v\n%s", base, resp.Status, err, body)
	}
	var table struct {
		Kind              string `json:"kind"`
		ColumnDefinitions []struct {
			Name     string `json:"name"`
			Priority int    `json:"priority"`
		} `json:"columnDefinitions"`
		Rows []struct {
			Cells []any `json:"cells"`
		} `json:"rows"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&table); err != nil {
		t.Fatalf("decoding the Table: %v\n%s", err, body)
	}
	if table.Kind != "Table" {
		t.Fatalf("got kind %q, want Table:\n%s", table.Kind, body)
	}

	// Columns as `kubectl get sr` prints them, "(wide)" where -o wide adds one.
	var columns []string
	for _, c := range table.ColumnDefinitions {
		name := c.Name
		if c.Priority > 0 {
			name += " (wide)"
		}
		columns = append(columns, name)
	}
	wantColumns := []string{"Name", "Type", "Available", "Reason", "URL", "Last Run", "Age", "Image (wide)", "Last Job (wide)", "Scheduled (wide)"}
	if diff := cmp.Diff(wantColumns, columns); diff != "" {
		t.Fatalf("columns (-want +got):\n%s", diff)
	}
	// Each row as column → cell; Age is the server's clock and is only
	// checked to be there. A cell whose JSONPath finds nothing is null.
	var rows []map[string]string
	for _, r := range table.Rows {
		row := map[string]string{}
		for i, cell := range r.Cells {
			col := columns[i]
			switch {
			case cell == nil:
				row[col] = "<none>"
			case col == "Age" || col == "Scheduled (wide)":
				row[col] = "set"
			default:
				row[col] = fmt.Sprint(cell)
			}
		}
		rows = append(rows, row)
	}
	want := []map[string]string{
		{"Name": "db", "Type": "StatefulService", "Available": "<none>", "Reason": "<none>", "URL": "<none>", "Last Run": "<none>", "Age": "set",
			"Image (wide)": "registry.example/db:16", "Last Job (wide)": "<none>", "Scheduled (wide)": "<none>"},
		{"Name": "nightly", "Type": "CronJob", "Available": "<none>", "Reason": "<none>", "URL": "<none>", "Last Run": "Failed", "Age": "set",
			"Image (wide)": "registry.example/report:2", "Last Job (wide)": "nightly-29455380", "Scheduled (wide)": "set"},
		{"Name": "shop", "Type": "Service", "Available": "True", "Reason": "Serving", "URL": "https://shop.example.com", "Last Run": "<none>", "Age": "set",
			"Image (wide)": "registry.example/shop:4.1", "Last Job (wide)": "<none>", "Scheduled (wide)": "<none>"},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}
