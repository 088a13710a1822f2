package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServeBrandsFile: serve --brands-file draws the file's brands on the
// pages port, ?brand= picking one and the file's default answering the
// rest; a file with a wrong field stops start-up with the field's path.
func TestServeBrandsFile(t *testing.T) {
	srv := runServe(t, "--brands-file", filepath.Join("errorpages", "testdata", "brands.json"))
	require.NotEmpty(t, srv.addrs["errorPages"], "serve did not start")
	page := func(target string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+srv.addrs["errorPages"]+target, nil)
		req.Header.Set("Accept", "text/html")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for target, want := range map[string]struct {
		code  int
		brand string
	}{
		"/_errors/503?brand=northwind": {503, "Northwind Traders</div>"},
		"/_errors/503?brand=acme-pay":  {503, "Acme Pay</div>"},
		"/_errors/503?brand=unknown":   {503, "Acme Pay</div>"},
		"/_errors/502":                 {502, "Acme Pay</div>"},
		"/anything":                    {404, "Acme Pay</div>"},
	} {
		code, body := page(target)
		require.Equal(t, want.code, code, target)
		require.Contains(t, body, want.brand, target)
		require.NotContains(t, body, "stackdome</div>", target)
	}
	require.NoError(t, srv.stop())

	bad := filepath.Join(t.TempDir(), "brands.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"brands":[{"name":"acme","displayName":"Acme","colors":{"light":{"accent":"teal"}}}]}`), 0o644))
	err := run(context.Background(), []string{"serve", "--listen", "127.0.0.1:0", "--error-pages-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--insecure-plain-http", "--brands-file", bad}, nil, io.Discard, io.Discard)
	require.ErrorContains(t, err, `brands[0].colors.light.accent: "teal" is not a colour (#rgb or #rrggbb)`)
}
