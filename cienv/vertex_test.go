package cienv

import "testing"

func TestVertexProjectAndRegion(t *testing.T) {
	for _, c := range []struct {
		env             map[string]string
		project, region string
		projFrom        string
	}{
		{map[string]string{"ANTHROPIC_VERTEX_PROJECT_ID": "acme-ci", "GOOGLE_CLOUD_PROJECT": "other", "CLOUD_ML_REGION": "us-east5"}, "acme-ci", "us-east5", AnthropicVertexProject},
		{map[string]string{"GOOGLE_CLOUD_PROJECT": "other"}, "other", "", GoogleCloudProject},
		{map[string]string{}, "", "", AnthropicVertexProject},
	} {
		e := Detect(func(k string) string { return c.env[k] })
		if p := e.VertexProject(); p.Value != c.project || p.From != c.projFrom {
			t.Errorf("VertexProject() = %+v, want %s from %s", p, c.project, c.projFrom)
		}
		if r := e.VertexRegion(); r.Value != c.region {
			t.Errorf("VertexRegion() = %+v, want %s", r, c.region)
		}
	}
}
