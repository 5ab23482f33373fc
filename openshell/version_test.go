package openshell

import (
	"errors"
	"testing"
)

func TestNormalizeVersion(t *testing.T) {
	tests := []struct {
		in, want string
		err      bool
	}{
		{"", DefaultOpenShellVersion, false},
		{"v0.0.111", "v0.0.111", false},
		{"0.0.83", "v0.0.83", false},
		{"v0.0.22", "v0.0.22", false},
		{"v0.0.21", "", true},
		{"v0.0.112", "", true},
		{"v0.1.0", "", true},
		{"v0.0.100-rc1", "", true},
		{"v0.0.100+build", "", true},
		{"latest", "", true},
		{"v0.0", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := NormalizeVersion(tc.in)
			if tc.err {
				if !errors.Is(err, ErrUnsupportedVersion) {
					t.Fatalf("NormalizeVersion(%q) = %q, %v; want ErrUnsupportedVersion", tc.in, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("NormalizeVersion(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
	for _, v := range SupportedVersions() {
		if _, err := NormalizeVersion(v); err != nil {
			t.Errorf("supported version %s: %v", v, err)
		}
	}
}

func TestSupports(t *testing.T) {
	tests := []struct {
		f       Feature
		version string
		want    bool
	}{
		{FeatureProtocolTCP, "v0.0.111", true},
		{FeatureProtocolTCP, "v0.0.110", false},
		{FeatureProtocolTCP, "0.0.111", true},
		{FeatureCreateCommandMain, "v0.0.111", true},
		{FeatureCreateCommandMain, "v0.0.83", false},
		{FeatureDenyRules, "v0.0.30", true},
		{FeatureDenyRules, "v0.0.29", false},
		{FeaturePrivateExactHost, "v0.0.53", true},
		{FeaturePrivateExactHost, "v0.0.52", false},
		{FeatureNetworkMiddlewares, "v0.0.86", true},
		{FeatureSandboxNameRules, "v0.0.88", true},
		{FeatureGatewayL7Validation, "v0.0.91", false},
		{FeatureQuarantine, "v0.0.97", true},
		{FeatureAmbiguityCheck, "v0.0.96", false},
		{FeatureCredentialBinding, "v0.0.103", true},
		{FeatureUninspectedCreds, "v0.0.109", false},
		{FeatureHostWildcards, "v0.0.7", true},
		{FeatureUnknownProtocolReject, "v0.0.36", false},
		{Feature("no-such-feature"), "v0.0.111", false},
		{FeatureProtocolTCP, "garbage", false},
	}
	for _, tc := range tests {
		if got := Supports(tc.f, tc.version); got != tc.want {
			t.Errorf("Supports(%s, %s) = %v, want %v", tc.f, tc.version, got, tc.want)
		}
	}
	for _, f := range Features() {
		since, ok := Since(f)
		if !ok || !Supports(f, since) || CompareVersions(since, "v0.0.1") < 0 {
			t.Errorf("feature %s: since %q", f, since)
		}
	}
	if CompareVersions("0.0.83", "v0.0.111") >= 0 || CompareVersions("v0.0.111", "0.0.111") != 0 {
		t.Error("CompareVersions orders numerically with an optional v")
	}
}
