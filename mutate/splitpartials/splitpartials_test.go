package splitpartials_test

import (
	"testing"

	"metalab/mutate/mutatetest"
	"metalab/mutate/splitpartials"
)

func TestGolden(t *testing.T) {
	mutatetest.Run(t, "testdata", splitpartials.Mutation)
}
