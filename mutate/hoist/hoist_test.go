package hoist_test

import (
	"testing"

	"metalab/mutate/hoist"
	"metalab/mutate/mutatetest"
)

func TestGolden(t *testing.T) {
	mutatetest.Run(t, "testdata", hoist.Mutation)
}
