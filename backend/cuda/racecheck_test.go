package cuda

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/racecheck/*.txtar")

// TestParseRacecheck reads each testdata/racecheck archive's log and wants
// the findings its want section holds; -update rewrites them.
func TestParseRacecheck(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "racecheck", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no archives: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			a, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sec := map[string][]byte{}
			for _, f := range a.Files {
				sec[f.Name] = f.Data
			}
			findings := parseRacecheck(string(sec["log"]), strings.TrimSpace(string(sec["source"])))
			var got bytes.Buffer
			for _, f := range findings {
				b, err := json.Marshal(f)
				if err != nil {
					t.Fatal(err)
				}
				got.Write(b)
				got.WriteByte('\n')
			}
			if *update {
				for i := range a.Files {
					if a.Files[i].Name == "want" {
						a.Files[i].Data = got.Bytes()
					}
				}
				if err := os.WriteFile(file, txtar.Format(a), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got.String() != string(sec["want"]) {
				t.Errorf("findings:\n%s\nwant:\n%s", got.String(), sec["want"])
			}
		})
	}
}

func TestRacecheckArgs(t *testing.T) {
	args := strings.Join(racecheckArgs("/c/log"), " ")
	for _, want := range []string{"--tool racecheck", "--log-file /c/log"} {
		if !strings.Contains(args, want) {
			t.Errorf("racecheck arguments %q lack %q", args, want)
		}
	}
}
