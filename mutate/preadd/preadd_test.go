package preadd_test

import (
	"testing"

	"metalab/mutate/mutatetest"
	"metalab/mutate/preadd"
)

func TestGolden(t *testing.T) {
	mutatetest.Run(t, "testdata", preadd.Mutation)
}
