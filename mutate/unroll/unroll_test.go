package unroll_test

import (
	"testing"

	"metalab/mutate/mutatetest"
	"metalab/mutate/unroll"
)

func TestGolden(t *testing.T) {
	mutatetest.Run(t, "testdata", unroll.Mutation)
}
