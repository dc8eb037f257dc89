package search

import (
	"fmt"
	"strings"

	"metalab/check"
	"metalab/mutate"
	"metalab/mutate/all"
)

// unproven are the operators that do not claim to keep outputs bitwise
// identical (docs/CATALOGUE.md): whether their variants keep what the
// baseline computes is for the checks to find out. Every other operator
// proves its sites before offering them, so a variant made of nothing
// else that fails its checks is a proof violated: metalab's bug.
var unproven = map[string]bool{"drop-barrier": true}

// testOps are operators tests add to the ones mutate/all lists; none
// ships.
var testOps []*mutate.Mutation

// lookupOp returns the operator called name, or nil.
func lookupOp(name string) *mutate.Mutation {
	if m := all.Lookup(name); m != nil {
		return m
	}
	for _, m := range testOps {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// ClaimsProof reports whether operator name claims to keep outputs
// bitwise identical.
func ClaimsProof(name string) bool { return !unproven[name] }

// ProofClaimed reports whether a variant of refs (ID=CHOICE, as the store
// records them) is made only of operators that claim to keep outputs.
// The baseline (no refs) claims nothing.
func ProofClaimed(refs []string) bool {
	for _, r := range refs {
		ref, err := mutate.ParseSiteRef(r)
		if err != nil || !ClaimsProof(ref.Mutation) {
			return false
		}
	}
	return len(refs) > 0
}

// ProofViolation reports whether a failure of status breaks the claim
// that outputs are kept: any failure of the build, the verification or
// the confirmation but those that say nothing about the outputs (the
// threadgroup memory limit, a timeout, a machine that cannot run it, the
// emulator's lockstep, which a proof does not speak of).
func ProofViolation(status string) bool {
	switch check.Status(status) {
	case check.Pass, check.FailTGMem, check.Timeout, check.Unavailable, check.NotJudged, check.FailLockstep, check.NotVerified, check.NotRun:
		return false
	}
	return status != ""
}

// proofMessage says that a variant of proven operators failed, and that
// it is metalab's bug.
func proofMessage(refs []string, vd verdict) string {
	var ops []string
	for _, r := range refs {
		if ref, err := mutate.ParseSiteRef(r); err == nil && !contains(ops, ref.Mutation) {
			ops = append(ops, ref.Mutation)
		}
	}
	return fmt.Sprintf("proof violated: every operator of this variant (%s) claims to keep outputs bitwise identical, and it failed its %s (%s: %s). "+
		"This is a bug in metalab, not in the kernel: please report it with this log and the variant's source",
		strings.Join(ops, ", "), vd.stopped, vd.status, vd.msg)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
