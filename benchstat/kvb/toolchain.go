package main

import "os"

// goTool is the go command the steps run: $GO (make's GO, which the
// Makefile exports), else go from PATH.
func goTool() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}
