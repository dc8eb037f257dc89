package dropbarrier_test

import (
	"testing"

	"metalab/mutate/dropbarrier"
	"metalab/mutate/mutatetest"
)

func TestGolden(t *testing.T) {
	mutatetest.Run(t, "testdata", dropbarrier.Mutation)
}
