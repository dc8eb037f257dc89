package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"metalab/internal/cli/cmdutil"
)

// Version returns metalab's version from the build information: the
// module version when installed with go install, else the VCS revision
// (with "+dirty" for a modified tree) and its time.
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
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
	if (v == "" || v == "(devel)") && rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v = rev + dirty
		if when != "" {
			v += " (" + when + ")"
		}
	}
	if v == "" {
		v = "(devel)"
	}
	return v
}

func newCmdVersion(f *cmdutil.Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print metalab's version",
		Args:  cmdutil.ExactArgs(0, ""),
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON {
				return cmdutil.WriteJSON(f.IOStreams.Out, map[string]string{"version": Version(), "go": runtime.Version(), "os": runtime.GOOS, "arch": runtime.GOARCH})
			}
			_, err := fmt.Fprintf(f.IOStreams.Out, "metalab %s (%s, %s/%s)\n", Version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "write JSON")
	return cmd
}
