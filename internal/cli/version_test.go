package cli

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestBuildInfoWithoutVCS(t *testing.T) {
	// What go build -buildvcs=false (or a tarball, or the module cache)
	// records: no vcs.* settings.
	info := &debug.BuildInfo{GoVersion: "go1.99", Path: "metalab/cmd/metalab",
		Main: debug.Module{Path: "metalab", Version: "(devel)"},
		Settings: []debug.BuildSetting{
			{Key: "-buildmode", Value: "exe"}, {Key: "CGO_ENABLED", Value: "0"}, {Key: "CGO_CFLAGS", Value: ""},
			{Key: "GOARCH", Value: "arm64"}, {Key: "GOOS", Value: "darwin"},
		}}
	b := newBuildInfo(info)
	if b.RevisionKnown || b.Revision != "unknown" || b.Note == "" || b.Modified != nil {
		t.Errorf("revision: known %v %q note %q modified %v", b.RevisionKnown, b.Revision, b.Note, b.Modified)
	}
	if b.Version != "(devel, revision unknown)" || b.Go != "go1.99" || b.OS != "darwin" || b.Arch != "arm64" || b.CGO != "0" || b.Module != "metalab" {
		t.Errorf("got %+v", b)
	}
	if _, ok := b.Build["CGO_CFLAGS"]; ok || b.Build["-buildmode"] != "exe" {
		t.Errorf("build settings %v", b.Build)
	}
	text := b.text()
	for _, want := range []string{
		"metalab (devel, revision unknown) (go1.99, darwin/arm64)\n",
		"module:   metalab (devel) (package metalab/cmd/metalab)\n",
		"CGO_ENABLED=0\n",
		"revision: unknown: this binary carries no VCS stamp (built with -buildvcs=false",
		"go build -buildvcs=true -o metalab ./cmd/metalab",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
}

func TestBuildInfoWithVCS(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.99", Path: "metalab/cmd/metalab",
		Main: debug.Module{Path: "metalab", Version: "(devel)"},
		Settings: []debug.BuildSetting{
			{Key: "CGO_ENABLED", Value: "1"}, {Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"},
		}}
	b := newBuildInfo(info)
	if !b.RevisionKnown || b.Revision != "0123456789abcdef0123456789abcdef01234567" || b.Note != "" || b.Modified == nil || !*b.Modified {
		t.Errorf("got %+v", b)
	}
	if b.Version != "0123456789ab+dirty (2026-01-02T03:04:05Z)" {
		t.Errorf("version %q", b.Version)
	}
	if want := "revision: 0123456789abcdef0123456789abcdef01234567 (git, 2026-01-02T03:04:05Z, modified: built from a tree with uncommitted changes)\n"; !strings.Contains(b.text(), want) {
		t.Errorf("text lacks %q:\n%s", want, b.text())
	}
	// A module version (go install metalab/cmd/metalab@v1.2.3, were the
	// module path fetchable) wins over the revision.
	info.Main.Version = "v1.2.3"
	if v := newBuildInfo(info).Version; v != "v1.2.3" {
		t.Errorf("version %q", v)
	}
	if b := newBuildInfo(nil); b.RevisionKnown || b.Version != "unknown (no build information)" {
		t.Errorf("nil info: %+v", b)
	}
}
