package cuda

import (
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"metalab/backend"
)

// racecheckArgs are compute-sanitizer's arguments before the runner's
// command line: the racecheck tool and its report written to log, never to
// stdout, which is the runner's reply channel. (The runner's own exit
// status comes through: it tells a crash from a bad access.)
func racecheckArgs(log string) []string {
	return []string{"--tool", "racecheck", "--log-file", log}
}

// A raceLog is the file compute-sanitizer writes its report to, for one
// runner process.
type raceLog struct {
	path string
}

func newRaceLog(root string) (*raceLog, error) {
	f, err := os.CreateTemp(root, ".tmp-racecheck-*.log")
	if err != nil {
		return nil, err
	}
	f.Close()
	return &raceLog{path: f.Name()}, nil
}

func (l *raceLog) size() int64 {
	info, err := os.Stat(l.path)
	if err != nil {
		return 0
	}
	return info.Size()
}

// since returns what the report gained after offset mark. With settle it
// first waits, up to two seconds, for the file to stop growing:
// compute-sanitizer's front end writes a kernel's report as the runner
// goes on.
func (l *raceLog) since(mark int64, settle bool) string {
	if settle {
		last, still := l.size(), 0
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline) && still < 4; {
			time.Sleep(50 * time.Millisecond)
			if n := l.size(); n != last {
				last, still = n, 0
			} else {
				still++
			}
		}
	}
	f, err := os.Open(l.path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, err := f.Seek(mark, io.SeekStart); err != nil {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(f, 4<<20))
	return string(b)
}

func (l *raceLog) close() { os.Remove(l.path) }

var (
	// raceLine is the first line of one of racecheck's analysis reports:
	// "Error: Race reported between Write access at 0x150 in k.cu:13:f(void)"
	// (CUDA 11 spells the severity ERROR and WARNING; CUDA 13 names the
	// place as function+offset and the source as file:line: "at
	// void f(void *const *)+0x1c0 in race.metal:15").
	raceLine = regexp.MustCompile(`(?i)\b(error|warning): race reported between (read|write) access at (.+?) in (.*?)\s*$`)
	// raceAnd is its second line: "and Read access at 0x170 in k.cu:14:f(void) [4 hazards]".
	raceAnd = regexp.MustCompile(`(?i)^\W*and (read|write) access at (.+?) in (.*?)(?:\s*\[(\d+) hazards?\])?\s*$`)
	// where splits "file:line" or "file:line:function" (the function may
	// hold colons).
	where = regexp.MustCompile(`^(.*?):(\d+)(?::(.*))?$`)
)

// parseRacecheck turns racecheck's analysis reports in log into findings:
// shared-memory races, in threadgroup memory. A report's threads are not
// known (racecheck's analysis report names accesses, not threads); its
// hazard count is the finding's Count. Warnings (hazards racecheck judges
// possibly benign) keep that in their Note. Line numbers are those of the
// TU's #line directives, the .metal source's when the translator emits
// them.
func parseRacecheck(log, source string) []backend.Finding {
	lines := strings.Split(log, "\n")
	var out []backend.Finding
	for i := 0; i < len(lines); i++ {
		m := raceLine.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		f := backend.Finding{Kind: backend.FindRace, Space: "threadgroup", Buffer: -1, Count: 1,
			Access: raceAccess(m[2], m[4], source)}
		if strings.EqualFold(m[1], "warning") {
			f.Note = "compute-sanitizer racecheck warning (a hazard it judges possibly benign)"
		} else {
			f.Note = "compute-sanitizer racecheck"
		}
		if i+1 < len(lines) {
			if a := raceAnd.FindStringSubmatch(lines[i+1]); a != nil {
				o := raceAccess(a[1], a[3], source)
				f.Other = &o
				if n, err := strconv.Atoi(a[4]); err == nil && n > 0 {
					f.Count = n
				}
				i++
			}
		}
		out = append(out, f)
	}
	return out
}

// raceAccess makes an Access of a report's kind and location. A file
// named after the source by a relative #line comes back joined to the
// compile directory; it is given the source's name again.
func raceAccess(kind, loc, source string) backend.Access {
	a := backend.Access{Write: strings.EqualFold(kind, "write"), Thread: -1, SIMDGroup: -1, Lane: -1}
	if m := where.FindStringSubmatch(loc); m != nil {
		a.File = m[1]
		a.Line, _ = strconv.Atoi(m[2])
		if source != "" && strings.HasSuffix(a.File, "/"+source) {
			a.File = source
		}
	}
	return a
}
