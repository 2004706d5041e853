//go:build race

package valgrind

// The race detector's runtime does not run under Valgrind.
func init() { raceBuild = true }
