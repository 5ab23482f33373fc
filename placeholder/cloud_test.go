package placeholder

import "testing"

func TestCloudPlaceholders(t *testing.T) {
	for _, c := range []struct {
		name, value string
		ok          bool
	}{
		{GCPRegion, "us-east5", true},
		{GCPRegion, "europe-west1", true},
		{GCPRegion, "asia-southeast1", true},
		{GCPRegion, "northamerica-northeast2", true},
		{GCPRegion, "me-central2", true},
		{GCPRegion, "global", true},
		{GCPRegion, "us-east5-a", false}, // a zone, not a region
		{GCPRegion, "US-EAST5", false},
		{GCPRegion, "us-east5.evil.com", false},
		{GCPRegion, "*", false},
		{GCPRegion, "", false},
		{GCPProject, "acme-ci", true},
		{GCPProject, "my-project-123", true},
		{GCPProject, "abc", false},
		{GCPProject, "1project", false},
		{GCPProject, "project-", false},
		{GCPProject, "*", false},
		{GCPProject, "a/b", false},
		{AWSRegion, "us-east-1", true},
		{AWSRegion, "eu-central-1", true},
		{AWSRegion, "us-gov-west-1", true},
		{AWSRegion, "us-east-1.evil", false},
		{AWSRegion, "global", false},
	} {
		err := Validate(c.name, c.value)
		if (err == nil) != c.ok {
			t.Errorf("Validate(%s, %q) = %v, want ok=%v", c.name, c.value, err, c.ok)
		}
	}
	if !Allowed(GCPRegion, FieldHostLabel) || Allowed(GCPProject, FieldHostLabel) || Allowed(Owner, FieldHostLabel) {
		t.Error("host-label placement")
	}
}
