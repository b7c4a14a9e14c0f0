package manifest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// fuchsiaSized returns about 500 distinct rules shaped like Fuchsia's
// manifests: the defaults plus fx/ffx/git/tool variants.
func fuchsiaSized(tb testing.TB) []Line {
	tree, err := Load("")
	if err != nil {
		tb.Fatal(err)
	}
	lines := append([]Line{}, tree.Lines...)
	for i := 0; len(lines) < 500; i++ {
		var text string
		switch i % 5 {
		case 0:
			text = fmt.Sprintf("fx tool%d --flag", i)
		case 1:
			text = fmt.Sprintf("ffx component%d show", i)
		case 2:
			text = fmt.Sprintf("git sub%d --opt%d", i, i)
		case 3:
			text = fmt.Sprintf("tool%d list", i)
		case 4:
			text = fmt.Sprintf("jiri cmd%d", i)
		}
		lines = append(lines, Line{Text: text, Category: Categories[i%len(Categories)]})
	}
	return lines
}

func BenchmarkGrants500(b *testing.B) {
	lines := fuchsiaSized(b)
	b.ReportAllocs()
	size := 0
	for b.Loop() {
		size = 0
		for _, l := range lines {
			g, err := Grants(l.Text)
			if err != nil {
				b.Fatal(err)
			}
			for _, s := range g {
				size += len(s)
			}
		}
	}
	b.ReportMetric(float64(size), "grant-bytes")
}

// writeFuchsiaTree writes the ~500 rules as seven manifests split over the
// root and two vendor repositories.
func writeFuchsiaTree(b *testing.B) string {
	root := b.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".jiri_root"), 0o755); err != nil {
		b.Fatal(err)
	}
	files := map[string][]byte{}
	for i, l := range fuchsiaSized(b) {
		ov := []string{".", "vendor/a", "vendor/b"}[i%3]
		p := filepath.Join(root, ov, ".agents/config/permissions", l.Category+".txt")
		files[p] = append(files[p], l.Text+"\n"...)
	}
	for _, v := range []string{"vendor/a", "vendor/b"} {
		if _, err := initRepoB(filepath.Join(root, v)); err != nil {
			b.Fatal(err)
		}
	}
	for p, data := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return root
}

func BenchmarkLoad(b *testing.B) {
	root := writeFuchsiaTree(b)
	b.ReportAllocs()
	for b.Loop() {
		t, err := Load(root)
		if err != nil || len(t.Lines) != 500 {
			b.Fatal(err, len(t.Lines))
		}
	}
}

// BenchmarkLoadAndGrants is what a full apply spends in this package.
func BenchmarkLoadAndGrants(b *testing.B) {
	root := writeFuchsiaTree(b)
	b.ReportAllocs()
	for b.Loop() {
		t, err := Load(root)
		if err != nil {
			b.Fatal(err)
		}
		for _, l := range t.Lines {
			if _, err := Grants(l.Text); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkFingerprint(b *testing.B) {
	root := writeFuchsiaTree(b)
	sub := filepath.Join(root, "vendor/a/src")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		r, err := FindRoot(sub)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Fingerprint(r); err != nil {
			b.Fatal(err)
		}
	}
}
