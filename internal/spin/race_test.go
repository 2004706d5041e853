//go:build race

package spin

// The race detector's runtime does not run under Valgrind.
func init() { raceBuild = true }
