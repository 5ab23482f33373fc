package decide

import "github.com/fullsend-ai/agent-sandbox/openshell"

// EffectiveRules returns the allow rules OpenShell evaluates for ep: its
// rules, or its access preset expanded (effectiveRules, l7/mod.rs:1629
// expand_access_presets @ v0.0.111). Package containment compares two
// policies' endpoints with it.
func EffectiveRules(ep *openshell.Endpoint) []openshell.Match { return effectiveRules(ep) }
