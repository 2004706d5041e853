//go:build !race

package gate

const raceBuild = false
