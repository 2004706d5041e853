package engine

import "testing"

// TestModuleLabelNamesAReplacedModule: a binary built with a module
// replaced names the replacement's label, so its fixtures are its own.
func TestModuleLabelNamesAReplacedModule(t *testing.T) {
	defer func(l string) { ModuleLabel = l }(ModuleLabel)
	before := ModuleVersion(boltModule, nil)
	ModuleLabel = boltModule + "=local-0123456789ab"
	if got, want := ModuleVersion(boltModule, nil), boltModule+" local-0123456789ab"; got != want {
		t.Errorf("bbolt replaced: %q, want %q", got, want)
	}
	if got := ModuleVersion(pebbleModule, nil); got == pebbleModule+" local-0123456789ab" {
		t.Errorf("another module took bbolt's label: %q", got)
	}
	ModuleLabel = ""
	if got := ModuleVersion(boltModule, nil); got != before {
		t.Errorf("no label: %q, want %q", got, before)
	}
}
