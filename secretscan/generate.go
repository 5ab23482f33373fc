package secretscan

// rules_gitleaks.go comes from gitleaks' default configuration, at the
// version internal/gengitleaks/go.mod pins (a separate module, so gitleaks
// never enters this one). The Rego copy for lint rule FS018 follows from it:
// run `go generate ./lint` afterwards.
//go:generate go run -C internal/gengitleaks . -o ../../rules_gitleaks.go
