//go:build !amd64

package spin

var sink int

// Countdown is a plain loop where no assembly one exists: its instructions
// per step are then the compiler's, about InstrPerStep.
func Countdown(n int) {
	for i := 0; i < n; i++ {
		sink += i
	}
}

// InstrPerStep is Countdown's instructions per step on most targets.
const InstrPerStep = 4
