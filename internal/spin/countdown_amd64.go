package spin

// Countdown executes exactly InstrPerStep instructions per step (plus 4).
//
//go:noescape
func Countdown(n int)

// InstrPerStep is Countdown's instructions per step.
const InstrPerStep = 2
