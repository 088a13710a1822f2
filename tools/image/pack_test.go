package main

import (
	"archive/tar"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// TestPack packs an image the way the e2e suite lays out a third-party one
// and reads it back with the standard library: the name containerd imports
// it under, one linux/amd64 image, the config as given, and a layer holding
// the files with their owners, modes and xattrs and the parents they lack.
func TestPack(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "tool")
	if err := os.WriteFile(bin, []byte("#!binary"), 0o600); err != nil {
		t.Fatal(err)
	}
	spec := packSpec{
		Out:          filepath.Join(dir, "out.tar"),
		Name:         "registry.example:5000/team/tool:v1.2.3",
		Architecture: "amd64",
		Config: v1.Config{
			User:       "nonroot:nonroot",
			Entrypoint: []string{"/usr/bin/tool"},
			Cmd:        []string{"--flag"},
			WorkingDir: "/",
		},
		Files: []packFile{
			{Path: "/usr/bin/tool", Source: bin, Mode: 0o755, Xattrs: map[string][]byte{"security.capability": {1, 0, 0, 2}}},
			{Path: "/etc/passwd", Content: "nonroot:x:65532:65532::/home/nonroot:/sbin/nologin\n", Mode: 0o644},
			{Path: "/tmp/", Mode: 0o1777},
			{Path: "/home/nonroot/", Mode: 0o700, UID: 65532, GID: 65532},
		},
		CreatedBy: "pack_test",
	}
	digest, err := pack(spec)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(spec.Out)
	if err != nil {
		t.Fatal(err)
	}
	a := openArchive(t, raw)
	if a.indexDigest != digest.String() {
		t.Errorf("index.json names %s, pack returned %s", a.indexDigest, digest)
	}
	if diff := cmp.Diff(map[string]string{
		containerdNameAnnotation: "registry.example:5000/team/tool:v1.2.3",
		refNameAnnotation:        "v1.2.3",
	}, a.refs); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	img, ok := a.images["linux/amd64"]
	if len(a.images) != 1 || !ok {
		t.Fatalf("images %v, want linux/amd64 only", a.images)
	}
	c := img.config.Config
	if diff := cmp.Diff([]any{"nonroot:nonroot", []string{"/usr/bin/tool"}, []string{"--flag"}, "/"},
		[]any{c.User, c.Entrypoint, c.Cmd, c.WorkingDir}); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	if img.config.Created != "1970-01-01T00:00:00Z" || img.config.History[0].CreatedBy != "pack_test" {
		t.Errorf("created %q, history %+v", img.config.Created, img.config.History)
	}

	type entry struct {
		Name     string
		Type     byte
		Mode     int64
		UID, GID int
		Xattr    string
		Data     string
	}
	var got []entry
	for _, f := range layerFiles(t, img.layerTar) {
		got = append(got, entry{f.hdr.Name, f.hdr.Typeflag, f.hdr.Mode, f.hdr.Uid, f.hdr.Gid,
			f.hdr.PAXRecords["SCHILY.xattr.security.capability"], string(f.data)})
		if !f.hdr.ModTime.Equal(packEpoch) {
			t.Errorf("%s: mtime %v", f.hdr.Name, f.hdr.ModTime)
		}
	}
	want := []entry{
		{"etc/", tar.TypeDir, 0o755, 0, 0, "", ""},
		{"etc/passwd", tar.TypeReg, 0o644, 0, 0, "", "nonroot:x:65532:65532::/home/nonroot:/sbin/nologin\n"},
		{"home/", tar.TypeDir, 0o755, 0, 0, "", ""},
		{"home/nonroot/", tar.TypeDir, 0o700, 65532, 65532, "", ""},
		{"tmp/", tar.TypeDir, 0o1777, 0, 0, "", ""},
		{"usr/", tar.TypeDir, 0o755, 0, 0, "", ""},
		{"usr/bin/", tar.TypeDir, 0o755, 0, 0, "", ""},
		{"usr/bin/tool", tar.TypeReg, 0o755, 0, 0, "\x01\x00\x00\x02", "#!binary"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("layer (-want +got):\n%s", diff)
	}

	again := spec
	again.Out = filepath.Join(dir, "again.tar")
	if d2, err := pack(again); err != nil || d2 != digest {
		t.Errorf("a second pack of the same inputs gave %v, %v; want %s", d2, err, digest)
	}
}

// TestPackRefuses: what pack cannot lay out is refused before anything is
// written.
func TestPackRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		spec packSpec
		want string
	}{
		"no tag":          {packSpec{Name: "registry.example:5000/tool"}, "want repository:tag"},
		"relative path":   {packSpec{Name: "t:1", Files: []packFile{{Path: "usr/bin/t", Content: "x"}}}, "want an absolute, clean path"},
		"unclean path":    {packSpec{Name: "t:1", Files: []packFile{{Path: "/usr/../t", Content: "x"}}}, "want an absolute, clean path"},
		"twice":           {packSpec{Name: "t:1", Files: []packFile{{Path: "/t", Content: "x"}, {Path: "/t", Content: "y"}}}, "listed twice"},
		"no bytes":        {packSpec{Name: "t:1", Files: []packFile{{Path: "/t"}}}, "exactly one of source and content"},
		"source and text": {packSpec{Name: "t:1", Files: []packFile{{Path: "/t", Source: "/x", Content: "y"}}}, "exactly one of source and content"},
	} {
		t.Run(name, func(t *testing.T) {
			tc.spec.Out = filepath.Join(t.TempDir(), "out.tar")
			tc.spec.Architecture = "amd64"
			_, err := pack(tc.spec)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
			if _, err := os.Stat(tc.spec.Out); err == nil {
				t.Errorf("%s written", tc.spec.Out)
			}
		})
	}
}

// TestPackCommand runs pack as the e2e suite does, from a JSON spec file,
// and refuses a spec with a field pack does not know.
func TestPackCommand(t *testing.T) {
	dir := t.TempDir()
	specs := []packSpec{{Out: filepath.Join(dir, "a.tar"), Name: "a.example/a:1", Architecture: "amd64",
		Files: []packFile{{Path: "/a", Content: "a", Mode: 0o755}}}}
	raw, err := json.Marshal(specs)
	if err != nil {
		t.Fatal(err)
	}
	specFile := filepath.Join(dir, "spec.json")
	if err := os.WriteFile(specFile, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := run(t.Context(), []string{"pack", "-spec", specFile}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "a.example/a:1 sha256:") {
		t.Errorf("pack printed %q", out.String())
	}
	if err := os.WriteFile(specFile, []byte(`[{"name":"a.example/a:1","entrypoint":["/a"]}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	err = run(t.Context(), []string{"pack", "-spec", specFile}, io.Discard, io.Discard)
	if want := `unknown field "entrypoint"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("want an error containing %q, got %v", want, err)
	}
}
