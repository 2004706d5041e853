package gate

// Report is gate.json: the sides compared and each mode's verdict, for
// programs that act on the gate's decision (gate.md is for people).
type Report struct {
	Base   string        `json:"base"`
	Head   string        `json:"head"`
	Module string        `json:"module,omitempty"`
	Modes  []ModeVerdict `json:"modes"`
	// Sides says what each side is, by role (base, head), as the history
	// store labels a run: ref, commit, commit-date, date, and with -module
	// module and kvbench-commit (docs/history.md).
	Sides map[string]map[string]string `json:"sides,omitempty"`
}

// ModeVerdict is the gate's decision on one mode's rounds.
type ModeVerdict struct {
	Mode     string    `json:"mode"`
	Failed   bool      `json:"failed"`
	Failures []Failure `json:"failures"`
}

// Failure is a series that failed the gate.
type Failure struct {
	Name    string `json:"name"`
	Unit    string `json:"unit"`
	Verdict string `json:"verdict"` // REGRESSION or MISSING
}

// Failures lists the rows that failed the gate, in the rows' order.
func Failures(rows []Row) []Failure {
	var out []Failure
	for _, r := range rows {
		if r.failed() {
			out = append(out, Failure{Name: r.Name, Unit: r.Unit, Verdict: r.Verdict.String()})
		}
	}
	return out
}
