package secondline

// neverAllow is the built-in never-allow list (gate.NeverAllow()), set by
// never_test.go: gate imports package agents, which imports this package,
// so only an external test package may import gate.
var neverAllow []string

// SetNeverAllow sets neverAllow, for never_test.go.
func SetNeverAllow(l []string) { neverAllow = l }
