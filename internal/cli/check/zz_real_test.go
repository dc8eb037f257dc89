package check

import (
	"context"
	"os"
	"strings"
	"testing"

	"metalab/internal/cli/cmdutil"
)

func TestZZReal(t *testing.T) {
	ios, _, out, _ := cmdutil.Test()
	err := checkRun(context.Background(), &CheckOptions{IO: ios, ReadFile: os.ReadFile, Spec: os.Getenv("ZZSPEC"),
		Variants: strings.Fields(os.Getenv("ZZVAR")), Backend: "cpu", Cases: []string{os.Getenv("ZZSET")}, TGLimit: 16384, Race: os.Getenv("ZZRACE") != ""})
	t.Log(out.String())
	t.Log(err)
}
