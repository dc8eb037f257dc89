package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"metalab/internal/cli/cmdutil"
)

// noRevision says why a build has no revision and how to get one.
const noRevision = "this binary carries no VCS stamp (built with -buildvcs=false, " +
	"from a source tarball, from the module cache or outside a git clone); to record the commit, build inside the clone: " +
	"go build -buildvcs=true -o metalab ./cmd/metalab"

// A buildInfo is what a metalab binary knows of how it was built, from
// debug.ReadBuildInfo: what `metalab version` prints.
type buildInfo struct {
	Version       string `json:"version"`        // as Version returns it
	Module        string `json:"module"`         // the main module's path
	ModuleVersion string `json:"module_version"` // "(devel)" unless built from a module version
	Package       string `json:"package"`        // the main package's path
	Go            string `json:"go"`
	OS            string `json:"os"`
	Arch          string `json:"arch"`
	CGO           string `json:"cgo_enabled,omitempty"` // "1" or "0", as the build recorded it
	// RevisionKnown says whether the build recorded a VCS revision; when
	// it did not, Revision is "unknown" and Note says why and how to get
	// one.
	RevisionKnown bool   `json:"revision_known"`
	Revision      string `json:"revision"`
	Note          string `json:"note,omitempty"`
	VCS           string `json:"vcs,omitempty"`      // "git"
	Time          string `json:"vcs_time,omitempty"` // the revision's commit time
	// Modified is whether the tree had uncommitted changes; absent when
	// the revision is unknown.
	Modified *bool `json:"modified,omitempty"`
	// Build holds the other build settings recorded (-tags, -trimpath,
	// GOAMD64, ...).
	Build map[string]string `json:"build,omitempty"`
}

// readBuildInfo returns the build information of this binary.
func readBuildInfo() buildInfo {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = nil
	}
	return newBuildInfo(info)
}

// newBuildInfo turns debug.BuildInfo into a buildInfo; info may be nil (a
// binary without build information).
func newBuildInfo(info *debug.BuildInfo) buildInfo {
	b := buildInfo{Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, Revision: "unknown", Note: noRevision}
	if info == nil {
		b.Version, b.ModuleVersion = versionOf(nil), "unknown"
		return b
	}
	b.Version = versionOf(info)
	b.Module, b.ModuleVersion, b.Package = info.Main.Path, info.Main.Version, info.Path
	if b.ModuleVersion == "" {
		b.ModuleVersion = "(devel)"
	}
	if info.GoVersion != "" {
		b.Go = info.GoVersion
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "GOOS":
			b.OS = s.Value
		case "GOARCH":
			b.Arch = s.Value
		case "CGO_ENABLED":
			b.CGO = s.Value
		case "vcs":
			b.VCS = s.Value
		case "vcs.revision":
			b.Revision, b.RevisionKnown = s.Value, s.Value != ""
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			m := s.Value == "true"
			b.Modified = &m
		default:
			if strings.HasPrefix(s.Key, "CGO_") && s.Value == "" {
				continue // CGO_CFLAGS= and the like say nothing
			}
			if b.Build == nil {
				b.Build = map[string]string{}
			}
			b.Build[s.Key] = s.Value
		}
	}
	if !b.RevisionKnown {
		b.Revision, b.Note, b.Modified, b.Time = "unknown", noRevision, nil, ""
	} else {
		b.Note = ""
	}
	return b
}

// Version returns metalab's version from the build information: the
// module version when built from a module version, else the VCS revision
// (with "+dirty" for a modified tree) and its time, else "(devel,
// revision unknown)".
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = nil
	}
	return versionOf(info)
}

func versionOf(info *debug.BuildInfo) string {
	if info == nil {
		return "unknown (no build information)"
	}
	v := info.Main.Version
	var rev, when, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if v != "" && v != "(devel)" {
		return v
	}
	if rev == "" {
		return "(devel, revision unknown)"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v = rev + dirty
	if when != "" {
		v += " (" + when + ")"
	}
	return v
}

// text writes b for people, one fact a line.
func (b buildInfo) text() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "metalab %s (%s, %s/%s)\n", b.Version, b.Go, b.OS, b.Arch)
	mod := b.Module
	if mod == "" {
		mod = "unknown"
	}
	fmt.Fprintf(&sb, "module:   %s %s", mod, b.ModuleVersion)
	if b.Package != "" {
		fmt.Fprintf(&sb, " (package %s)", b.Package)
	}
	sb.WriteString("\n")
	fmt.Fprintf(&sb, "go:       %s %s/%s", b.Go, b.OS, b.Arch)
	if b.CGO != "" {
		fmt.Fprintf(&sb, ", CGO_ENABLED=%s", b.CGO)
	}
	sb.WriteString("\n")
	if b.RevisionKnown {
		fmt.Fprintf(&sb, "revision: %s", b.Revision)
		var extra []string
		if b.VCS != "" {
			extra = append(extra, b.VCS)
		}
		if b.Time != "" {
			extra = append(extra, b.Time)
		}
		if b.Modified != nil {
			if *b.Modified {
				extra = append(extra, "modified: built from a tree with uncommitted changes")
			} else {
				extra = append(extra, "unmodified")
			}
		}
		if len(extra) > 0 {
			fmt.Fprintf(&sb, " (%s)", strings.Join(extra, ", "))
		}
		sb.WriteString("\n")
	} else {
		fmt.Fprintf(&sb, "revision: %s: %s\n", b.Revision, b.Note)
	}
	return sb.String()
}

func newCmdVersion(f *cmdutil.Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print metalab's version and how it was built",
		Long: `Print metalab's version and what the binary recorded of its build: the
module and its version, the Go version, GOOS/GOARCH, CGO_ENABLED, and the
VCS revision and whether the tree was modified. A binary built without VCS
stamping (-buildvcs=false, a source tarball, outside a git clone) says that
its revision is unknown.`,
		Args: cmdutil.ExactArgs(0, ""),
		RunE: func(cmd *cobra.Command, args []string) error {
			b := readBuildInfo()
			if asJSON {
				return cmdutil.WriteJSON(f.IOStreams.Out, b)
			}
			_, err := fmt.Fprint(f.IOStreams.Out, b.text())
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "write JSON")
	return cmd
}
