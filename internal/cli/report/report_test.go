package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"metalab/internal/cli/cmdutil"
)

// TestReportNotASweep refuses a directory that holds no sweep.
func TestReportNotASweep(t *testing.T) {
	ios, _, _, _ := cmdutil.Test()
	cmd := NewCmdReport(&cmdutil.Factory{IOStreams: ios, ReadFile: os.ReadFile}, nil)
	dir := t.TempDir()
	cmd.SetArgs([]string{dir})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "results.db") {
		t.Errorf("report of an empty directory: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("report wrote into a directory that holds no sweep: %v", ents)
	}
	_ = filepath.Join
}
