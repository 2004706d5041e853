//go:build race

package gate

// raceBuild: the simulations of whole comparisons take a minute under the
// race detector; make unit runs them in a build without it.
const raceBuild = true
