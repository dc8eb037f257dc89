package crossbarrier_test

import (
	"testing"

	"metalab/mutate/crossbarrier"
	"metalab/mutate/mutatetest"
)

func TestGolden(t *testing.T) {
	mutatetest.Run(t, "testdata", crossbarrier.Mutation)
}
