// Command metalab makes Metal compute kernels faster without breaking them.
// See docs/HACKING.md for the vocabulary and pipeline.
package main

import (
	"os"

	"metalab/internal/cli"
)

func main() {
	os.Exit(int(cli.Main()))
}
