package elidebarrier_test

import (
	"testing"

	"metalab/mutate/elidebarrier"
	"metalab/mutate/mutatetest"
)

func TestGolden(t *testing.T) {
	mutatetest.Run(t, "testdata", elidebarrier.Mutation)
}
