package mergebarriers_test

import (
	"testing"

	"metalab/mutate/mergebarriers"
	"metalab/mutate/mutatetest"
)

func TestGolden(t *testing.T) {
	mutatetest.Run(t, "testdata", mergebarriers.Mutation)
}
